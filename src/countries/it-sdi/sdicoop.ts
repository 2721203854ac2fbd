/**
 * The SdICoop client (`submit` in `authority` mode): the FatturaPA file in a SOAP 1.1
 * `fileSdIAccoglienza` {NomeFile, File} message, operation `RiceviFile` of the
 * `SdIRiceviFile` service (SdIRiceviFile_v1.0.wsdl, TrasmissioneTypes_v1.0.xsd), POSTed
 * with mutual TLS (the location's certificate, ctx.clientKey, through
 * shared/authority-http.ts):
 *
 * - test: https://testservizi.fatturapa.it/ricevi_file
 * - live: https://servizi.fatturapa.it/ricevi_file (the WSDL's soap:address, http there)
 *
 * `ctx.authorityBaseUrl` (AUTHORITY_URL_IT_SDI_TEST/LIVE) replaces scheme and host,
 * keeping the path, so tests reach a fake SdI on 127.0.0.1.
 *
 * `File` is xsd:base64Binary with xmime:expectedContentTypes: the real service takes it
 * as an MTOM/XOP attachment; here it travels as plain inline base64 in the SOAP body,
 * which is the same infoset (an MTOM endpoint accepts it). docs/decisions.md
 * "SdICoop client".
 *
 * The answer `rispostaSdIRiceviFile` {IdentificativoSdI, DataOraRicezione, Errore?}:
 * without `Errore`, SdI took the file: `sent`, the outcome (RC, NS, MC…) comes later as
 * a notification (notifications.ts). `Errore` EI01 (empty file) and EI03 (user not
 * enabled) are rejections; EI02 (service unavailable) is retried. A SOAP Fault of the
 * client kind is a rejection (SOAP_FAULT); HTTP 5xx without an answer, a server fault
 * or no answer at all are TransportErrors (retried).
 */
import { XMLParser } from 'fast-xml-parser';
import { TransportError, type AuthorityOutcome, type StoredRecord, type SubmitContext } from '../types.ts';
import { authorityPost } from '../shared/authority-http.ts';
import { SDI_CODES } from './codes.ts';

export const SDICOOP_PATH = '/ricevi_file';
export const SDICOOP_HOSTS = {
  test: 'https://testservizi.fatturapa.it',
  live: 'https://servizi.fatturapa.it',
} as const;
export const SDICOOP_SOAP_ACTION = 'http://www.fatturapa.it/SdIRiceviFile/RiceviFile';
const NS_TYPES = 'http://www.fatturapa.gov.it/sdi/ws/trasmissione/v1.0/types';
const NS_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';

/** The endpoint for the context: the environment's host, or the configured base URL's origin. */
export function sdicoopEndpoint(ctx: Pick<SubmitContext, 'environment' | 'authorityBaseUrl'>): string {
  const origin = ctx.authorityBaseUrl ? new URL(ctx.authorityBaseUrl).origin : SDICOOP_HOSTS[ctx.environment];
  return `${origin}${SDICOOP_PATH}`;
}

const NOME_FILE = /^[a-zA-Z0-9_.]{9,50}$/;

/** The SOAP message carrying one file (NomeFile: the stored record's file name). */
export function sdicoopRequestOf(nomeFile: string, file: string | Buffer): string {
  const b64 = Buffer.from(file).toString('base64');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<soapenv:Envelope xmlns:soapenv="${NS_ENV}" xmlns:typ="${NS_TYPES}">` +
    '<soapenv:Header/><soapenv:Body><typ:fileSdIAccoglienza>' +
    `<NomeFile>${nomeFile}</NomeFile><File>${b64}</File>` +
    '</typ:fileSdIAccoglienza></soapenv:Body></soapenv:Envelope>'
  );
}

/** What SdI answered, read from the SOAP body. */
export type SdiCoopAnswer =
  | { kind: 'risposta'; IdentificativoSdI: string; DataOraRicezione: string; Errore?: string }
  | { kind: 'fault'; faultcode: string; faultstring: string };

export class SdiCoopResponseError extends Error {}

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Reads a SOAP answer of SdIRiceviFile; throws SdiCoopResponseError when it is none. */
export function parseSdiCoopResponse(body: Buffer | string): SdiCoopAnswer {
  let doc: Obj;
  try {
    doc = parser.parse(Buffer.from(body).toString('utf8')) as Obj;
  } catch (err) {
    throw new SdiCoopResponseError(`not XML: ${(err as Error).message}`);
  }
  const env = doc.Envelope;
  const soapBody = isObj(env) ? env.Body : undefined;
  if (!isObj(soapBody)) throw new SdiCoopResponseError('no SOAP Envelope/Body');
  if (isObj(soapBody.Fault)) {
    return { kind: 'fault', faultcode: text(soapBody.Fault.faultcode), faultstring: text(soapBody.Fault.faultstring) };
  }
  const r = soapBody.rispostaSdIRiceviFile;
  if (!isObj(r)) throw new SdiCoopResponseError('no rispostaSdIRiceviFile in the SOAP body');
  const id = text(r.IdentificativoSdI);
  if (!/^[0-9]{1,12}$/.test(id)) throw new SdiCoopResponseError(`IdentificativoSdI "${id}" is not a number of up to 12 digits`);
  const errore = text(r.Errore);
  return { kind: 'risposta', IdentificativoSdI: id, DataOraRicezione: text(r.DataOraRicezione), ...(errore ? { Errore: errore } : {}) };
}

/** The outcome of a parsed answer. */
export function sdiCoopOutcomeOf(answer: SdiCoopAnswer): AuthorityOutcome {
  if (answer.kind === 'fault') {
    const response = { faultcode: answer.faultcode, faultstring: answer.faultstring };
    if (/(^|:)Server$/i.test(answer.faultcode)) {
      throw new TransportError('http_5xx', `SdI answered a server SOAP fault: ${answer.faultstring}`);
    }
    return { kind: 'rejected', code: 'SOAP_FAULT', message: `${SDI_CODES.SOAP_FAULT!.message} (SdI: ${answer.faultstring})`, response };
  }
  const response: Record<string, unknown> = {
    IdentificativoSdI: answer.IdentificativoSdI,
    DataOraRicezione: answer.DataOraRicezione,
    ...(answer.Errore ? { Errore: answer.Errore } : {}),
  };
  if (!answer.Errore) {
    return { kind: 'sent', reference: answer.IdentificativoSdI, upstreamId: answer.IdentificativoSdI, response };
  }
  const code = SDI_CODES[answer.Errore];
  const message = code?.message ?? `SdI refused the file (ErroreInvio ${answer.Errore}).`;
  if (code?.retriable) return { kind: 'retry_later', code: answer.Errore, message, response };
  return { kind: 'rejected', code: answer.Errore, message, response };
}

/** A FatturaPA file's root: the ordinary invoice (FPR12/FPA12) or the simplified one (FSM10, Schema_VFSM10.xsd). */
const FATTURA_ROOT = /<(\w+:)?FatturaElettronica(Semplificata)?[\s>]/;

export async function submitToSdi(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  const nomeFile = record.fiscalId ?? '';
  if (record.contentType !== 'application/xml' || !NOME_FILE.test(nomeFile) || !FATTURA_ROOT.test(record.body)) {
    return {
      kind: 'rejected', code: 'NOT_FATTURAPA_FILE', message: SDI_CODES.NOT_FATTURAPA_FILE!.message,
      response: { contentType: record.contentType },
    };
  }
  const res = await authorityPost({
    url: sdicoopEndpoint(ctx),
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${SDICOOP_SOAP_ACTION}"`, accept: 'text/xml' },
    body: sdicoopRequestOf(nomeFile, record.body),
    clientKey: ctx.clientKey,
    ca: ctx.authorityCa,
    timeoutMs: ctx.timeoutMs,
  });
  let answer: SdiCoopAnswer;
  try {
    answer = parseSdiCoopResponse(res.body);
  } catch (err) {
    if (!(err instanceof SdiCoopResponseError)) throw err;
    const response = { http_status: res.status, body: res.body.toString('utf8').slice(0, 200) };
    if (res.status === 401 || res.status === 403) {
      return { kind: 'rejected', code: 'HTTP_403', message: SDI_CODES.HTTP_403!.message, response };
    }
    if (res.status === 408 || res.status === 429) {
      return { kind: 'retry_later', code: `HTTP_${res.status}`, message: `SdI is busy (HTTP ${res.status})`, response };
    }
    // Whether SdI took the file is unknown: retried (a duplicate comes back as NS 00002/00404).
    throw new TransportError(res.status >= 500 ? 'http_5xx' : 'bad_response',
      `SdI answered HTTP ${res.status} without a readable SOAP answer (${err.message})`, { cause: err });
  }
  const outcome = sdiCoopOutcomeOf(answer);
  // Sent on a retry: an earlier attempt may have been taken by SdI with its answer lost, so
  // SdI may hold a copy of this file; a duplicate NS (00002/00404) is then about our own
  // copy (notifications.ts isDuplicateNotice).
  if (outcome.kind === 'sent' && ctx.attempt > 1) outcome.response.resend = true;
  return outcome;
}
