/**
 * The SII protocol client (`submit` in `authority` mode): one stored record in a SOAP
 * 1.1 message, POSTed with mutual TLS (the holder's certificate, ctx.clientKey) to the
 * issued-invoice port `SiiFactFEV1SOAP` (FORMATS.md §3, SuministroFactEmitidas.wsdl):
 *
 * - test: https://prewww1.aeat.es/wlpl/SSII-FACT/ws/fe/SiiFactFEV1SOAP
 * - live: https://www1.agenciatributaria.gob.es/wlpl/SSII-FACT/ws/fe/SiiFactFEV1SOAP
 *
 * (The `www10`/`prewww10` hosts are for seal certificates; an uploaded personal or
 * representative certificate uses www1/prewww1.) `ctx.authorityBaseUrl` replaces scheme
 * and host, keeping the path, so tests reach a fake AEAT on 127.0.0.1.
 *
 * HTTP: AEAT answers SOAP faults with HTTP 500, so the body is read whatever the status;
 * a 5xx without a parsable SOAP answer is a TransportError (retried), a refusal of the
 * connection (403, no or unknown client certificate) an `auth` rejection.
 *
 * A duplicate answer without a CSV (3000 on an alta, 3001 on a baja: the CSV is optional
 * there) is followed by ONE consultation of the invoice (consulta.ts), over the same
 * connection and certificate, within what is left of the attempt's time: the CSV it gives
 * becomes the fiscal id. If it fails (no answer, SOAP fault, unreadable) or gives no CSV
 * that belongs to this record, the duplicate stays a success without fiscal id and says
 * why in a warning; it is never retried (the next attempt would send the record again).
 */
import { TransportError, type AuthorityOutcome, type StoredRecord, type SubmitContext } from '../types.ts';
import { authorityPost } from '../shared/authority-http.ts';
import { MISSING_TAX_ID } from '../shared/issuer-tax-id.ts';
import { SII_CODES } from './codes.ts';
import { SiiResponseError, outcomeOf, parseSiiResponse } from './response.ts';
import { bajaBody, operationOf, soapEnvelope, suministroBody, titularFor } from './soap.ts';
import { consultaBody, csvFromConsulta, invoiceOfRecord, parseConsultaResponse, type ConsultaRecord } from './consulta.ts';

export const SII_PATH = '/wlpl/SSII-FACT/ws/fe/SiiFactFEV1SOAP';
export const SII_HOSTS = {
  test: 'https://prewww1.aeat.es',
  live: 'https://www1.agenciatributaria.gob.es',
} as const;

/** The endpoint for the context: the environment's host, or the configured base URL's origin. */
export function siiEndpoint(ctx: Pick<SubmitContext, 'environment' | 'authorityBaseUrl'>): string {
  const origin = ctx.authorityBaseUrl ? new URL(ctx.authorityBaseUrl).origin : SII_HOSTS[ctx.environment];
  return `${origin}${SII_PATH}`;
}

/**
 * A record goes to the operation its document is for: a baja (a cancellation, or a void:
 * build.ts) to AnulacionLRFacturasEmitidas, an alta to SuministroLRFacturasEmitidas.
 */
const expectedOperation = (record: StoredRecord): 'alta' | 'baja' => (record.kind === 'cancellation' || record.tx.type === 'void' ? 'baja' : 'alta');

/**
 * The SOAP message that carries a stored record: an alta as a new record (A0), or, when the
 * core sends it as the correction of one AEAT accepted, as a modification (A1: correction.ts).
 */
export function siiRequestOf(record: StoredRecord, ctx: Pick<SubmitContext, 'location'>): string {
  // The holder the invoice was issued by, not the location as it stands now (soap.ts).
  const titular = titularFor(record, ctx.location);
  if (expectedOperation(record) === 'baja') return soapEnvelope(bajaBody(titular, [record.body]));
  return soapEnvelope(suministroBody(titular, [record.body], record.correction === true ? 'A1' : 'A0'));
}

const SOAP_HEADERS = { 'content-type': 'text/xml; charset=utf-8', soapaction: '""', accept: 'text/xml' } as const;

export async function submitToAeat(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  const started = performance.now();
  // Only a real SII record can go to AEAT (not a placeholder built by an older version).
  const expected = expectedOperation(record);
  if (record.contentType !== 'application/xml' || operationOf(record.body) !== expected) {
    const message = `the stored record is not an SII ${expected === 'alta' ? 'RegistroLRFacturasEmitidas' : 'RegistroLRBajaExpedidas'} and cannot be sent to AEAT`;
    return { kind: 'rejected', code: 'NOT_SII_RECORD', message, response: { contentType: record.contentType } };
  }
  // Live: never the placeholder holder 000000000 (soap.ts titularFor, build.ts), a false
  // declaration. Creation refuses such transactions (metadata.ts); this covers older ones.
  if (ctx.environment === 'live' && titularFor(record, ctx.location).nif === MISSING_TAX_ID) {
    return { kind: 'rejected', code: 'MISSING_ISSUER_NIF', message: SII_CODES.MISSING_ISSUER_NIF!.message, response: {} };
  }
  const res = await authorityPost({
    url: siiEndpoint(ctx),
    headers: { ...SOAP_HEADERS },
    body: siiRequestOf(record, ctx),
    clientKey: ctx.clientKey,
    ca: ctx.authorityCa,
    timeoutMs: ctx.timeoutMs,
  });

  let answer;
  try {
    answer = parseSiiResponse(res.body);
  } catch (err) {
    if (!(err instanceof SiiResponseError)) throw err;
    return unparsable(res.status, res.body, err);
  }
  const outcome = outcomeOf(answer, SII_CODES);
  if (outcome.kind === 'duplicate' && outcome.fiscalId === undefined) return withConsultedCsv(outcome, record, expected, ctx, started);
  return outcome;
}

type Duplicate = Extract<AuthorityOutcome, { kind: 'duplicate' }>;

/**
 * The consultation's own time: what is left of the attempt (the core bounds the whole
 * `submit` by `ctx.timeoutMs`) less a margin, so that a silent consultation ends here, as
 * a warning, before the core's bound turns the whole attempt into a transport fault (and
 * a retry that sends the record again). Below the minimum it is not tried.
 */
const consultaMarginMs = (timeoutMs: number): number => Math.min(1000, Math.floor(timeoutMs / 10));
const MIN_CONSULTA_MS = 100;

type Consulted =
  | { kind: 'csv'; csv: string; summary: Record<string, unknown> }
  | { kind: 'none'; reason: string; summary: Record<string, unknown> };

/** A duplicate answer without a CSV, completed by the consultation (see the header). */
async function withConsultedCsv(dup: Duplicate, record: StoredRecord, operation: 'alta' | 'baja', ctx: SubmitContext, started: number): Promise<AuthorityOutcome> {
  const consulted = await consult(record, operation, ctx, started);
  const response = { ...dup.response, Consulta: consulted.summary };
  if (consulted.kind === 'csv') return { ...dup, fiscalId: consulted.csv, response };
  const code = typeof dup.response.CodigoErrorRegistro === 'string' ? dup.response.CodigoErrorRegistro : operation === 'alta' ? '3000' : '3001';
  const what = operation === 'alta' ? 'this invoice' : 'the annulment of this invoice';
  const warning = `${code}: AEAT already holds ${what}, and its answer gives no CSV. ${consulted.reason}. This answer sets no fiscal_id.`;
  return { ...dup, response, warnings: [...(dup.warnings ?? []), warning] };
}

const summaryOf = (resultado: string | undefined, r: ConsultaRecord | undefined): Record<string, unknown> => ({
  ResultadoConsulta: resultado ?? null,
  CSV: r?.csv ?? null,
  TimestampPresentacion: r?.presentedAt ?? null,
  EstadoRegistro: r?.state ?? null,
  TimestampUltimaModificacion: r?.lastModifiedAt ?? null,
});

async function consult(record: StoredRecord, operation: 'alta' | 'baja', ctx: SubmitContext, started: number): Promise<Consulted> {
  const unread = (detail: string): Consulted => ({
    kind: 'none',
    reason: `The CSV could not be read from AEAT's consultation service (ConsultaLRFacturasEmitidas): ${detail}`,
    summary: { error: detail },
  });
  const invoice = invoiceOfRecord(record.body);
  if (invoice === undefined) return unread('the stored record names no invoice to look up');
  const left = Math.floor(ctx.timeoutMs - (performance.now() - started) - consultaMarginMs(ctx.timeoutMs));
  if (left < MIN_CONSULTA_MS) return unread(`no time was left within the attempt's ${ctx.timeoutMs / 1000} s`);
  let res;
  try {
    res = await authorityPost({
      url: siiEndpoint(ctx),
      headers: { ...SOAP_HEADERS },
      body: soapEnvelope(consultaBody(titularFor(record, ctx.location), invoice)),
      clientKey: ctx.clientKey,
      ca: ctx.authorityCa,
      timeoutMs: left,
    });
  } catch (err) {
    if (err instanceof TransportError) return unread(err.message);
    throw err;
  }
  let answer;
  try {
    answer = parseConsultaResponse(res.body);
  } catch (err) {
    if (!(err instanceof SiiResponseError)) throw err;
    return unread(`HTTP ${res.status} without a readable answer (${err.message})`);
  }
  if (answer.kind === 'fault') return unread(`SOAP fault ${answer.faultcode}: ${answer.faultstring}`);
  const found = csvFromConsulta(operation, answer, invoice);
  const summary = summaryOf(answer.resultado, found.record);
  return found.kind === 'csv' ? { kind: 'csv', csv: found.csv, summary } : { kind: 'none', reason: found.reason, summary };
}

/** An HTTP answer that is not a SOAP answer of the service. */
function unparsable(status: number, body: Buffer, err: SiiResponseError): AuthorityOutcome {
  const snippet = body.toString('utf8').slice(0, 200);
  const response = { http_status: status, body: snippet };
  if (status === 401 || status === 403) {
    return { kind: 'rejected', code: 'HTTP_403', message: SII_CODES.HTTP_403!.message, response };
  }
  if (status === 408 || status === 429) {
    return { kind: 'retry_later', code: `HTTP_${status}`, message: `AEAT is busy (HTTP ${status})`, response };
  }
  // 5xx, or a 2xx/other 4xx whose body is not the service's answer: nothing tells whether
  // the record was registered, so it is retried (a registered one comes back as 3000).
  throw new TransportError(
    status >= 500 ? 'http_5xx' : 'bad_response',
    `AEAT answered HTTP ${status} without a readable SOAP answer (${err.message})`,
    { cause: err },
  );
}
