/**
 * What the Spanish sandbox stubs share. A `reject:<code>` is answered as the real client
 * reads that code from the authority: an "already registered" code means a duplicate only
 * for the service the record went to (an alta or an annulment; TicketBAI: also the
 * territory's service), not wherever the system's codes table flags it. Without this, a
 * cancellation rehearsing `reject:005` (TicketBAI's alta duplicate) ended `success` and
 * cancelled its original, where the Hacienda's 005 on an annulment is read as a refusal.
 */
import type { AuthorityCode } from '../types.ts';

/**
 * `codes` with the `duplicate` flag on exactly the codes in `duplicates` (the real client's
 * list for one service). Every listed code must be in `codes` (its message and translation).
 */
export function withDuplicates(
  codes: Readonly<Record<string, AuthorityCode>>,
  duplicates: readonly string[],
): Readonly<Record<string, AuthorityCode>> {
  const out: Record<string, AuthorityCode> = {};
  for (const [code, entry] of Object.entries(codes)) {
    const { duplicate: _flag, ...rest } = entry;
    out[code] = duplicates.includes(code) ? { ...rest, duplicate: true } : rest;
  }
  for (const code of duplicates) {
    if (out[code] === undefined) throw new Error(`sandbox: duplicate code ${code} is not in the codes table`);
  }
  return out;
}
