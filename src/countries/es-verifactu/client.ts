/**
 * The VERI*FACTU protocol client (`submit` / `submitMany` in `authority` mode): stored
 * records of one issuer (1 to 1,000) in one RegFactuSistemaFacturacion request (soap.ts),
 * POSTed over mutual TLS to AEAT's `VerifactuSOAP` endpoint (SistemaFacturacion.wsdl;
 * FORMATS.md §2.7), the answer read by response.ts, each record's line matched by its
 * invoice id.
 *
 * Flow control (FORMATS.md §2.5, RespuestaSuministro.xsd `TiempoEsperaEnvio`): after each
 * answer AEAT says how many seconds to wait before the next submission. The client records
 * that per issuer NIF and environment in `ctx.pacing` (the core's memory, shared by every
 * worker) and, until it has elapsed, does not send: it answers `retry_later` with the time
 * left, so the queue comes back then.
 *
 * Records generated more than 120 s before the send (an outage, retries, a stopped worker)
 * go with the header's `RemisionVoluntaria/Incidencia` S (incident.ts), as AEAT asks of
 * records sent after a technical incident (else it answers 2004).
 *
 * Live requests never name the placeholder issuer `000000000` (shared/placeholder.ts): a
 * live location without a tax_id is refused when the transaction is created (metadata.ts);
 * a record stored before that rule is refused here, for good, without being sent.
 */
import { TransportError, type AuthorityCode, type AuthorityOutcome, type BatchOutcome, type StoredRecord, type SubmitContext } from '../types.ts';
import { authorityPost } from '../shared/authority-http.ts';
import { MISSING_TAX_ID } from '../shared/issuer-tax-id.ts';
import { issuerName, nombreRazon } from './build.ts';
import { VERIFACTU_CODES } from './codes.ts';
import { answerOutcomes, faultToOutcome, parseVerifactuAnswer, recordKeyOf } from './response.ts';
import { MAX_RECORDS_PER_REQUEST, submissionEnvelope } from './soap.ts';
import { sentAfterIncident } from './incident.ts';

/** SistemaFacturacion.wsdl, service sfVerifactu: ports SistemaVerifactu / SistemaVerifactuPruebas. */
export const VERIFACTU_ENDPOINTS = {
  live: 'https://www1.agenciatributaria.gob.es/wlpl/TIKE-CONT/ws/SistemaFacturacion/VerifactuSOAP',
  test: 'https://prewww1.aeat.es/wlpl/TIKE-CONT/ws/SistemaFacturacion/VerifactuSOAP',
} as const;

/** The endpoint for the context: the WSDL's, or its path on `authorityBaseUrl` (fake servers). */
export function verifactuEndpoint(ctx: Pick<SubmitContext, 'environment' | 'authorityBaseUrl'>): string {
  const official = VERIFACTU_ENDPOINTS[ctx.environment];
  if (!ctx.authorityBaseUrl) return official;
  return ctx.authorityBaseUrl.replace(/\/+$/, '') + new URL(official).pathname;
}

export interface VerifactuClient {
  submit(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome>;
  /**
   * Several records of one issuer's chain in one `RegFactuSistemaFacturacion` (one
   * `Cabecera`, up to 1,000 `RegistroFactura`, in the order given). Flow control, an HTTP
   * refusal and a SOAP Fault concern the request as a whole (`kind: 'request'`); otherwise
   * each record gets the answer line that names it (response.ts `answerOutcomes`).
   */
  submitMany(records: readonly StoredRecord[], ctx: SubmitContext): Promise<BatchOutcome>;
}

/** The `AuthorityPacing` key of an issuer's waits: AEAT paces each obligated issuer per environment. */
export const pacingKey = (nif: string, environment: 'test' | 'live'): string => `es-verifactu:${nif}:${environment}`;

/** A client; its flow-control memory is the context's `pacing` (the core's, shared by every worker). */
export function createVerifactuClient(codes: Readonly<Record<string, AuthorityCode>> = VERIFACTU_CODES): VerifactuClient {
  /** The refusal of a live record that would name the placeholder issuer: non-retriable (codes.ts). */
  const missingIssuerNif = (): AuthorityOutcome => ({
    kind: 'rejected', code: 'MISSING_ISSUER_NIF', message: codes.MISSING_ISSUER_NIF?.message ?? 'the location has no tax_id: a live record cannot name its issuer', response: {},
  });

  /** A record left for the next request (the header names another issuer name): flow control, not an attempt. */
  const nextRequest = (): AuthorityOutcome => ({
    kind: 'retry_later', code: 'NEXT_REQUEST', message: codes.NEXT_REQUEST?.message ?? 'sent in the next request', flowControl: true, retryAfterSeconds: 1,
    response: { flow_control: true },
  });

  async function submitMany(records: readonly StoredRecord[], ctx: SubmitContext): Promise<BatchOutcome> {
    if (records.length === 0 || records.length > MAX_RECORDS_PER_REQUEST) {
      throw new RangeError(`a VERI*FACTU request carries 1 to ${MAX_RECORDS_PER_REQUEST} records, not ${records.length}`);
    }
    const nif = ctx.location.tax_id?.trim() || MISSING_TAX_ID;
    const live = ctx.environment === 'live';
    // Live: nothing goes out naming the placeholder issuer (a false declaration). Every
    // record of the request is this issuer's (one chain), so each is refused on its own.
    if (live && nif === MISSING_TAX_ID) return { kind: 'records', outcomes: records.map(missingIssuerNif) };

    const issuerKey = pacingKey(nif, ctx.environment);
    const now = ctx.now.getTime();
    const notBefore = (await ctx.pacing.notBefore(issuerKey))?.getTime();
    if (notBefore !== undefined && now < notBefore) {
      const seconds = Math.ceil((notBefore - now) / 1000);
      return {
        kind: 'request',
        outcome: {
          kind: 'retry_later',
          code: 'WAIT_TIME',
          message: `AEAT asked to wait before the next submission for this issuer (TiempoEsperaEnvio): ${seconds} s left`,
          retryAfterSeconds: seconds,
          flowControl: true,
          response: { flow_control: true, send_not_before: new Date(notBefore).toISOString() },
        },
      };
    }

    // The Cabecera names the issuer as the records were issued (a PATCH of the location's
    // legal name after a sale does not rename it in its submission: `StoredRecord.issuer`,
    // else, for records stored before it was kept, the location now). One request, one
    // ObligadoEmision: the records issued under another name than the first's (a rename
    // between them) are not sent now but in a request of their own (NEXT_REQUEST below).
    const nombre = (r: StoredRecord): string => (r.issuer ? nombreRazon(r.issuer.legalName ?? r.issuer.name) : issuerName(ctx));
    const nombreRazonHeader = nombre(records[0]!);
    const run = records.findIndex((r) => nombre(r) !== nombreRazonHeader);

    // A stored placeholder (JSON) cannot be sent: no retry will change that. It is refused
    // on its own; the other records still go.
    const outcomes: (AuthorityOutcome | undefined)[] = records.map(() => undefined);
    const keys = records.map((r) => recordKeyOf(r.body));
    const sendable: number[] = [];
    keys.forEach((k, i) => {
      // Flow control for the record (not sent, not counted as an attempt): it goes with its own name next.
      if (run !== -1 && i >= run) outcomes[i] = nextRequest();
      else if (!k) outcomes[i] = { kind: 'rejected', code: 'INVALID_RECORD', message: 'the stored record is not a VERI*FACTU record: not a RegistroAlta or RegistroAnulacion', response: {} };
      // A record built without the issuer's NIF (the header's is right): never sent live.
      else if (live && k.IDEmisorFactura === MISSING_TAX_ID) outcomes[i] = missingIssuerNif();
      else sendable.push(i);
    });
    if (sendable.length === 0) return { kind: 'records', outcomes: outcomes as AuthorityOutcome[] };

    let envelope: string;
    try {
      const bodies = sendable.map((i) => records[i]!.body);
      // Records that waited past AEAT's margin go flagged as sent after an incident (incident.ts).
      envelope = submissionEnvelope({ nif, nombreRazon: nombreRazonHeader }, bodies, { incidencia: sentAfterIncident(bodies, ctx.now) });
    } catch (err) {
      // recordKeyOf accepted every body: a failure here is a character XML cannot carry in the header.
      return { kind: 'request', outcome: { kind: 'rejected', code: 'INVALID_RECORD', message: `the request cannot be built: ${(err as Error).message}`, response: {} } };
    }

    const res = await authorityPost({
      url: verifactuEndpoint(ctx),
      // SOAP 1.1 over HTTP: text/xml and a SOAPAction header (the WSDL's soapAction="").
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
      body: envelope,
      clientKey: ctx.clientKey,
      ca: ctx.authorityCa,
      timeoutMs: ctx.timeoutMs,
    });
    const answer = parseVerifactuAnswer(res.body.toString('utf8'));

    if (answer === null) {
      const snippet = res.body.toString('utf8').slice(0, 200);
      if (res.status >= 500) throw new TransportError('http_5xx', `AEAT answered HTTP ${res.status} without a SOAP answer`);
      if (res.status === 401 || res.status === 403) {
        // AEAT refuses the TLS client before any SOAP (no certificate, or not accepted).
        const code = `HTTP_${res.status}`;
        return { kind: 'request', outcome: { kind: 'rejected', code, message: codes[code]?.message ?? 'AEAT refused the client certificate', response: { http_status: res.status, body: snippet } } };
      }
      if (res.status === 429) {
        const after = Number(res.headers['retry-after']);
        return {
          kind: 'request',
          outcome: {
            kind: 'retry_later', code: 'HTTP_429', message: 'AEAT is limiting the request rate',
            retryAfterSeconds: Number.isFinite(after) && after > 0 ? after : undefined, response: { http_status: res.status },
          },
        };
      }
      throw new TransportError('bad_response', `AEAT answered HTTP ${res.status} with a body that is not a SOAP answer`);
    }

    if (answer.kind === 'fault') return { kind: 'request', outcome: faultToOutcome(answer, codes) };
    // No wait (or 0) needs no write: the recorded time, if any, has passed (checked above),
    // or is a later wait another worker was given meanwhile, which still holds.
    if (answer.TiempoEsperaEnvio !== undefined && answer.TiempoEsperaEnvio > 0) {
      await ctx.pacing.hold(issuerKey, new Date(now + answer.TiempoEsperaEnvio * 1000));
    }
    const answered = answerOutcomes(answer, codes, sendable.map((i) => keys[i]!));
    sendable.forEach((i, n) => (outcomes[i] = answered[n]));
    return { kind: 'records', outcomes: outcomes as AuthorityOutcome[] };
  }

  return {
    submitMany,
    async submit(record, ctx) {
      // One record is a request of one: the same client, so single and batched sends agree.
      const out = await submitMany([record], ctx);
      return out.kind === 'request' ? out.outcome : out.outcomes[0]!;
    },
  };
}
