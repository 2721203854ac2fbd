/**
 * Italian VAT exemption nature (`Natura`, FatturaPA schema 1.2.2 `NaturaType`; the same
 * codes go in the corrispettivi of a Documento Commerciale). A line at 0 % must say why
 * it carries no VAT, and a taxed line must not carry one: SdI rejects either case
 * (00400 / 00401 on lines, 00429 / 00430 in the summary).
 *
 * The generic N2, N3 and N6 are still in the schema, so they are accepted here as the
 * spec lists them, although SdI has refused them in favour of the subcodes since 2021
 * (00445 / 00448); N7 (VAT paid in another EU state) is outside N1-N6 and not offered.
 */
import { badRequest } from '../../core/errors.ts';
import type { LineField, TransactionDraft } from '../types.ts';

/**
 * `items[i].natura` on the request (both Italian systems declare it in `lineFields`):
 * an optional string, stored trimmed and upper-cased; `checkNatura` validates it.
 */
export const NATURA_LINE_FIELD: LineField = { name: 'natura', type: 'string', upperCase: true };

export const NATURA_CODES: readonly string[] = [
  'N1',
  'N2', 'N2.1', 'N2.2',
  'N3', 'N3.1', 'N3.2', 'N3.3', 'N3.4', 'N3.5', 'N3.6',
  'N4',
  'N5',
  'N6', 'N6.1', 'N6.2', 'N6.3', 'N6.4', 'N6.5', 'N6.6', 'N6.7', 'N6.8', 'N6.9',
];

export function checkNatura(tx: TransactionDraft): void {
  tx.items.forEach((line, i) => {
    const natura: unknown = line.natura;
    const given = natura !== undefined && natura !== null && natura !== '';
    if (line.tax_rate === 0) {
      if (!given) throw badRequest(`items[${i}].natura is required when tax_rate is 0 (N1-N6)`);
      if (typeof natura !== 'string' || !NATURA_CODES.includes(natura)) {
        throw badRequest(`items[${i}].natura must be a valid Natura code (N1-N6 and subcodes)`);
      }
    } else if (given) {
      throw badRequest(`items[${i}].natura is only allowed when tax_rate is 0`);
    }
  });
}
