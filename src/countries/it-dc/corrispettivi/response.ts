/**
 * Reads AdE's answer to a DatiCorrispettivi (CorrispettiviMessaggiTypes_v1.0.xsd
 * `EsitoOperazione`: IdOperazione, optional Errori/Errore{Codice, Descrizione}, AdE's
 * ds:Signature) and the HTTP around it, and maps it to the spec's Documento Commerciale
 * codes (../codes.ts):
 * - no Errori: accepted, with AdE's IdOperazione (a file AdE already holds, the same
 *   register and day sent again, is answered with the original IdOperazione: accepted);
 * - Errore 00000 (the file does not match the schema): 0100, not retried;
 * - any other Errore (99999 signature not intact, 00200 device not active, 00201…,
 *   FORMATS.md §5): 0200, not retried;
 * - HTTP 429: 0429, retried (after Retry-After when given);
 * - HTTP 403, or the TLS handshake refused (client certificate): 0403, not retried;
 * - HTTP 5xx, an unreadable answer, a timeout or no connection: 0500, retried.
 * AdE's own code and description are kept beside ours (`authority_code`, `authority_message`).
 * AdE's signature on the answer is not verified (its certificate is not in our store).
 */
import { XMLParser } from 'fast-xml-parser';
import type { AuthorityResponse } from '../../shared/authority-http.ts';
import { DC_CODES } from '../codes.ts';

export type CorrispettiviAnswer =
  | { kind: 'accepted'; idOperazione: string; httpStatus: number }
  | { kind: 'rejected' | 'retry'; code: '0100' | '0200' | '0403' | '0429' | '0500'; message: string;
      authorityCode: string | null; authorityMessage: string | null; httpStatus: number | null; retryAfterSeconds?: number | undefined;
      idOperazione?: string | undefined };

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

function fail(kind: 'rejected' | 'retry', code: '0100' | '0200' | '0403' | '0429' | '0500', detail: {
  authorityCode?: string | null; authorityMessage?: string | null; httpStatus?: number | null; retryAfterSeconds?: number; idOperazione?: string;
}): CorrispettiviAnswer {
  const raw = detail.authorityCode ? ` (AdE ${detail.authorityCode}${detail.authorityMessage ? `: ${detail.authorityMessage}` : ''})` : '';
  return {
    kind, code, message: `${DC_CODES[code]!.message}${raw}`,
    authorityCode: detail.authorityCode ?? null, authorityMessage: detail.authorityMessage ?? null, httpStatus: detail.httpStatus ?? null,
    ...(detail.retryAfterSeconds !== undefined ? { retryAfterSeconds: detail.retryAfterSeconds } : {}),
    ...(detail.idOperazione !== undefined ? { idOperazione: detail.idOperazione } : {}),
  };
}

/** `Retry-After` in seconds (delta form; an HTTP date is read too). */
export function retryAfterSeconds(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/** The EsitoOperazione of a body, or undefined when it is not one. */
export function readEsito(body: string): { idOperazione: string; errori: Array<{ codice: string; descrizione: string }> } | undefined {
  let doc: Obj;
  try {
    doc = parser.parse(body) as Obj;
  } catch {
    return undefined;
  }
  const esito = doc.EsitoOperazione;
  if (!isObj(esito)) return undefined;
  const idOperazione = text(esito.IdOperazione);
  if (idOperazione === undefined || idOperazione === '') return undefined;
  const errori = isObj(esito.Errori) ? [esito.Errori.Errore].flat().filter(isObj) : [];
  return { idOperazione, errori: errori.map((e) => ({ codice: text(e.Codice) ?? '', descrizione: text(e.Descrizione) ?? '' })) };
}

export function interpretAnswer(res: AuthorityResponse, now: Date): CorrispettiviAnswer {
  const body = res.body.toString('utf8');
  if (res.status === 429) {
    return fail('retry', '0429', { httpStatus: 429, authorityCode: 'HTTP 429', retryAfterSeconds: retryAfterSeconds(res.headers['retry-after'], now) });
  }
  if (res.status === 403) return fail('rejected', '0403', { httpStatus: 403, authorityCode: 'HTTP 403', authorityMessage: body.slice(0, 500) || null });
  const esito = res.status >= 200 && res.status < 300 ? readEsito(body) : undefined;
  if (esito === undefined) {
    if (res.status >= 500 || (res.status >= 200 && res.status < 300)) {
      return fail('retry', '0500', { httpStatus: res.status, authorityCode: `HTTP ${res.status}`, authorityMessage: 'no EsitoOperazione in the answer' });
    }
    // Another 4xx without an EsitoOperazione: the request itself was refused.
    return fail('rejected', '0100', { httpStatus: res.status, authorityCode: `HTTP ${res.status}`, authorityMessage: body.slice(0, 500) || null });
  }
  const first = esito.errori[0];
  if (first === undefined) return { kind: 'accepted', idOperazione: esito.idOperazione, httpStatus: res.status };
  const all = esito.errori.map((e) => `${e.codice}: ${e.descrizione}`).join('; ');
  return fail('rejected', first.codice === '00000' ? '0100' : '0200', {
    httpStatus: res.status, authorityCode: first.codice, authorityMessage: all, idOperazione: esito.idOperazione,
  });
}
