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
 *
 * The request names the issuer (`inte.nrs`, Cabecera/ObligadoTributario) as its records
 * were issued: the name kept beside each record (`fiscal_records.issuer`), so a PATCH of
 * the location's legal name between a sale and the daily batch does not rename the issuer
 * of the invoices already issued. Records of one NIF issued under different names (a
 * rename between them, or locations named apart) go in separate requests, one name each,
 * in the order of their first record. The claim hands that issuer already read in the
 * contract's shape (`BatchClaim.issuer`, the `StoredRecord.issuer` of a single send).
 */
import type { IssuerAsIssued } from '../../types.ts';
import type { BatchClaim } from '../../../store/repos/transactions-repo.ts';
import type { LroeKind } from './identity.ts';

export interface LroeGroup {
  mode: 'stub' | 'authority';
  /** The location's tax_id (the issuer NIF of every file it signed). */
  issuerTaxId: string;
  /**
   * The issuer as its records were issued (the same for every record of the group), or
   * undefined for records stored before it was kept: the sender then names the location
   * as it stands.
   */
  issuer?: IssuerAsIssued | undefined;
  kind: LroeKind;
  claims: BatchClaim[];
}

/** The name a request gives the issuer (`country_config.legal_name`, else the location's name), as issued. */
export const lroeNameOf = (issuer: Pick<IssuerAsIssued, 'name' | 'legalName'>): string =>
  issuer.legalName !== null && issuer.legalName.trim() !== '' ? issuer.legalName : issuer.name;

export const lroeKindOf = (c: BatchClaim): LroeKind => (c.record.kind === 'cancellation' ? 'anulacion' : 'alta');

/**
 * Groups keep the claims' order (oldest first); altas before anulaciones, then by issuer;
 * an issuer's groups of different names in the order of their first claim.
 */
export function groupLroeClaims(claims: readonly BatchClaim[]): LroeGroup[] {
  const groups = new Map<string, { order: string; group: LroeGroup }>();
  for (const c of claims) {
    const mode = c.t.sandbox_mode ?? 'stub';
    // Spanish locations carry a validated tax_id; a location without one cannot be an LROE
    // issuer, and its records fail on their own group rather than join another's.
    const issuerTaxId = c.location.tax_id?.trim().toUpperCase() || `location:${c.location.id}`;
    const kind = lroeKindOf(c);
    const issuer = c.issuer;
    const order = `${kind === 'alta' ? 0 : 1}|${issuerTaxId}|${mode}`;
    // Records that kept no issuer (stored before it was kept) go together, under the location now.
    const key = `${order}|${issuer ? `=${lroeNameOf(issuer)}` : ''}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { order, group: { mode, issuerTaxId, ...(issuer ? { issuer } : {}), kind, claims: [] } }));
    g.group.claims.push(c);
  }
  // A stable sort: groups of one order key stay in insertion order (their first claim's).
  return [...groups.values()].sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0)).map((g) => g.group);
}
