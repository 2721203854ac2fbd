/**
 * A refund or void that names the sale it corrects by the number the sale was issued under
 * (`FiscalSystem.correctedSale`): before the correction joins its chain, the sales issued
 * under the documents its system names are read from the register of issued numbers
 * (chain_documents, role `issued`, keyed per environment as transaction-entry.ts registers
 * them), and the system stores what it makes of them. The scope the system names is where
 * its numbers are unique (an issuer, all of its locations in the account): a sale of any of
 * them counts. Nothing is refused here: a number that matches no sale of the caller's
 * account in that scope leaves the correction as its request made it.
 */
import type { TransactionDraft } from '../core/transaction.ts';
import type { CorrectedSale, FiscalSystem, TransactionContext } from '../countries/types.ts';
import { statuses } from '../countries/registry.ts';
import { inEnvironment } from '../countries/shared/chain-key.ts';
import type { Queryable } from '../store/db.ts';
import { chainDocumentsRepo } from '../store/repos/chain-documents-repo.ts';
import { transactionsRepo } from '../store/repos/transactions-repo.ts';
import type { AuthContext } from './auth-context.ts';
import { storedSale } from './replacements.ts';

/**
 * The draft with the system's metadata for the sale it corrects; unchanged for a sale, for
 * a system without the lookup, and when the request names no document to look up.
 * `request`: the draft as the client sent it; `draft`: with the validated metadata.
 */
export async function withCorrectedSale(
  q: Queryable, auth: Pick<AuthContext, 'accountId' | 'environment'>, system: FiscalSystem,
  ctx: TransactionContext, request: TransactionDraft, draft: TransactionDraft,
): Promise<TransactionDraft> {
  const lookup = system.correctedSale;
  if (lookup === undefined || draft.type === 'sale') return draft;
  const named = lookup.named({ tx: draft, request, location: ctx.location });
  if (named === null || (named.documents.length === 0 && named.alias === undefined)) return draft;
  const scope = inEnvironment(named.scope, auth.environment);
  const found = [
    ...(named.documents.length > 0 ? await chainDocumentsRepo.registered(q, 'issued', scope, named.documents) : []),
    ...(named.alias !== undefined ? await chainDocumentsRepo.registeredAs(q, 'issued', scope, named.alias) : []),
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
    sales.push(await storedSale(q, row));
  }
  return { ...draft, metadata: lookup.resolve({ tx: draft, request, ctx }, sales) };
}
