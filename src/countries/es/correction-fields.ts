/**
 * What a correction of a Spanish record (VERI*FACTU subsanación, SII modification A1) keeps
 * as stored: the metadata that identifies the invoice or decides its amounts, type or period.
 * The core lets a request name only the fields a correction may change, but each plug-in's
 * validation derives some metadata from others (e.g. the invoice type from the customer), so
 * the validated result is compared with the original's here. A change of those needs a
 * rectifying invoice (RD 1619/2012 art. 15) or a cancellation, not a correction.
 */
import { badRequest } from '../../core/errors.ts';

/** Two metadata values are the same when their JSON is (absent and null alike). */
export const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Throws 400 `metadata.<field> cannot change in a correction: the record keeps <keeps> (a
 * refund or a cancellation changes them)` for the first of `fields` whose validated value
 * differs from the original's. `keeps` names what the system's record keeps (e.g. "the
 * invoice's identity and type").
 */
export function checkKeptFields(
  metadata: Readonly<Record<string, unknown>>,
  original: Readonly<Record<string, unknown>>,
  fields: readonly string[],
  keeps: string,
): void {
  for (const field of fields) {
    if (!sameValue(metadata[field], original[field])) {
      throw badRequest(`metadata.${field} cannot change in a correction: the record keeps ${keeps} (a refund or a cancellation changes them)`);
    }
  }
}
