/**
 * Which claimed records travel together to Batuz. Pure.
 *
 * An LROE request belongs to one obligado tributario (the issuer's NIF, FORMATS.md §1.6
 * `inte`/`ObligadoTributario`) and is either an alta or an anulación document
 * (request.ts), so a batch is one (issuer, kind). The submission mode splits too:
 * test records made in the sandbox stub are answered by the stub, those made with
 * `X-Svc-Sandbox: authority` go to the Batuz test environment (DECISIONS "Sandbox").
 * The scope (account, environment) is already one per run.
 *
 * Altas come first: an anulación names an invoice Batuz must already hold (B4_2000004
 * "El registro que se anula no existe"), and a cancellation may wait in the same run as
 * its original.
 */
import type { BatchClaim } from '../../../store/repos/transactions-repo.ts';
import type { LroeKind } from './identity.ts';

export interface LroeGroup {
  mode: 'stub' | 'authority';
  /** The location's tax_id (the issuer NIF of every file it signed). */
  issuerTaxId: string;
  kind: LroeKind;
  claims: BatchClaim[];
}

export const lroeKindOf = (c: BatchClaim): LroeKind => (c.record.kind === 'cancellation' ? 'anulacion' : 'alta');

/** Groups keep the claims' order (oldest first); altas before anulaciones, then by issuer. */
export function groupLroeClaims(claims: readonly BatchClaim[]): LroeGroup[] {
  const groups = new Map<string, LroeGroup>();
  for (const c of claims) {
    const mode = c.t.sandbox_mode ?? 'stub';
    // Spanish locations carry a validated tax_id; a location without one cannot be an LROE
    // issuer, and its records fail on their own group rather than join another's.
    const issuerTaxId = c.location.tax_id?.trim().toUpperCase() || `location:${c.location.id}`;
    const kind = lroeKindOf(c);
    const key = `${kind === 'alta' ? 0 : 1}|${issuerTaxId}|${mode}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { mode, issuerTaxId, kind, claims: [] }));
    g.claims.push(c);
  }
  return [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, g]) => g);
}
