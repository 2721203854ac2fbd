/**
 * A fake SdI SdICoop `SdIRiceviFile` service (SdIRiceviFile_v1.0.wsdl, operation
 * RiceviFile) on top of the fake authority (real HTTPS on 127.0.0.1 with its own
 * self-signed CA, client certificate required: 403 without one):
 *
 * - reads `fileSdIAccoglienza` {NomeFile, File} from the SOAP body (File as inline
 *   base64; MTOM is not spoken), decodes the file;
 * - an empty file: `Errore` EI01; otherwise the FatturaPA is validated against the
 *   FatturaPA 1.2.2 XSD with xmllint (catalog): an invalid one gets a SOAP Client fault
 *   "00200 …" (a fake's shortcut: the real SdI takes the file and sends a NotificaScarto
 *   00200 later);
 * - a valid one: `rispostaSdIRiceviFile` with a fresh IdentificativoSdI and
 *   DataOraRicezione (per TrasmissioneTypes_v1.0.xsd);
 * - switches: `unavailable` (Errore EI02), `unauthorized` (EI03), `outage` (HTTP 503
 *   without SOAP), `reset` (the connection is cut without an answer).
 *
 * Independent of the code under test: its own namespaces and parsing.
 */
import { XMLParser } from 'fast-xml-parser';
import { startFakeAuthority, type FakeAuthority, type FakeRequest, type FakeResponse } from './fake-authority.ts';
import { HAVE_SCHEMAS, xsdValidate } from './xml-tools.ts';

export const SDI_FAKE_PATH = '/ricevi_file';
export const FATTURAPA_XSD = 'it/fatturapa/Schema_del_file_xml_FatturaPA_v1.2.2.xsd';
const NS_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';
const NS_TYPES = 'http://www.fatturapa.gov.it/sdi/ws/trasmissione/v1.0/types';

export type FakeSdiMode = 'normal' | 'unavailable' | 'unauthorized' | 'outage' | 'reset';

export interface FakeSdiReceived {
  nomeFile: string;
  /** The decoded invoice file. */
  file: string;
  identificativoSdI?: string;
}

export interface FakeSdi {
  /** `https://127.0.0.1:<port>`: use as `authorityBaseUrl`. */
  url: string;
  /** Trust as `authorityCa`. */
  caPem: string;
  requests: FakeRequest[];
  /** Every file read from a request, accepted or not. */
  received: FakeSdiReceived[];
  /** The last SOAP answer sent. */
  lastAnswer: string | undefined;
  setMode(mode: FakeSdiMode): void;
  reset(): void;
  close(): Promise<void>;
}

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const xml = (body: string): FakeResponse => ({ status: 200, headers: { 'content-type': 'text/xml; charset=utf-8' }, body: envelope(body) });
const envelope = (inner: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<env:Envelope xmlns:env="${NS_ENV}"><env:Body>${inner}</env:Body></env:Envelope>`;

export function sdiFault(faultcode: 'Client' | 'Server', faultstring: string): FakeResponse {
  return {
    status: 500,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: envelope(`<env:Fault><faultcode>env:${faultcode}</faultcode><faultstring>${faultstring.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</faultstring></env:Fault>`),
  };
}

const risposta = (id: string, at: Date, errore?: string): FakeResponse =>
  xml(`<ns2:rispostaSdIRiceviFile xmlns:ns2="${NS_TYPES}"><IdentificativoSdI>${id}</IdentificativoSdI>` +
    `<DataOraRicezione>${at.toISOString()}</DataOraRicezione>${errore ? `<Errore>${errore}</Errore>` : ''}</ns2:rispostaSdIRiceviFile>`);

export async function startFakeSdi(): Promise<FakeSdi> {
  let mode: FakeSdiMode = 'normal';
  let next = 0;
  const received: FakeSdiReceived[] = [];
  const state = { lastAnswer: undefined as string | undefined };
  const answer = (res: FakeResponse): FakeResponse => {
    state.lastAnswer = typeof res.body === 'string' ? res.body : res.body.toString('utf8');
    return res;
  };
  // SdI numbers every file it receives (an integer of up to 12 digits); the errors get one too.
  const identificativo = (): string => String(100_000_000 + ++next);

  const handler = async (req: FakeRequest): Promise<FakeResponse> => {
    if (mode === 'reset') throw Object.assign(new Error('connection reset'), { resetConnection: true });
    if (mode === 'outage') return { status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body>Servizio non disponibile</body></html>' };
    if (req.path !== SDI_FAKE_PATH) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
    let doc: Obj;
    try {
      doc = parser.parse(req.body.toString('utf8')) as Obj;
    } catch {
      return answer(sdiFault('Client', 'Messaggio SOAP non valido'));
    }
    const env = doc.Envelope;
    const body = isObj(env) ? env.Body : undefined;
    const accoglienza = isObj(body) ? body.fileSdIAccoglienza : undefined;
    if (!isObj(accoglienza)) return answer(sdiFault('Client', 'Operazione non supportata: fileSdIAccoglienza atteso'));
    const nomeFile = typeof accoglienza.NomeFile === 'string' ? accoglienza.NomeFile : '';
    if (!/^[a-zA-Z0-9_.]{9,50}$/.test(nomeFile)) return answer(sdiFault('Client', `NomeFile non valido: ${nomeFile}`));
    const file = Buffer.from(typeof accoglienza.File === 'string' ? accoglienza.File : '', 'base64').toString('utf8');
    const entry: FakeSdiReceived = { nomeFile, file };
    received.push(entry);
    const now = new Date();
    if (mode === 'unavailable') return answer(risposta(identificativo(), now, 'EI02'));
    if (mode === 'unauthorized') return answer(risposta(identificativo(), now, 'EI03'));
    if (file.trim() === '') return answer(risposta(identificativo(), now, 'EI01'));
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(file, FATTURAPA_XSD);
      if (!v.ok) {
        const first = v.output.split('\n').find((l) => /error/i.test(l)) ?? v.output;
        return answer(sdiFault('Client', `00200 File non conforme al formato: ${first}`));
      }
    }
    entry.identificativoSdI = identificativo();
    return answer(risposta(entry.identificativoSdI, now));
  };

  const fake: FakeAuthority = await startFakeAuthority(handler);
  return {
    url: fake.url,
    caPem: fake.caPem,
    requests: fake.requests,
    received,
    get lastAnswer() {
      return state.lastAnswer;
    },
    setMode: (m) => {
      mode = m;
    },
    reset: () => {
      mode = 'normal';
      received.length = 0;
      fake.requests.length = 0;
      state.lastAnswer = undefined;
    },
    close: () => fake.close(),
  };
}
