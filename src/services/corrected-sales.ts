/**
 * A refund or void that names the sale it corrects by the number the sale was issued under
 * (`FiscalSystem.correctedSale`): before the correction joins its chain, the sales issued
 * under the documents its system names are read from the register of issued numbers
 * (chain_documents, role `issued`, keyed per environment as transaction-entry.ts registers
 * them), or from the places in the location's chains the system names (a number that is
 * the record's place in its chain), and the system stores what it makes of them (or
 * refuses). The scope the system names is where its numbers are unique (an issuer, all of
 * its locations in the account): a sale of any of them counts. Nothing is refused here
 * but what the system refuses: a number that matches no sale of the caller's account in
 * that scope is handed to the system as no sale.
 *
 * A cumulative lookup (`CorrectedSaleLookup.cumulative`: a credit note credits at most
 * what its sale has left) also reads each sale's standing corrections (chain_documents role
 * `corrected`), and the correction is weighed again in the append's transaction under the
 * sales' locks (`CorrectionCheck`), where it registers itself against them. A sale that
 * names a document (`CorrectedSaleLookup.sales`, e.g. a debit note) is checked again and
 * registered the same way: it takes nothing from the document, but holds it (the document
 * is not cancelled while it stands).
 */
import { conflict } from '../core/errors.ts';
import type { TransactionDraft } from '../core/transaction.ts';
import type { CorrectedSale, FiscalSystem, ReplacedSale, TransactionContext } from '../countries/types.ts';
import { statuses } from '../countries/registry.ts';
import { inEnvironment } from '../countries/shared/chain-key.ts';
import type { Queryable } from '../store/db.ts';
import { chainDocumentsRepo } from '../store/repos/chain-documents-repo.ts';
import { fiscalRecordsRepo } from '../store/repos/fiscal-records-repo.ts';
import { transactionsRepo } from '../store/repos/transactions-repo.ts';
import type { AuthContext } from './auth-context.ts';
import { storedSale } from './replacements.ts';

type Auth = Pick<AuthContext, 'accountId' | 'environment'>;

/**
 * A correction no longer counts against its sale once refused by its authority or
 * cancelled (as transaction-entry.ts `NOT_CORRECTING`).
 */
const NOT_COUNTING: readonly string[] = [...statuses.refused, 'cancelled'];

/** Where a cumulative lookup registers corrections against their sales: the account's, per environment. */
const correctedScope = (auth: Auth) => inEnvironment(`corrected:${auth.accountId}`, auth.environment);

/**
 * A sale that standing documents of a cumulative lookup name (corrections counted against
 * it, or sales that add to it: a Portuguese document with credit or debit notes) cannot be
 * cancelled on its own: they name it, and cancelling it would leave credit notes crediting
 * a document that no longer counts (it would be taken back twice), or a debit note adding
 * to one. 409, the spec's "not cancellable", until those documents are cancelled. With
 * `lock` (in the append's transaction) under the sale's lock, the one a naming document
 * takes to weigh itself (`CorrectionCheck`): such a document and a cancellation of the sale
 * made at once are serialized, and the second sees the first.
 */
export async function refuseCancelWhileCorrected(q: Queryable, auth: Auth, system: FiscalSystem, saleId: string, lock: boolean): Promise<void> {
  if (system.correctedSale?.cumulative !== true) return;
  const scope = correctedScope(auth);
  if (lock) await chainDocumentsRepo.lockDocument(q, 'corrected', scope, saleId);
  const standing = await chainDocumentsRepo.standingTransactions(q, 'corrected', scope, saleId, NOT_COUNTING);
  if (standing.length > 0) throw conflict(NOT_CANCELLABLE);
}

/** The spec's 409 for a transaction that cannot be cancelled. */
const NOT_CANCELLABLE = 'transaction cannot be cancelled';

/**
 * What the append does for a document a cumulative lookup found sales for (a correction,
 * or a sale naming a document), in its transaction: under the lock of each sale found, the
 * sales (and, for a correction, their standing corrections) are read again and the system
 * asked again (a correction made meanwhile counts, a sale cancelled meanwhile is seen: 400
 * as at prepare), then the document is registered against each sale.
 */
export interface CorrectionCheck {
  saleIds: string[];
  underLock(tx: Queryable, transactionId: string, now: Date): Promise<void>;
}

/**
 * The draft with the system's metadata for the sale it corrects; unchanged for a sale (but
 * for a lookup that takes sales: `CorrectedSaleLookup.sales`), for a system without the
 * lookup, and when the request names no document to look up.
 * `request`: the draft as the client sent it; `draft`: with the validated metadata.
 * `check`: for a cumulative lookup that found sales, what the append runs.
 */
export async function withCorrectedSale(
  q: Queryable, auth: Auth, system: FiscalSystem,
  ctx: TransactionContext, request: TransactionDraft, draft: TransactionDraft,
): Promise<{ draft: TransactionDraft; check?: CorrectionCheck | undefined }> {
  const lookup = system.correctedSale;
  // A sale is looked up only when the system says a sale may name a document (`sales`).
  if (lookup === undefined || (draft.type === 'sale' && lookup.sales !== true)) return { draft };
  const named = lookup.named({ tx: draft, request, location: ctx.location });
  // Named, but nothing to read (a number none of the system's documents can have): the
  // system is still asked, with no sale found.
  if (named === null) return { draft };
  // Only refunds and voids count against what they name: a sale that names a document
  // (CorrectedSaleLookup.sales) takes nothing from it. Both are registered against it (a
  // cumulative lookup): while they stand, the document is not cancelled.
  const registers = lookup.cumulative === true;
  const counts = registers && draft.type !== 'sale';
  const read = async (db: Queryable): Promise<CorrectedSale[]> => {
    const sales = await salesNamed(db, auth, named);
    if (!counts) return sales;
    return Promise.all(sales.map(async (sale) => ({ ...sale, corrections: await standingCorrections(db, auth, sale.transactionId) })));
  };
  const sales = await read(q);
  const metadata = lookup.resolve({ tx: draft, request, ctx }, sales);
  if (!registers || sales.length === 0) return { draft: { ...draft, metadata } };
  const saleIds = sales.map((s) => s.transactionId).sort();
  const check: CorrectionCheck = {
    saleIds,
    async underLock(tx, transactionId, now) {
      const scope = correctedScope(auth);
      for (const id of saleIds) await chainDocumentsRepo.lockDocument(tx, 'corrected', scope, id);
      lookup.resolve({ tx: draft, request, ctx }, await read(tx));
      for (const id of saleIds) await chainDocumentsRepo.insert(tx, { role: 'corrected', chainKey: scope, document: id, transactionId, now });
    },
  };
  return { draft: { ...draft, metadata }, check };
}

/** The sales registered under the named documents or alias, or at the named places, of the caller's account and environment, not refused. */
async function salesNamed(
  q: Queryable, auth: Auth, named: NonNullable<ReturnType<NonNullable<FiscalSystem['correctedSale']>['named']>>,
): Promise<CorrectedSale[]> {
  const scope = inEnvironment(named.scope, auth.environment);
  const positions = (named.positions ?? []).map((p) => ({ chainKey: inEnvironment(p.chainKey, auth.environment), seq: p.seq }));
  const found = [
    ...(named.documents.length > 0 ? await chainDocumentsRepo.registered(q, 'issued', scope, named.documents) : []),
    ...(named.alias !== undefined ? await chainDocumentsRepo.registeredAs(q, 'issued', scope, named.alias) : []),
    ...(await fiscalRecordsRepo.atPositions(q, positions)),
  ];
  const sales: CorrectedSale[] = [];
  const seen = new Set<string>();
  for (const { transactionId } of found) {
    if (seen.has(transactionId)) continue;
    seen.add(transactionId);
    // Account-scoped: another account's transaction reads as none, as GET answers it (404).
    // Any location of the scope (the issuer's): the system's numbers are the issuer's.
    const row = await transactionsRepo.get(q, auth.accountId, transactionId);
    if (!row || row.environment !== auth.environment) continue;
    // Refused by its authority (or out of retries): the number was never issued.
    if (statuses.isRefused(row.status)) continue;
    sales.push({ ...(await storedSale(q, row)), cancelled: row.status === 'cancelled' });
  }
  return sales;
}

/**
 * The refunds and voids registered against the sale that stand (not refused, not cancelled),
 * oldest first, as `storedSale` tells them: three reads however many there are (a document
 * credited line by line gathers many), run twice per credit note (at prepare, under the lock).
 * Sales registered against it (they name it, `CorrectedSaleLookup.sales`) credit nothing: left out.
 */
async function standingCorrections(q: Queryable, auth: Auth, saleId: string): Promise<ReplacedSale[]> {
  const standing = await chainDocumentsRepo.standingTransactions(q, 'corrected', correctedScope(auth), saleId, NOT_COUNTING);
  if (standing.length === 0) return [];
  const rows = new Map((await transactionsRepo.getByIds(q, standing)).filter((r) => r.type !== 'sale').map((r) => [r.id, r]));
  const ids = standing.filter((id) => rows.has(id));
  if (ids.length === 0) return [];
  const records = await fiscalRecordsRepo.recordsOf(q, ids);
  return ids.flatMap((id) => {
    const row = rows.get(id);
    if (row === undefined) return [];
    const record = records.get(id);
    return [{ transactionId: id, tx: row.normalized, documentNumber: record?.documentNumber ?? null, issuedAt: (record?.createdAt ?? row.created_at).toISOString() }];
  });
}
