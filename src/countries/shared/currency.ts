/**
 * All five countries use the euro, and every record format here states its amounts in
 * euros (FatturaPA can carry another `Divisa`, but with converted amounts that this API
 * does not take). A transaction in another currency cannot be fiscalized as sent, so it
 * is refused at creation rather than rejected by the authority days later.
 */
import { badRequest } from '../../core/errors.ts';
import type { Country, TransactionDraft } from '../types.ts';

export const COUNTRY_NAMES: Readonly<Record<Country, string>> = {
  ES: 'Spain',
  IT: 'Italy',
  FR: 'France',
  PT: 'Portugal',
  GR: 'Greece',
};

export function requireEur(tx: TransactionDraft, country: Country): void {
  if (tx.currency !== 'EUR') throw badRequest(`currency must be EUR for ${COUNTRY_NAMES[country]} locations`);
}
