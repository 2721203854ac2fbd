/**
 * A sale that replaces earlier sales of its location (`FiscalSystem.replaces`; Spain: a full
 * invoice, F3, issued in place of simplified ones). Before the sale joins its chain the
 * named transactions are read and checked here, and the system stores what its record names
 * of each. That each is replaced once is checked later, under the append's lock
 * (transaction-entry.ts, chain_documents role `replaced`): two replacements of one ticket
 * at once cannot both pass.
 */
import { badRequest, notFound } from '../core/errors.ts';
import type { TransactionDraft } from '../core/transaction.ts';
import type { FiscalSystem, LocationForFiscal, ReplacedSale } from '../countries/types.ts';
import { statuses } from '../countries/registry.ts';
import type { Queryable } from '../store/db.ts';
import { fiscalRecordsRepo } from '../store/repos/fiscal-records-repo.ts';
import { transactionsRepo, type TransactionRow } from '../store/repos/transactions-repo.ts';
import type { AuthContext } from './auth-context.ts';

/** The draft with the system's metadata for the sales it replaces; unchanged when it names none. */
export async function withReplacedSales(
  q: Queryable, auth: Pick<AuthContext, 'accountId' | 'environment'>, system: FiscalSystem, location: LocationForFiscal, draft: TransactionDraft,
): Promise<TransactionDraft> {
  const rule = system.replaces;
  const ids = rule?.named(draft) ?? [];
  if (rule === undefined || ids.length === 0) return draft;
  const field = `metadata.${rule.field}`;
  const sales: ReplacedSale[] = [];
  for (const id of ids) {
    // Account-scoped: another account's id reads as unknown, as GET and cancel answer it.
    const row = await transactionsRepo.get(q, auth.accountId, id);
    if (!row) throw notFound(`${field}: transaction ${id} not found`);
    if (row.location_id !== location.id) throw badRequest(`${field}: transaction ${id} is of another location; a sale replaces sales of its own location`);
    // A test key's sale is a test record, in the test chain: it cannot replace a live invoice (nor the reverse).
    if (row.environment !== auth.environment) throw badRequest(`${field}: transaction ${id} is a ${row.environment} transaction; this key acts in ${auth.environment}`);
    if (row.type !== 'sale') throw badRequest(`${field}: transaction ${id} is not a sale`);
    if (statuses.isRefused(row.status)) throw badRequest(`${field}: transaction ${id} was refused by the authority (status ${row.status}): there is no invoice to replace`);
    await refuseWithdrawn(q, field, row);
    const sale = await storedSale(q, row);
    const refusal = rule.refusal(sale);
    if (refusal !== null) throw badRequest(refusal);
    sales.push(sale);
  }
  return { ...draft, metadata: rule.resolve(draft, sales) };
}

/**
 * A sale cancelled, or one whose cancellation stands (pending): it is being withdrawn, not
 * replaced (400). Checked when the replacement is prepared, and again under the lock of the
 * ticket's `replaced` document when it is written (transaction-entry.ts): a cancellation of
 * the ticket takes the same lock, so the two cannot both pass.
 */
export async function refuseWithdrawn(q: Queryable, field: string, row: Pick<TransactionRow, 'id' | 'status' | 'cancelled_by_id'>): Promise<void> {
  const cancellation = row.cancelled_by_id ? await transactionsRepo.getById(q, row.cancelled_by_id) : undefined;
  if (row.status === 'cancelled' || (cancellation && !statuses.isRefused(cancellation.status))) {
    throw badRequest(`${field}: transaction ${row.id} is cancelled or being cancelled`);
  }
}

/**
 * What a plug-in is told of an earlier sale of its location (a replaced ticket, a corrected
 * invoice): its stored draft, and its record's number and issue time.
 */
export async function storedSale(q: Queryable, row: Pick<TransactionRow, 'id' | 'normalized' | 'created_at'>): Promise<ReplacedSale> {
  const record = await fiscalRecordsRepo.getForTransaction(q, row.id);
  return {
    transactionId: row.id,
    tx: row.normalized,
    documentNumber: record?.document_number ?? null,
    issuedAt: (record?.created_at ?? row.created_at).toISOString(),
  };
}
