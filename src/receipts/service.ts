/**
 * Receipts of stored transactions: the caller's transaction (another account's is not
 * found), the location it was made at (deleted or not: the receipt is of the past
 * sale), its system's receipt facts, drawn by render.ts.
 */
import { notFound } from '../core/errors.ts';
import type { Country } from '../core/country.ts';
import { getSystem, isSystemKey } from '../countries/registry.ts';
import type { SoftwareIdentity } from '../countries/types.ts';
import type { AuthContext } from '../services/auth-context.ts';
import type { Db } from '../store/db.ts';
import { fiscalRecordsRepo } from '../store/repos/fiscal-records-repo.ts';
import { locationsRepo } from '../store/repos/locations-repo.ts';
import { transactionsRepo } from '../store/repos/transactions-repo.ts';
import { receiptLanguages, receiptOptions, renderReceipt, type RenderedReceipt } from './render.ts';

export interface ReceiptService {
  render(auth: AuthContext, id: string, query: Record<string, unknown>): Promise<RenderedReceipt>;
}

export function createReceiptService(deps: { db: Db; software: SoftwareIdentity }): ReceiptService {
  return {
    async render(auth, id, query) {
      const row = await transactionsRepo.get(deps.db, auth.accountId, id);
      if (!row) throw notFound('transaction not found');
      const system = row.system && isSystemKey(row.system) ? getSystem(row.system) : undefined;
      // The options are checked before anything is drawn: a bad one is a 400 whatever the transaction.
      const options = receiptOptions(query, receiptLanguages(system?.receipt));
      const location = await locationsRepo.getById(deps.db, row.location_id);
      const record = await fiscalRecordsRepo.getForTransaction(deps.db, row.id);
      const legalName = location?.country_config.legal_name;
      return renderReceipt({
        transaction: {
          id: row.id,
          type: row.type,
          environment: row.environment,
          country: row.country as Country,
          created_at: row.created_at,
          fiscal_id: row.fiscal_id,
          document_number: record?.document_number ?? null,
          normalized: row.normalized,
          render_hints: row.render_hints,
        },
        location: {
          name: location?.name ?? '',
          address: location?.address ?? null,
          tax_id: location?.tax_id ?? null,
          legal_name: typeof legalName === 'string' && legalName !== '' ? legalName : null,
        },
        system,
        software: deps.software,
      }, options);
    },
  };
}
