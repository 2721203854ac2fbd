/**
 * France NF525 transaction rules: nothing is required in metadata (the register and the
 * issuer come from the location); the shared rules apply (EUR, sandbox_outcome) and every
 * line is at a French VAT rate (rates.ts).
 */
import type { TransactionContext, TransactionDraft } from '../types.ts';
import { baseMetadata } from '../shared/metadata-fields.ts';
import { checkFrenchVatRates } from './rates.ts';

export function validateNf525Transaction(tx: TransactionDraft, _ctx: TransactionContext): Record<string, unknown> {
  const meta = baseMetadata(tx, 'FR');
  checkFrenchVatRates(tx);
  return meta;
}
