/**
 * A document of the register is annulled once (docs/decisions.md "Italy DC: a document is
 * annulled once (F9)"). An
 * annullo names the document it annuls by register (matricola), day and number, whichever
 * way it was made: POST /v1/transactions/{id}/cancel (the original's own number and day) or
 * a transaction whose metadata says `is_cancellation` with `original_matricola`,
 * `original_date` and `original_number`. When the register is the location's own, the core
 * refuses a second annullo of the same document while the first stands (409, below);
 * otherwise (another register's document) we cannot know it and do not check.
 * Returns (resi) are not checked: a document may be returned in parts.
 */
import type { FiscalSystem } from '../types.ts';
import { configString } from '../shared/config-fields.ts';
import { isoDate, localDate } from '../shared/dates.ts';

type AnnulmentInput = Parameters<NonNullable<FiscalSystem['annulledDocument']>>[0];

/** The 409's text, in the spec's style (lower case, no full stop). */
export const alreadyAnnulledMessage = (register: string, day: string, number: string): string =>
  `document ${number} of ${day} on register ${register} is already cancelled`;

export function dcAnnulledDocument(input: AnnulmentInput): { document: string; message: string } | null {
  const register = configString(input.location.config, 'pem_matricola')?.toUpperCase();
  if (register === undefined) return null;
  let day: string;
  let number: string;
  if (input.kind === 'cancellation') {
    const o = input.original;
    const n = o?.documentNumber ?? o?.fiscalId;
    if (!o || !n) return null;
    day = isoDate(localDate(new Date(o.issuedAt), 'IT'));
    number = n;
  } else {
    const m = input.tx.metadata;
    if (m.is_cancellation !== true || typeof m.original_matricola !== 'string' || m.original_matricola.toUpperCase() !== register) return null;
    if (typeof m.original_date !== 'string' || typeof m.original_number !== 'string') return null;
    day = m.original_date;
    number = m.original_number;
  }
  return { document: `${register}/${day}/${number}`, message: alreadyAnnulledMessage(register, day, number) };
}
