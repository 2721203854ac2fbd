/**
 * A fake Agenzia delle Entrate (AdE) for the Italian Documento Commerciale channel, on top
 * of the fake authority (real HTTPS on 127.0.0.1, its own certificate, a TLS client
 * certificate required: HTTP 403 without one).
 *
 * A router: each route module handles one method and path, so more AdE services can be
 * added beside the daily takings (`startFakeAde({ routes: [corrispettiviRoute(), …] })`).
 * Router-wide switches simulate an outage: `reset` (the connection is cut without an
 * answer) or `unavailable` (HTTP 503, an HTML page); unknown paths get 404.
 *
 * `corrispettiviRoute()`: `POST /v1/dispositivi/corrispettivi/`, one DatiCorrispettivi per request:
 * - validates it against CorrispettiviTypes_v1.0.xsd (xmllint, catalog): invalid → Errore 00000;
 * - verifies its enveloped signature with xmlsec1 and requires the signing certificate to
 *   be the TLS client certificate (the register's seal): otherwise Errore 99999;
 * - a register (IdDispositivo) and day (DataOraRilevazione's date) already accepted: the
 *   original IdOperazione again, without errors (a duplicate is not a second day);
 * - else a fresh IdOperazione;
 * - programmable: `setMode('reject-00200' | 'reject-00000' | 'rate-limit' | 'server-error' |
 *   'forbidden')` answers that way until `setMode('normal')` (rate-limit: HTTP 429 with
 *   Retry-After; server-error: HTTP 500; forbidden: HTTP 403).
 * Answers are `EsitoOperazione` (CorrispettiviMessaggiTypes_v1.0.xsd) with a ds:Signature
 * of the right shape whose values are not a real signature (the client does not verify
 * AdE's signature).
 *
 * Independent of the code under test: its own parsing (fast-xml-parser) and checks.
 */
import { XMLParser } from 'fast-xml-parser';
import { startFakeAuthority, type FakeAuthority, type FakeRequest, type FakeResponse } from './fake-authority.ts';
import { HAVE_SCHEMAS, xmlsecVerify, xsdValidate } from './xml-tools.ts';

export const CORRISPETTIVI_XSD = 'it/corrispettivi/CorrispettiviTypes_v1.0.xsd';
export const MESSAGGI_XSD = 'it/corrispettivi/CorrispettiviMessaggiTypes_v1.0.xsd';
const NS_MESSAGGI = 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/corrispettivi/v1.0';
const NS_DS = 'http://www.w3.org/2000/09/xmldsig#';

export interface FakeAdeRoute {
  method: string;
  /** The exact path, or a pattern for paths that carry an id (`…/esiti/{IdOperazione}`). */
  path: string | RegExp;
  handle(req: FakeRequest): FakeResponse | Promise<FakeResponse>;
}

export type FakeAdeOutage = 'reset' | 'unavailable' | null;

export interface FakeAde {
  url: string;
  caPem: string;
  requests: FakeRequest[];
  setOutage(mode: FakeAdeOutage): void;
  close(): Promise<void>;
}

export async function startFakeAde(opts: { routes?: readonly FakeAdeRoute[] } = {}): Promise<FakeAde> {
  const routes = opts.routes ?? [];
  let outage: FakeAdeOutage = null;
  const fake: FakeAuthority = await startFakeAuthority(async (req) => {
    if (outage === 'reset') throw Object.assign(new Error('connection reset'), { resetConnection: true });
    if (outage === 'unavailable') return { status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body>Servizio non disponibile</body></html>' };
    const path = req.path.split('?')[0];
    const route = routes.find((r) => r.method === req.method && (typeof r.path === 'string' ? r.path === path : r.path.test(path!)));
    if (!route) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
    return route.handle(req);
  });
  return {
    url: fake.url,
    caPem: fake.caPem,
    requests: fake.requests,
    setOutage: (m) => {
      outage = m;
    },
    close: () => fake.close(),
  };
}

// ---- /v1/dispositivi/corrispettivi/ --------------------------------------------------------------------

export type CorrispettiviMode = 'normal' | 'reject-00000' | 'reject-00200' | 'rate-limit' | 'server-error' | 'forbidden';

export interface ReceivedCorrispettivi {
  xml: string;
  /** Parsed (namespace prefixes removed). */
  doc: Record<string, any>;
  /** IdDispositivo + day. */
  key: string;
  schemaValid: boolean;
  schemaOutput: string;
  signatureValid: boolean;
  signatureOutput: string;
  /** The signing certificate is the TLS client certificate. */
  signedByCaller: boolean;
  /** What the fake answered: an IdOperazione and its error code, if any, or an HTTP status. */
  answer: { idOperazione?: string; errore?: string; httpStatus: number; duplicate?: boolean };
}

export interface CorrispettiviRoute extends FakeAdeRoute {
  received: ReceivedCorrispettivi[];
  /** Register + day → IdOperazione of the accepted file. */
  accepted: Map<string, string>;
  setMode(mode: CorrispettiviMode): void;
  reset(): void;
}

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: false, parseTagValue: false, trimValues: true });

const FAKE_SIGNATURE =
  `<ds:Signature xmlns:ds="${NS_DS}"><ds:SignedInfo>` +
  '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>' +
  '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>' +
  '<ds:Reference URI=""><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue>ZmFrZQ==</ds:DigestValue></ds:Reference>' +
  '</ds:SignedInfo><ds:SignatureValue>ZmFrZQ==</ds:SignatureValue></ds:Signature>';

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function esitoOperazione(idOperazione: string, errore?: { codice: string; descrizione: string }): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<ns2:EsitoOperazione xmlns:ns2="${NS_MESSAGGI}" versione="1.0">` +
    `<IdOperazione>${idOperazione}</IdOperazione>` +
    (errore ? `<Errori><Errore><Codice>${errore.codice}</Codice><Descrizione>${xmlEscape(errore.descrizione)}</Descrizione></Errore></Errori>` : '') +
    FAKE_SIGNATURE +
    '</ns2:EsitoOperazione>'
  );
}

const toPem = (raw: Buffer): string => `-----BEGIN CERTIFICATE-----\n${raw.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;

export function corrispettiviRoute(): CorrispettiviRoute {
  let mode: CorrispettiviMode = 'normal';
  let next = 0;
  const received: ReceivedCorrispettivi[] = [];
  const accepted = new Map<string, string>();
  const newIdOperazione = () => `${Date.now()}${String(++next).padStart(6, '0')}`;
  const xml = (status: number, body: string): FakeResponse => ({ status, headers: { 'content-type': 'application/xml; charset=utf-8' }, body });

  return {
    method: 'POST',
    path: '/v1/dispositivi/corrispettivi/',
    received,
    accepted,
    setMode: (m) => {
      mode = m;
    },
    reset: () => {
      mode = 'normal';
      received.length = 0;
      accepted.clear();
    },
    handle(req) {
      const body = req.body.toString('utf8');
      let doc: Record<string, any> = {};
      try {
        doc = (parser.parse(body) as Record<string, any>).DatiCorrispettivi ?? {};
      } catch {
        doc = {};
      }
      const device = String(doc.Trasmissione?.Dispositivo?.IdDispositivo ?? '');
      const day = String(doc.DataOraRilevazione ?? '').slice(0, 10);
      const schema = HAVE_SCHEMAS ? xsdValidate(body, CORRISPETTIVI_XSD) : { ok: true, output: 'schemas absent: not validated' };
      const clientPem = req.clientCert?.raw ? toPem(req.clientCert.raw) : '';
      const signature = clientPem ? xmlsecVerify(body, { trustedCertPem: clientPem }) : { ok: false, output: 'no client certificate' };
      const embedded = /<ds:X509Certificate>([^<]+)<\/ds:X509Certificate>/.exec(body)?.[1];
      const signedByCaller = embedded !== undefined && req.clientCert?.raw !== undefined && Buffer.from(embedded, 'base64').equals(req.clientCert.raw);
      const entry: ReceivedCorrispettivi = {
        xml: body, doc, key: `${device}|${day}`, schemaValid: schema.ok, schemaOutput: schema.output,
        signatureValid: signature.ok, signatureOutput: signature.output, signedByCaller, answer: { httpStatus: 0 },
      };
      received.push(entry);
      const answer = (status: number, out: FakeResponse, a: Omit<ReceivedCorrispettivi['answer'], 'httpStatus'> = {}): FakeResponse => {
        entry.answer = { httpStatus: status, ...a };
        return out;
      };
      const reject = (codice: string, descrizione: string) => {
        const id = newIdOperazione();
        return answer(200, xml(200, esitoOperazione(id, { codice, descrizione })), { idOperazione: id, errore: codice });
      };

      if (mode === 'rate-limit') return answer(429, { status: 429, headers: { 'content-type': 'text/plain', 'retry-after': '120' }, body: 'too many requests' });
      if (mode === 'server-error') return answer(500, { status: 500, headers: { 'content-type': 'text/plain' }, body: 'internal error' });
      if (mode === 'forbidden') return answer(403, { status: 403, headers: { 'content-type': 'text/plain' }, body: 'certificato non autorizzato' });
      if (mode === 'reject-00000' || !schema.ok) return reject('00000', 'Il file non rispetta il formato previsto');
      if (!signature.ok || !signedByCaller) return reject('99999', 'Firma non integra');
      if (mode === 'reject-00200') return reject('00200', 'Il dispositivo non risulta in stato ATTIVATO');
      const original = accepted.get(entry.key);
      if (original !== undefined) return answer(200, xml(200, esitoOperazione(original)), { idOperazione: original, duplicate: true });
      const id = newIdOperazione();
      accepted.set(entry.key, id);
      return answer(200, xml(200, esitoOperazione(id)), { idOperazione: id });
    },
  };
}

/** The usual setup: a fake AdE serving the daily takings. */
export async function startFakeAdeCorrispettivi(): Promise<{ ade: FakeAde; corrispettivi: CorrispettiviRoute }> {
  const corrispettivi = corrispettiviRoute();
  return { ade: await startFakeAde({ routes: [corrispettivi] }), corrispettivi };
}

