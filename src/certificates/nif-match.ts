/**
 * Does a certificate's NIF belong to a location's tax id? A location signing with a
 * certificate issued to someone else is legal only for a representative, and it is far
 * more often a mix-up, so we warn (not refuse): the response says so.
 * Compared without case, separators or the `ES` VAT prefix (`ESB12345674` = `B12345674`).
 */
const normalize = (s: string) => s.toUpperCase().replace(/[^0-9A-Z]/g, '').replace(/^ES(?=[0-9A-Z]{9}$)/, '');

export function nifMismatchWarning(certNif: string | null, taxId: string | null, where: string): string | null {
  if (!certNif || !taxId) return null;
  return normalize(certNif) === normalize(taxId) ? null : `certificate NIF ${certNif} differs from tax_id ${taxId} of ${where}`;
}
