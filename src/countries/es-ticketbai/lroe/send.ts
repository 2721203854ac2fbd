/**
 * Sends one LROE group and turns the answers into per-record verdicts.
 *
 * - `stub` mode (test keys without `X-Svc-Sandbox`): the TicketBAI sandbox stub answers
 *   each record, so `metadata.sandbox_outcome` rehearses Bizkaia failures as it does for
 *   the other territories (DECISIONS "Sandbox"; countries/shared/sandbox.ts).
 * - `authority` mode (test keys with `X-Svc-Sandbox: authority`, and every live key): the
 *   Batuz LROE client (client.ts), with the location's uploaded
 *   certificate as the TLS client certificate. Issuer NIF = the location's tax_id, name =
 *   `country_config.legal_name` (else the name) as the group's records were issued
 *   (groups.ts; Batuz checks both against the files, B4_1000022/30);
 *   a natural person's Modelo 140 also sends `country_config.lroe_epigrafe`.
 *
 * A fault that concerns the whole group (no answer, no certificate, an input Batuz could
 * not accept) sends every record back to wait and is reported as the group's error.
 */
import type { BatchRequestSummary, ProcessorDeps } from '../../../batch/types.ts';
import { verdictOf, type RecordVerdict } from '../../../batch/verdict.ts';
import { ApiError } from '../../../core/errors.ts';
import type { SigningKey } from '../../../core/signing-key.ts';
import type { BatchClaim } from '../../../store/repos/transactions-repo.ts';
import { runSandbox } from '../../shared/sandbox.ts';
import { TransportError, type AuthorityCode, type AuthorityPacing, type LocationForFiscal } from '../../types.ts';
import { ticketBaiSandboxFor } from '../sandbox.ts';
import { sendLroeBatch } from './client.ts';
import { lroeNameOf, type LroeGroup } from './groups.ts';
import { LroeInputError, type LroeRenta } from './request.ts';

export const LROE_SYSTEM = 'es-ticketbai';

export interface LroeSendDeps {
  /** The core's services as the processor deps hand them (the plug-in imports nothing from src/services). */
  locations: ProcessorDeps['locations'];
  signingKeys: Pick<ProcessorDeps['signingKeys'], 'forAuthority'>;
  /** Keyed `${system}:${environment}` (runtime option `authorityBaseUrls`). */
  authorityBaseUrls?: Record<string, string> | undefined;
  authorityCa?: string | undefined;
  /** Per LROE request. */
  timeoutMs: number;
  codes: Readonly<Record<string, AuthorityCode>>;
  /** Part of every SubmitContext (the stub's here); the LROE client does not pace itself. */
  pacing: AuthorityPacing;
}

export interface GroupAnswer {
  /** By transaction id; every record of the group has one. */
  verdicts: Map<string, RecordVerdict>;
  /** By transaction id: the registration number of the request that carried it. */
  registrationNumbers: Map<string, string | null>;
  requests: BatchRequestSummary[];
  /** Set when the whole group waits for the next run. */
  error?: { code: string; message: string } | undefined;
}

function allRetry(group: LroeGroup, code: string, message: string): GroupAnswer {
  return {
    verdicts: new Map(group.claims.map((c) => [c.t.id, { kind: 'retry', code, message }])),
    registrationNumbers: new Map(),
    requests: [],
    error: { code, message },
  };
}

function stubAnswer(group: LroeGroup, environment: 'test' | 'live', location: LocationForFiscal, now: Date, deps: LroeSendDeps): GroupAnswer {
  const verdicts = new Map<string, RecordVerdict>();
  // One group is one kind (alta or anulación): the stub reads duplicates as Batuz's answer to it would be.
  const spec = ticketBaiSandboxFor({ kind: group.kind === 'anulacion' ? 'cancellation' : 'record' }, location);
  for (const c of group.claims) {
    try {
      const outcome = runSandbox(
        { transactionId: c.t.id, kind: c.record.kind, body: c.record.body, contentType: c.record.content_type, fiscalId: c.record.fiscal_id, tx: c.t.normalized },
        { environment, mode: 'stub', location, now, timeoutMs: deps.timeoutMs, attempt: 1, pacing: deps.pacing },
        spec,
      );
      verdicts.set(c.t.id, verdictOf(outcome, deps.codes));
    } catch (err) {
      if (!(err instanceof TransportError)) throw err;
      verdicts.set(c.t.id, { kind: 'retry', code: err.code, message: err.message });
    }
  }
  return { verdicts, registrationNumbers: new Map(), requests: [] };
}

/** The issuer's name as the group's records were issued; the location's now for records that kept none. */
const issuerNameOf = (group: LroeGroup, location: LocationForFiscal): string => {
  if (group.issuer) return lroeNameOf(group.issuer);
  const name = location.config.legal_name;
  return typeof name === 'string' && name.trim() !== '' ? name : location.name;
};

/**
 * Modelo 140 (natural persons) altas carry the activity's IAE heading, `Renta/DetalleRenta/
 * Epigrafe` (request.ts): `country_config.lroe_epigrafe`, which es-ticketbai/config.ts
 * requires for such locations. A location stored before that rule may lack it: the client
 * then refuses the request (LroeInputError) and the records wait, as below. Modelo 240
 * ignores it. The group's first location speaks for the issuer (one NIF, one activity).
 */
const rentaOf = (location: LocationForFiscal): LroeRenta | undefined => {
  const epigrafe = location.config.lroe_epigrafe;
  return typeof epigrafe === 'string' && epigrafe.trim() !== '' ? { epigrafe: epigrafe.trim() } : undefined;
};

export async function sendLroeGroup(group: LroeGroup, environment: 'test' | 'live', now: Date, deps: LroeSendDeps): Promise<GroupAnswer> {
  const first: BatchClaim = group.claims[0]!;
  const location = deps.locations.toFiscal(first.location);
  if (group.mode === 'stub') return stubAnswer(group, environment, location, now, deps);

  let clientKey: SigningKey;
  try {
    clientKey = await deps.signingKeys.forAuthority(location);
  } catch (err) {
    // No (or no longer an) uploaded certificate: Batuz would refuse the TLS handshake. The
    // records wait until the location has one again.
    if (err instanceof ApiError) return allRetry(group, 'certificate_missing', err.message);
    throw err;
  }
  try {
    const result = await sendLroeBatch(
      {
        issuerNif: location.tax_id?.trim() ?? '',
        issuerName: issuerNameOf(group, location),
        kind: group.kind,
        records: group.claims.map((c) => ({ transactionId: c.t.id, xml: c.record.body })),
        renta: rentaOf(location),
      },
      {
        environment,
        clientKey,
        authorityCa: deps.authorityCa,
        authorityBaseUrl: deps.authorityBaseUrls?.[`${LROE_SYSTEM}:${environment}`],
        timeoutMs: deps.timeoutMs,
      },
    );
    return {
      verdicts: new Map(result.records.map((r) => [r.transactionId, verdictOf(r.outcome, deps.codes)])),
      registrationNumbers: new Map(result.records.map((r) => [r.transactionId, r.registrationNumber])),
      requests: result.requests.map((r) => ({
        issuer_tax_id: group.issuerTaxId,
        kind: group.kind,
        year: r.year,
        records: r.records,
        registration_number: r.numeroRegistro,
        answer: r.tipoRespuesta ?? (r.httpStatus === null ? null : `HTTP ${r.httpStatus}`),
      })),
    };
  } catch (err) {
    if (err instanceof TransportError) return allRetry(group, err.code, err.message);
    // Bad issuer data (NIF, name, a Modelo 140 without its epigrafe: a location stored
    // before config.ts asked for it): a configuration error nothing is sent for; the
    // records wait until the location is fixed.
    if (err instanceof LroeInputError) return allRetry(group, 'lroe_input_error', err.message);
    throw err;
  }
}
