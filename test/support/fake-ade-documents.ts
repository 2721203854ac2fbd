/**
 * The fake Agenzia delle Entrate's routes for single commercial documents
 * (`documentsRoutes()`, mounted on the fake AdE router of ./fake-ade.ts beside the daily
 * takings; `startFakeAdeDocuments()` starts a fake AdE with them alone):
 *
 * - `POST /v1/dispositivi/documenti-commerciali`: the sealed `DocCommercialiLotteria`.
 *   Validated against the official XSD with xmllint (catalog) → error 00000 when not;
 *   its seal verified with xmlsec1 against the certificate it carries, which must be the
 *   TLS client certificate → 99999 when not; the same document twice → 00306 (duplicate).
 *   Otherwise an `EsitoOperazione` with a fresh IdOperazione: taken, not judged yet.
 * - `GET …/esiti/{IdOperazione}`: 404 while the result is not ready (`pendingPolls`
 *   answers per document), then a `DocCommercialiLotteriaEsito`: AC, or SC with the
 *   errors set for that document's number (`rejectNumber`), or SE with remarks.
 * - switches: `rateLimited` (429), `outage` (503 HTML), `unauthorized` (403).
 *
 * Independent of the code under test: its own parsing (answers are written with the
 * plug-in's answer writer, which the XSD tests of it-dc check).
 */
import crypto from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { esitoDocumentoXml, esitoOperazioneXml } from '../../src/countries/it-dc/answers.ts';
import type { FakeRequest, FakeResponse } from './fake-authority.ts';
import { startFakeAde, type FakeAdeRoute } from './fake-ade.ts';
import { HAVE_SCHEMAS, XADES_ID_ATTRIBUTES, xmlsecVerify, xsdValidate } from './xml-tools.ts';

export const ADE_DOCUMENTS_PATH = '/v1/dispositivi/documenti-commerciali';
export const DCL_XSD = 'it/corrispettivi/DocCommercialiLotteriaTypes_v1.0.xsd';
const ID_ATTRIBUTES = [...XADES_ID_ATTRIBUTES, { attr: 'Id', node: 'Object', ns: 'http://www.w3.org/2000/09/xmldsig#' }];

export type FakeAdeMode = 'normal' | 'rateLimited' | 'outage' | 'unauthorized';

export interface FakeAdeDocument {
  idOperazione: string;
  numero: string;
  xml: string;
  polls: number;
}

export interface AdeDocumentsState {
  /** Documents taken (valid, sealed), by IdOperazione. */
  documents: Map<string, FakeAdeDocument>;
  /** Every error answered at sending, in order. */
  refusals: { code: string; detail: string }[];
  setMode(mode: FakeAdeMode): void;
  /** The result of the document numbered `numero` will be SC with these errors. */
  rejectNumber(numero: string, errors: { codice: string; descrizione: string }[]): void;
  /** Polls answered 404 before each result is ready (default 0). */
  pendingPolls(n: number): void;
  reset(): void;
}

export interface FakeAdeDocuments extends AdeDocumentsState {
  url: string;
  caPem: string;
  requests: FakeRequest[];
  close(): Promise<void>;
}

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });
const xmlAnswer = (status: number, body: string): FakeResponse => ({ status, headers: { 'content-type': 'application/xml' }, body });

function certificateInDocument(xml: string): string | null {
  const b64 = /<ds:X509Certificate>([^<]+)<\/ds:X509Certificate>/.exec(xml)?.[1];
  if (!b64) return null;
  return `-----BEGIN CERTIFICATE-----\n${b64.replace(/\s+/g, '').match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}

export function documentsRoutes(): { routes: FakeAdeRoute[]; state: AdeDocumentsState } {
  let mode: FakeAdeMode = 'normal';
  let waitPolls = 0;
  let next = 0;
  const documents = new Map<string, FakeAdeDocument>();
  const byDigest = new Map<string, string>();
  const rejections = new Map<string, { codice: string; descrizione: string }[]>();
  const refusals: { code: string; detail: string }[] = [];
  const refuse = (code: string, detail: string): FakeResponse => {
    refusals.push({ code, detail });
    return xmlAnswer(200, esitoOperazioneXml({ idOperazione: String(800_000 + ++next), errors: [{ codice: code, descrizione: detail.slice(0, 400) }] }));
  };

  const send = (req: FakeRequest): FakeResponse => {
    const body = req.body.toString('utf8');
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(body, DCL_XSD);
      if (!v.ok) return refuse('00000', `Il file non rispetta lo schema: ${v.output.split('\n')[0]}`);
    }
    const certPem = certificateInDocument(body);
    if (certPem === null) return refuse('99999', 'Firma assente');
    const sig = xmlsecVerify(body, { trustedCertPem: certPem, idAttributes: ID_ATTRIBUTES });
    if (!sig.ok) return refuse('99999', 'Firma non integra');
    // The seal and the channel belong to the same holder.
    const sealer = new crypto.X509Certificate(certPem).fingerprint256;
    if (req.clientCert?.fingerprint256 !== sealer) return refuse('99999', 'Il sigillo non corrisponde al certificato del canale');
    const digest = crypto.createHash('sha256').update(body).digest('hex');
    if (byDigest.has(digest)) return refuse('00306', `File duplicato (IdOperazione ${byDigest.get(digest)})`);
    const doc = parser.parse(body) as Record<string, any>;
    const numero = String(doc.DocCommercialiLotteria?.DocumentoCommerciale?.NumeroProgressivo ?? '');
    const idOperazione = String(900_000_000 + ++next);
    documents.set(idOperazione, { idOperazione, numero, xml: body, polls: 0 });
    byDigest.set(digest, idOperazione);
    return xmlAnswer(200, esitoOperazioneXml({ idOperazione }));
  };

  const result = (idOperazione: string): FakeResponse => {
    const doc = documents.get(idOperazione);
    if (!doc) return { status: 404, body: '' };
    doc.polls += 1;
    if (doc.polls <= waitPolls) return { status: 404, body: '' };
    const at = new Date().toISOString();
    const errors = rejections.get(doc.numero);
    return xmlAnswer(200, errors
      ? esitoDocumentoXml({ idOperazione, at, esito: 'SC', documents: 1, errors })
      : esitoDocumentoXml({ idOperazione, at, esito: 'AC', documents: 1 }));
  };

  const guard = (handle: (req: FakeRequest) => FakeResponse) => (req: FakeRequest): FakeResponse => {
    if (mode === 'outage') return { status: 503, headers: { 'content-type': 'text/html' }, body: '<html>Servizio non disponibile</html>' };
    if (mode === 'rateLimited') return { status: 429, body: '' };
    if (mode === 'unauthorized') return { status: 403, body: '' };
    return handle(req);
  };
  const RESULT = /^\/v1\/dispositivi\/documenti-commerciali\/esiti\/([^/]+)$/;
  const routes: FakeAdeRoute[] = [
    { method: 'POST', path: ADE_DOCUMENTS_PATH, handle: guard(send) },
    { method: 'GET', path: RESULT, handle: guard((req) => result(decodeURIComponent(RESULT.exec(req.path.split('?')[0]!)![1]!))) },
  ];
  const state: AdeDocumentsState = {
    documents,
    refusals,
    setMode: (m) => {
      mode = m;
    },
    rejectNumber: (numero, errors) => {
      rejections.set(numero, errors);
    },
    pendingPolls: (n) => {
      waitPolls = n;
    },
    reset: () => {
      mode = 'normal';
      waitPolls = 0;
      rejections.clear();
      refusals.length = 0;
      documents.clear();
      byDigest.clear();
    },
  };
  return { routes, state };
}

export async function startFakeAdeDocuments(): Promise<FakeAdeDocuments> {
  const { routes, state } = documentsRoutes();
  const ade = await startFakeAde({ routes });
  const resetState = state.reset;
  return Object.assign(state, {
    url: ade.url,
    caPem: ade.caPem,
    requests: ade.requests,
    reset: () => {
      resetState();
      ade.requests.length = 0;
    },
    close: () => ade.close(),
  });
}
