/**
 * What the Agenzia delle Entrate answers about a commercial document, read the same way
 * whether the answer came from its server (client.ts) or from the sandbox stub
 * (sandbox.ts writes the same documents): an HTTP status and an XML body.
 *
 * - Sending a document answers an `EsitoOperazione` (CorrispettiviMessaggiTypes_v1.0.xsd):
 *   `IdOperazione`, and `Errori` when the file was refused at once. Without errors the
 *   document is taken but not judged yet: `sent`, its result polled (spec Statuses:
 *   "`pending` (Italy DC) | authority result polling").
 * - The result is a `DocCommercialiLotteriaEsito` (DocCommercialiLotteriaEsitoTypes_v1.0.xsd):
 *   `Esito` AC (acquired), SE (acquired with remarks: success with warnings) or SC
 *   (refused, with `ListaErrori`). Until it is ready the server answers 404 (or 202).
 *
 * Codes: the spec's table (codes.ts) is what the API reports: 0100 non-compliant file,
 * 0200 validation error, 0403 not authorised, 0429 rate limit, 0500 server error. AdE's
 * own five-digit codes (FORMATS.md §5, from its RT test environment) are kept in the
 * response (`ade_errors`) and mapped: 00000 (not the schema) and 99999 (signature not
 * intact) are a non-compliant file; 00302 (service temporarily unavailable) is a server
 * error, retried; 00306 (duplicate file) means AdE already holds the document: success;
 * every other code is a validation error.
 */
import { XMLParser } from 'fast-xml-parser';
import type { AuthorityOutcome } from '../types.ts';
import { DC_CODES } from './codes.ts';

export interface AdeAnswer {
  status: number;
  body: string;
}

export interface AdeError {
  codice: string;
  descrizione: string;
}

/** Seconds before asking for a document's result (AdE gives none; its RT answers come within a minute). */
export const DC_POLL_AFTER_SECONDS = 60;

/**
 * The polling horizon: AdE may take a document's result late (a backlog, an outage on its
 * side) and accept it all the same, so a result that does not come is asked for again for
 * 48 hours before the document is given up (`result_not_available`, `failed_permanent`, a
 * dead letter; the operator's `replay-dead` asks again after that). The waits: every 60 s
 * for the first 10 polls (the usual answer comes within a minute), then doubling from
 * 2 minutes up to one hour, then hourly (`dcPollAfterSeconds`). `DC_POLL_ATTEMPTS` polls
 * (63) reach the horizon: the last one about 48 h 13 min after the send.
 */
export const DC_POLL_HORIZON_SECONDS = 48 * 3600;
const DC_POLL_STEADY_POLLS = 10;
const DC_POLL_MAX_WAIT_SECONDS = 3600;

/** Seconds to wait after poll number `attempt` (1-based) found no result yet. */
export function dcPollAfterSeconds(attempt: number): number {
  if (attempt <= DC_POLL_STEADY_POLLS) return DC_POLL_AFTER_SECONDS;
  return Math.min(DC_POLL_MAX_WAIT_SECONDS, DC_POLL_AFTER_SECONDS * 2 ** (attempt - DC_POLL_STEADY_POLLS));
}

/** Polls until the horizon: the first `DC_POLL_AFTER_SECONDS` after the send, then the waits above. */
export const DC_POLL_ATTEMPTS: number = (() => {
  let at = DC_POLL_AFTER_SECONDS;
  let polls = 1;
  while (at < DC_POLL_HORIZON_SECONDS) at += dcPollAfterSeconds(polls++);
  return polls;
})();

const DUPLICATE = '00306';
const TEMPORARILY_UNAVAILABLE = '00302';
const NON_COMPLIANT = new Set(['00000', '99999']);

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');
const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

function parse(body: string): Obj | null {
  try {
    const doc = parser.parse(body) as unknown;
    return isObj(doc) ? doc : null;
  } catch {
    return null;
  }
}

const errorsOf = (container: unknown): AdeError[] =>
  list(isObj(container) ? container.Errore : undefined).flatMap((e) =>
    isObj(e) ? [{ codice: text(e.Codice), descrizione: text(e.Descrizione) }] : [],
  );

/** The spec code an AdE error code stands for. */
export function specCodeOf(adeCode: string): string {
  if (DC_CODES[adeCode]) return adeCode;
  if (NON_COMPLIANT.has(adeCode)) return '0100';
  if (adeCode === TEMPORARILY_UNAVAILABLE) return '0500';
  return '0200';
}

const describe = (errors: AdeError[]) => errors.map((e) => `${e.codice} ${e.descrizione}`.trim()).join('; ');

/** A refusal carrying AdE's errors: the first error's spec code decides (a retriable one is retried). */
function refused(errors: AdeError[], response: Obj): AuthorityOutcome {
  if (errors.some((e) => e.codice === DUPLICATE)) return { kind: 'duplicate', response: { ...response, duplicate: true } };
  const code = specCodeOf(errors[0]!.codice);
  const message = `${DC_CODES[code]!.message} (AdE: ${describe(errors)})`;
  return DC_CODES[code]!.retriable ? { kind: 'retry_later', code, message, response } : { kind: 'rejected', code, message, response };
}

/** HTTP answers without a readable document: the spec's transport codes, or a transport fault. */
function httpOutcome(answer: AdeAnswer, what: string): AuthorityOutcome | null {
  const response = { http_status: answer.status, body: answer.body.slice(0, 200) };
  if (answer.status === 401 || answer.status === 403) return { kind: 'rejected', code: '0403', message: DC_CODES['0403']!.message, response };
  if (answer.status === 429) return { kind: 'retry_later', code: '0429', message: DC_CODES['0429']!.message, response };
  if (answer.status >= 500) return { kind: 'retry_later', code: '0500', message: `${DC_CODES['0500']!.message} (HTTP ${answer.status} on ${what})`, response };
  return null;
}

/** The answer to sending a document. */
export function sendOutcome(answer: AdeAnswer): AuthorityOutcome {
  const doc = parse(answer.body);
  const esito = doc?.EsitoOperazione;
  if (answer.status < 500 && isObj(esito)) {
    const id = text(esito.IdOperazione);
    const errors = errorsOf(esito.Errori);
    const response: Obj = { http_status: answer.status, IdOperazione: id, ...(errors.length ? { ade_errors: errors } : {}) };
    if (errors.length) return refused(errors, response);
    if (id !== '' && answer.status < 300) {
      return { kind: 'sent', reference: id, upstreamId: id, pollAfterSeconds: DC_POLL_AFTER_SECONDS, response };
    }
  }
  const http = httpOutcome(answer, 'sending');
  if (http) return http;
  // A 2xx/4xx we cannot read: whether AdE took the document is unknown, so it is a
  // non-compliant exchange for 4xx (not retried unchanged) and a server fault otherwise.
  if (answer.status >= 400) return { kind: 'rejected', code: '0100', message: `${DC_CODES['0100']!.message} (HTTP ${answer.status})`, response: { http_status: answer.status, body: answer.body.slice(0, 200) } };
  return { kind: 'retry_later', code: '0500', message: `${DC_CODES['0500']!.message} (unreadable answer)`, response: { http_status: answer.status, body: answer.body.slice(0, 200) } };
}

/** The answer to asking for a document's result (`operationId`: the IdOperazione it was sent under). */
export function resultOutcome(answer: AdeAnswer, operationId: string): AuthorityOutcome {
  const notReady: AuthorityOutcome = {
    kind: 'sent', reference: operationId, upstreamId: operationId, pollAfterSeconds: DC_POLL_AFTER_SECONDS,
    response: { http_status: answer.status, IdOperazione: operationId, ready: false },
  };
  if (answer.status === 404 || answer.status === 202) return notReady;
  const doc = parse(answer.body);
  const esito = doc?.DocCommercialiLotteriaEsito;
  if (answer.status < 300 && isObj(esito)) {
    const outcome = text(esito.Esito);
    const errors = errorsOf(esito.ListaErrori);
    const remarks = list(isObj(esito.SegnalazioniDocComm) ? esito.SegnalazioniDocComm.Segnalazione : undefined).flatMap((s) =>
      isObj(s) ? errorsOf(s.Errori) : [],
    );
    const response: Obj = {
      http_status: answer.status, IdOperazione: text(esito.IdOperazione) || operationId, Esito: outcome, DataOra: text(esito.DataOra),
      ...(errors.length ? { ade_errors: errors } : {}), ...(remarks.length ? { ade_remarks: remarks } : {}),
    };
    if (outcome === 'AC' || outcome === 'SE') {
      return {
        kind: 'accepted', upstreamId: operationId, response,
        ...(remarks.length ? { warnings: remarks.map((r) => `${r.codice} ${r.descrizione}`.trim()) } : {}),
      };
    }
    if (outcome === 'SC') {
      return refused(errors.length ? errors : [{ codice: '00000', descrizione: 'refused without a reason' }], response);
    }
  }
  return httpOutcome(answer, 'the result') ?? notReady;
}
