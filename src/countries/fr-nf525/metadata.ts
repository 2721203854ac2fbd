/**
 * France NF525 transaction rules: nothing is required in metadata (the register and the
 * issuer come from the location); only the shared rules apply (EUR, sandbox_outcome).
 */
import type { TransactionContext, TransactionDraft } from '../types.ts';
import { baseMetadata } from '../shared/metadata-fields.ts';

export function validateNf525Transaction(tx: TransactionDraft, _ctx: TransactionContext): Record<string, unknown> {
  return baseMetadata(tx, 'FR');
}
