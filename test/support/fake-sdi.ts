/**
 * A fake SdI SdICoop `SdIRiceviFile` service (SdIRiceviFile_v1.0.wsdl, operation
 * RiceviFile) on top of the fake authority (real HTTPS on 127.0.0.1 with its own
 * self-signed CA, client certificate required: 403 without one):
 *
 * - reads `fileSdIAccoglienza` {NomeFile, File} from the SOAP body (File as inline
 *   base64; MTOM is not spoken), decodes the file;
 * - an empty file: `Errore` EI01; otherwise the FatturaPA is validated against the
 *   FatturaPA 1.2.2 XSD with xmllint (catalog), a simplified one (root
 *   FatturaElettronicaSemplificata) against Schema_VFSM10.xsd: an invalid one gets a SOAP Client fault
 *   "00200 …" (a fake's shortcut: the real SdI takes the file and sends a NotificaScarto
 *   00200 later);
 * - a valid one: `rispostaSdIRiceviFile` with a fresh IdentificativoSdI and
 *   DataOraRicezione (per TrasmissioneTypes_v1.0.xsd);
 * - switches: `unavailable` (Errore EI02), `unauthorized` (EI03), `outage` (HTTP 503
 *   without SOAP), `reset` (the connection is cut without an answer, the file not taken),
 *   `answer-lost` (the file is taken, then the connection is cut: the client cannot know).
 *
 * Then, as SdI does, it notifies the transmitter: for every file taken it queues the
 * MessaggiTypes 1.1 notifications programmed for that file name (`program`; default one
 * RicevutaConsegna), each signed XAdES-BES enveloped with the fake SdI's own key
 * (xmlsec1, test/support/xades-sign.ts; `signerCaPem` is its CA), and posts them to the
 * service's receiver (`notifyTo`: `POST /v1/inbound/sdi` with `X-SDI-Secret`) when the
 * test says (`deliver`, in order, reversed or picked; `post` sends one again: duplicates).
 * A file whose name SdI already received gets an NS 00002, one that fails SdI's content
 * controls (`sdiControls`: the "Elenco controlli" checks on what we write, 00301-00471) an NS
 * listing every code it fails, and one whose invoice (seller, number, date) it already took
 * (not rejected) an NS 00404, instead of its program.
 *
 * Independent of the code under test: its own namespaces, parsing and XML.
 */
import crypto from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { startFakeAuthority, type FakeAuthority, type FakeRequest, type FakeResponse } from './fake-authority.ts';
import { generateCert } from './p12.ts';
import { xadesSign } from './xades-sign.ts';
import { HAVE_SCHEMAS, xsdValidate } from './xml-tools.ts';

export const SDI_FAKE_PATH = '/ricevi_file';
export const FATTURAPA_XSD = 'it/fatturapa/Schema_del_file_xml_FatturaPA_v1.2.2.xsd';
/** The simplified invoice's schema (FatturaElettronicaSemplificata, FSM10), which SdI takes on the same channels. */
export const FATTURAPA_FSM10_XSD = 'it/fatturapa/Schema_VFSM10.xsd';
const NS_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';
const NS_TYPES = 'http://www.fatturapa.gov.it/sdi/ws/trasmissione/v1.0/types';
const NS_MESSAGGI = 'http://www.fatturapa.gov.it/sdi/messaggi/v1.0';

export type FakeSdiMode = 'normal' | 'unavailable' | 'unauthorized' | 'outage' | 'reset' | 'answer-lost';

/** What SdI says about a file it took, in order. */
export type FakeSdiNotice =
  | { type: 'RC' }
  | { type: 'NS'; errors: { codice: string; descrizione?: string }[] }
  | { type: 'MC' }
  | { type: 'AT' }
  | { type: 'NE'; esito: 'EC01' | 'EC02' }
  | { type: 'DT' };

/** A notification the fake SdI wrote (queued in `outbox` until delivered). */
export interface FakeSdiNotification {
  type: FakeSdiNotice['type'];
  nomeFile: string;
  identificativoSdI: string;
  /** The signed MessaggiTypes document. */
  readonly body: string;
  /** Every answer of the receiver to a post of it, in order. */
  answers: { status: number; body: string }[];
}

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
  /** The CA of the fake SdI's signing certificate: the service's `SDI_NOTIFICATION_CA_FILE`. */
  signerCaPem: string;
  /** Where notifications go: the receiver's URL (`…/v1/inbound/sdi`) and the shared secret. */
  notifyTo(url: string, secret: string): void;
  /** What SdI will say about the file `nomeFile` once it takes it (default: one RC). */
  program(nomeFile: string, notices: FakeSdiNotice[]): void;
  /** Notifications written and not yet posted, in the order SdI wrote them. */
  outbox: FakeSdiNotification[];
  /** Every notification written, posted or not. */
  notifications: FakeSdiNotification[];
  /**
   * Posts the queued notifications (all, or those `pick` selects), in the order written or
   * reversed; returns them with the receiver's answers.
   */
  deliver(opts?: { order?: 'written' | 'reversed'; pick?: (n: FakeSdiNotification) => boolean }): Promise<FakeSdiNotification[]>;
  /** Posts one notification (again: a duplicate delivery), or any body as the fake SdI. */
  post(n: FakeSdiNotification | string): Promise<{ status: number; body: string }>;
  reset(): void;
  close(): Promise<void>;
}

const esc = (v: string) => v.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const tag = (name: string, value: string, indent = '  ') => `${indent}<${name}>${esc(value)}</${name}>`;

/** What the notifications need of the invoice: read with our own parser. */
interface InvoiceFacts {
  codiceDestinatario: string;
  numero: string;
  data: string;
  seller: string;
}
function invoiceFacts(file: string): InvoiceFacts {
  const doc = parser.parse(file) as Obj;
  const root = isObj(doc.FatturaElettronica) ? doc.FatturaElettronica : isObj(doc.FatturaElettronicaSemplificata) ? doc.FatturaElettronicaSemplificata : {};
  const header = isObj(root.FatturaElettronicaHeader) ? root.FatturaElettronicaHeader : {};
  const dt = isObj(header.DatiTrasmissione) ? header.DatiTrasmissione : {};
  const cedente = isObj(header.CedentePrestatore) ? header.CedentePrestatore : {};
  // The simplified format has no DatiAnagrafici: IdFiscaleIVA sits in CedentePrestatore.
  const anag = isObj(cedente.DatiAnagrafici) ? cedente.DatiAnagrafici : cedente;
  const piva = isObj(anag.IdFiscaleIVA) ? anag.IdFiscaleIVA : {};
  const body = isObj(root.FatturaElettronicaBody) ? root.FatturaElettronicaBody : {};
  const generali = isObj(body.DatiGenerali) ? body.DatiGenerali : {};
  const documento = isObj(generali.DatiGeneraliDocumento) ? generali.DatiGeneraliDocumento : {};
  return {
    codiceDestinatario: String(dt.CodiceDestinatario ?? '0000000'),
    numero: String(documento.Numero ?? ''),
    data: String(documento.Data ?? ''),
    seller: `${String(piva.IdPaese ?? '')}${String(piva.IdCodice ?? '')}`,
  };
}

/** Repeated elements read as arrays, whichever count a file has. */
const ARRAYS = new Set(['DettaglioLinee', 'DatiRiepilogo', 'DatiBeniServizi', 'DatiFattureCollegate']);
const controlParser = new XMLParser({
  removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true,
  isArray: (name) => ARRAYS.has(name),
});
const obj = (v: unknown): Obj => (isObj(v) ? v : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
/** An amount in hundredths (cents, or a rate's hundredths of a percent), exact for the 2-decimal forms. */
const hundredths = (v: unknown): number => Math.round(Number(v ?? 0) * 100);

/** The partita IVA check digit (Luhn over 11 digits), as SdI's registry would at least require. */
function fakeLuhn(code: string): boolean {
  if (!/^[0-9]{11}$/.test(code) || code === '00000000000') return false;
  let sum = 0;
  for (let i = 0; i < 11; i++) {
    let d = Number(code[i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** A codice fiscale: 11 digits (an entity, Luhn) or a person's 16 characters with the check letter (DM 23/12/1976). */
function fakeCodiceFiscale(cf: string): boolean {
  if (/^[0-9]{11}$/.test(cf)) return fakeLuhn(cf);
  if (!/^[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-EHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$/.test(cf)) return false;
  const odd = '1,0,5,7,9,13,15,17,19,21,2,4,18,20,11,3,6,8,12,14,16,10,22,25,24,23'.split(',').map(Number);
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const c = cf.charCodeAt(i);
    const v = c <= 57 ? c - 48 : c - 65;
    sum += i % 2 === 0 ? odd[v]! : v;
  }
  return String.fromCharCode(65 + (sum % 26)) === cf[15];
}

/** The document types SdI refuses with the same subject as cedente and cessionario (00471). */
const NOT_TO_ONESELF = ['TD01', 'TD02', 'TD03', 'TD06', 'TD16', 'TD17', 'TD18', 'TD19', 'TD20', 'TD24', 'TD25', 'TD28'];

/**
 * SdI's content controls ("Elenco controlli" of the FatturaPA technical specifications) on a
 * file that passed the schema, as far as they concern what the service writes: the errors an NS
 * would list, in code order, each once. Read here with our own parser and arithmetic:
 * - 00301 / 00305: an Italian IdFiscaleIVA (seller / buyer) that is not a valid partita IVA
 *   (the registry look-up is played by the check digit); 00306: an invalid buyer CodiceFiscale;
 * - 00403: Data after the day of reception (Rome); 00418: Data before a linked invoice's;
 * - 00425: Numero without a digit; 00426: PECDestinatario with a CodiceDestinatario other than
 *   0000000; 00427: a 7-character code on FPA12, a 6-character one on FPR12;
 * - 00471: the same subject (IdFiscaleIVA or CodiceFiscale) as cedente and cessionario on the
 *   types that forbid it;
 * - lines: 00400 / 00401 Natura vs AliquotaIVA 0; 00423 PrezzoTotale ≠ PrezzoUnitario ×
 *   Quantita (±0.01); 00424 an AliquotaIVA between 0 and 1; 00445 a generic N2/N3/N6;
 * - summary: 00419 / 00443 a rate of the lines without its row (or a row without lines);
 *   00444 the same for Natura; 00429 / 00430 Natura vs AliquotaIVA 0; 00421 Imposta ≠
 *   ImponibileImporto × AliquotaIVA / 100 (±0.01); 00422 ImponibileImporto ≠ Σ PrezzoTotale
 *   of its lines + its Arrotondamento (±1.00);
 * - simplified (FSM10): the identity controls above, and 00460 a TD07 above 400.00 EUR
 *   outside RF19 (a variation note, with DatiFatturaRettificata, has no ceiling).
 * Not played: 00417 (a buyer without either id): the service's test keys write such buyers on
 * purpose (docs/decisions.md "Live: seller Sede and buyer id") and the lifecycle tests send them.
 */
export function sdiControls(file: string, receivedAt = new Date()): { codice: string; descrizione: string }[] {
  const errors = new Map<string, string>();
  const fail = (codice: string, descrizione: string) => {
    if (!errors.has(codice)) errors.set(codice, descrizione);
  };
  const doc = controlParser.parse(file) as Obj;
  const semplificata = isObj(doc.FatturaElettronicaSemplificata);
  const root = obj(semplificata ? doc.FatturaElettronicaSemplificata : doc.FatturaElettronica);
  const header = obj(root.FatturaElettronicaHeader);
  const dt = obj(header.DatiTrasmissione);
  const cedente = obj(header.CedentePrestatore);
  const cessionario = obj(header.CessionarioCommittente);
  const seller = semplificata ? cedente : obj(cedente.DatiAnagrafici);
  const buyer = semplificata ? obj(cessionario.IdentificativiFiscali) : obj(cessionario.DatiAnagrafici);
  const vat = (a: Obj) => {
    const id = obj(a.IdFiscaleIVA);
    return str(id.IdPaese) === undefined ? undefined : { paese: str(id.IdPaese)!, codice: str(id.IdCodice) ?? '' };
  };
  const sellerVat = vat(seller);
  const buyerVat = vat(buyer);
  const sellerCf = str(seller.CodiceFiscale);
  const buyerCf = str(buyer.CodiceFiscale);

  const formato = str(dt.FormatoTrasmissione) ?? '';
  const codice = str(dt.CodiceDestinatario) ?? '';
  if (sellerVat?.paese === 'IT' && !fakeLuhn(sellerVat.codice)) fail('00301', '1.2.1.1.2 <IdCodice> non valido');
  if (buyerVat?.paese === 'IT' && !fakeLuhn(buyerVat.codice)) fail('00305', '1.4.1.1.2 <IdCodice> non valido');
  if (buyerCf !== undefined && !fakeCodiceFiscale(buyerCf)) fail('00306', '1.4.1.2 <CodiceFiscale> non valido');
  if (str(dt.PECDestinatario) !== undefined && codice !== '0000000') {
    fail('00426', '1.1.6 <PECDestinatario> valorizzato a fronte di 1.1.4 <CodiceDestinatario> con valore diverso da 0000000');
  }
  if ((formato === 'FPA12' && codice.length === 7) || (formato === 'FPR12' && codice.length === 6)) {
    fail('00427', '1.1.4 <CodiceDestinatario> di lunghezza non coerente con 1.1.3 <FormatoTrasmissione>');
  }

  const body = obj(root.FatturaElettronicaBody);
  const generali = obj(body.DatiGenerali);
  const documento = obj(generali.DatiGeneraliDocumento);
  const tipo = str(documento.TipoDocumento) ?? '';
  const data = str(documento.Data) ?? '';
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Rome' }).format(receivedAt);
  if (data > today) fail('00403', '2.1.1.3 <Data> successiva alla data di ricezione');
  if (!/[0-9]/.test(str(documento.Numero) ?? '')) fail('00425', '2.1.1.4 <Numero> non contenente caratteri numerici');
  for (const c of (generali.DatiFattureCollegate as Obj[] | undefined) ?? []) {
    const linked = str(obj(c).Data);
    if (linked !== undefined && data < linked) fail('00418', '2.1.1.3 <Data> antecedente a 2.1.6.3 <Data>');
  }
  const sameSubject = (sellerVat !== undefined && buyerVat !== undefined && sellerVat.paese === buyerVat.paese && sellerVat.codice === buyerVat.codice)
    || (sellerCf !== undefined && sellerCf === buyerCf);
  if (sameSubject && NOT_TO_ONESELF.includes(tipo)) {
    fail('00471', 'Per il valore indicato nell\'elemento 2.1.1.1 <TipoDocumento> il cedente/prestatore non può essere uguale al cessionario/committente');
  }

  const generic = (n: string | undefined) => n === 'N2' || n === 'N3' || n === 'N6';
  if (semplificata) {
    const beni = ((body.DatiBeniServizi as Obj[] | undefined) ?? []).map(obj);
    const total = beni.reduce((sum, b) => sum + hundredths(b.Importo), 0);
    if (tipo === 'TD07' && total > 40_000 && str(cedente.RegimeFiscale) !== 'RF19' && !isObj(generali.DatiFatturaRettificata)) {
      fail('00460', 'Importo totale superiore al limite previsto per le fatture semplificate');
    }
    for (const b of beni) if (generic(str(b.Natura))) fail('00445', 'Natura generica non più ammessa');
  } else {
    const dbs = obj(((body.DatiBeniServizi as Obj[] | undefined) ?? [])[0]);
    const linee = ((dbs.DettaglioLinee as Obj[] | undefined) ?? []).map(obj);
    const righe = ((dbs.DatiRiepilogo as Obj[] | undefined) ?? []).map(obj);
    const keyOf = (rate: number, natura: string | undefined) => `${rate}|${natura ?? ''}`;
    const lineSums = new Map<string, number>();
    for (const l of linee) {
      const rate = hundredths(l.AliquotaIVA);
      const natura = str(l.Natura);
      if (rate === 0 && natura === undefined) fail('00400', '2.2.1.14 <Natura> non presente a fronte di 2.2.1.12 <AliquotaIVA> pari a zero');
      if (rate !== 0 && natura !== undefined) fail('00401', '2.2.1.14 <Natura> presente a fronte di 2.2.1.12 <AliquotaIVA> diversa da zero');
      if (rate > 0 && rate < 100) fail('00424', '2.2.1.12 <AliquotaIVA> non indicata in termini percentuali');
      if (generic(natura)) fail('00445', '2.2.1.14 <Natura> generica non più ammessa');
      const expected = Number(l.PrezzoUnitario ?? 0) * Number(l.Quantita ?? 1);
      if (Math.abs(Number(l.PrezzoTotale ?? 0) - expected) > 0.01 + 1e-9) fail('00423', '2.2.1.11 <PrezzoTotale> non calcolato secondo le regole definite nelle specifiche tecniche');
      const key = keyOf(rate, natura);
      lineSums.set(key, (lineSums.get(key) ?? 0) + hundredths(l.PrezzoTotale));
    }
    const rowKeys = new Set<string>();
    for (const r of righe) {
      const rate = hundredths(r.AliquotaIVA);
      const natura = str(r.Natura);
      rowKeys.add(keyOf(rate, natura));
      if (rate === 0 && natura === undefined) fail('00429', '2.2.2.2 <Natura> non presente a fronte di 2.2.2.1 <AliquotaIVA> pari a zero');
      if (rate !== 0 && natura !== undefined) fail('00430', '2.2.2.2 <Natura> presente a fronte di 2.2.2.1 <AliquotaIVA> diversa da zero');
      if (rate > 0 && rate < 100) fail('00424', '2.2.2.1 <AliquotaIVA> non indicata in termini percentuali');
      if (generic(natura)) fail('00445', '2.2.2.2 <Natura> generica non più ammessa');
      const imponibile = hundredths(r.ImponibileImporto);
      // Imposta in cents; ImponibileImporto (cents) × AliquotaIVA (hundredths of a percent) / 10,000.
      if (Math.abs(hundredths(r.Imposta) - Math.round((imponibile * rate) / 10_000)) > 1) {
        fail('00421', '2.2.2.6 <Imposta> non calcolato secondo le regole definite nelle specifiche tecniche');
      }
      const lines = lineSums.get(keyOf(rate, natura)) ?? 0;
      if (Math.abs(imponibile - (lines + hundredths(r.Arrotondamento))) > 100) {
        fail('00422', '2.2.2.5 <ImponibileImporto> non calcolato secondo le regole definite nelle specifiche tecniche');
      }
    }
    const lineRates = new Set([...lineSums.keys()].map((k) => k.split('|')[0]));
    const rowRates = new Set([...rowKeys].map((k) => k.split('|')[0]));
    if ([...lineRates].some((r) => !rowRates.has(r))) fail('00419', '2.2.2 <DatiRiepilogo> non presente in corrispondenza di almeno un valore di 2.2.1.12 <AliquotaIVA>');
    if ([...rowRates].some((r) => !lineRates.has(r))) fail('00443', 'Aliquote IVA dei dati di riepilogo non coerenti con quelle delle linee di dettaglio');
    const lineNature = new Set([...lineSums.keys()].map((k) => k.split('|')[1]));
    const rowNature = new Set([...rowKeys].map((k) => k.split('|')[1]));
    if ([...lineNature].some((n) => !rowNature.has(n)) || [...rowNature].some((n) => !lineNature.has(n))) {
      fail('00444', 'Valori di Natura dei dati di riepilogo non coerenti con quelli delle linee di dettaglio');
    }
  }
  return [...errors.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([c, d]) => ({ codice: c, descrizione: d }));
}

/** A MessaggiTypes 1.1 document (unsigned; the signature is appended by xadesSign). */
function messaggio(n: FakeSdiNotice, f: { id: string; nomeFile: string; at: Date; messageId: string; invoice: InvoiceFacts; fileHash: string }): string {
  const head = [tag('IdentificativoSdI', f.id), tag('NomeFile', f.nomeFile)];
  const ricezione = tag('DataOraRicezione', f.at.toISOString());
  const pa = f.invoice.codiceDestinatario.length === 6;
  const destinatario = ['  <Destinatario>', tag('Codice', f.invoice.codiceDestinatario, '    '),
    tag('Descrizione', pa ? 'Amministrazione destinataria (fake SdI)' : 'Destinatario (fake SdI)', '    '), '  </Destinatario>'];
  const messageId = tag('MessageId', f.messageId);
  let root: string;
  let lines: string[];
  switch (n.type) {
    case 'RC':
      root = 'RicevutaConsegna';
      lines = [...head, ricezione, tag('DataOraConsegna', f.at.toISOString()), ...destinatario, messageId];
      break;
    case 'NS':
      root = 'NotificaScarto';
      lines = [...head, ricezione, '  <ListaErrori>',
        ...n.errors.flatMap((e) => ['    <Errore>', tag('Codice', e.codice, '      '), tag('Descrizione', e.descrizione ?? `Errore ${e.codice} (fake SdI)`, '      '), '    </Errore>']),
        '  </ListaErrori>', messageId];
      break;
    case 'MC':
      root = 'NotificaMancataConsegna';
      lines = [...head, ricezione, tag('Descrizione', 'Recapito non riuscito: il file è a disposizione nell\'area riservata'), messageId];
      break;
    case 'AT':
      root = 'AttestazioneTrasmissioneFattura';
      lines = [...head, ricezione, ...destinatario, messageId, tag('HashFileOriginale', f.fileHash)];
      break;
    case 'NE':
      root = 'NotificaEsito';
      lines = [...head, '  <EsitoCommittente versione="1.0">', tag('IdentificativoSdI', f.id, '    '), '    <RiferimentoFattura>',
        tag('NumeroFattura', f.invoice.numero, '      '), tag('AnnoFattura', f.invoice.data.slice(0, 4), '      '), '    </RiferimentoFattura>',
        tag('Esito', n.esito, '    '), ...(n.esito === 'EC02' ? [tag('Descrizione', 'Fattura rifiutata dal committente', '    ')] : []),
        '  </EsitoCommittente>', messageId];
      break;
    case 'DT':
      root = 'NotificaDecorrenzaTermini';
      lines = [...head, tag('Descrizione', 'Decorsi i termini per la notifica di esito'), messageId];
      break;
  }
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<types:${root} xmlns:types="${NS_MESSAGGI}" versione="1.0">`, ...lines, `</types:${root}>`, ''].join('\n');
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
  let nextMessage = 0;
  const received: FakeSdiReceived[] = [];
  const signer = generateCert({ subject: '/C=IT/O=Sistema di Interscambio (fake)/CN=Fake SdI notifications', withCa: true, days: 3650 });
  const programs = new Map<string, FakeSdiNotice[]>();
  const outbox: FakeSdiNotification[] = [];
  const notifications: FakeSdiNotification[] = [];
  /** The invoices SdI took (seller|number|date): a second one is a duplicate (00404). */
  const taken = new Set<string>();
  const takenNames = new Set<string>();
  let target: { url: string; secret: string } | undefined;

  /** Writes and queues what SdI says about a file it took. */
  const notify = (entry: FakeSdiReceived, at: Date) => {
    const invoice = invoiceFacts(entry.file);
    const key = `${invoice.seller}|${invoice.numero}|${invoice.data}`;
    // SdI's uniqueness checks: the file name (00002), then the invoice (00404).
    const failed = sdiControls(entry.file, at);
    const plan: FakeSdiNotice[] = takenNames.has(entry.nomeFile)
      ? [{ type: 'NS', errors: [{ codice: '00002', descrizione: 'Nome file duplicato' }] }]
      : failed.length > 0
        ? [{ type: 'NS', errors: failed }]
        : taken.has(key)
        ? [{ type: 'NS', errors: [{ codice: '00404', descrizione: 'Fattura duplicata' }] }]
        : (programs.get(entry.nomeFile) ?? [{ type: 'RC' }]);
    takenNames.add(entry.nomeFile);
    // A rejected invoice was never issued: it may be sent again, corrected, with its number.
    if (!plan.some((n) => n.type === 'NS')) taken.add(key);
    const fileHash = crypto.createHash('sha256').update(entry.file).digest('hex');
    for (const n of plan) {
      const xml = messaggio(n, { id: entry.identificativoSdI!, nomeFile: entry.nomeFile, at, messageId: String(7_000_000 + ++nextMessage), invoice, fileHash });
      // Signed when first read (xmlsec1 runs only for the notifications a test looks at or posts).
      let signed: string | undefined;
      const out: FakeSdiNotification = {
        type: n.type, nomeFile: entry.nomeFile, identificativoSdI: entry.identificativoSdI!, answers: [],
        get body() {
          signed ??= xadesSign(xml, { keyPem: signer.keyPem, certPem: signer.certPem, signingTime: at });
          return signed;
        },
      };
      outbox.push(out);
      notifications.push(out);
    }
  };

  const post = async (n: FakeSdiNotification | string): Promise<{ status: number; body: string }> => {
    if (!target) throw new Error('fake SdI: notifyTo(url, secret) first');
    const res = await fetch(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/xml', 'x-sdi-secret': target.secret },
      body: typeof n === 'string' ? n : n.body,
    });
    const answer = { status: res.status, body: await res.text() };
    if (typeof n !== 'string') n.answers.push(answer);
    return answer;
  };
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
      // SdI reads the format from the root: the simplified invoice has its own schema.
      const v = xsdValidate(file, /<(\w+:)?FatturaElettronicaSemplificata[\s>]/.test(file) ? FATTURAPA_FSM10_XSD : FATTURAPA_XSD);
      if (!v.ok) {
        const first = v.output.split('\n').find((l) => /error/i.test(l)) ?? v.output;
        return answer(sdiFault('Client', `00200 File non conforme al formato: ${first}`));
      }
    }
    entry.identificativoSdI = identificativo();
    notify(entry, now);
    // Taken, and the answer never reaches the client.
    if (mode === 'answer-lost') throw Object.assign(new Error('connection reset after the file was taken'), { resetConnection: true });
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
    signerCaPem: signer.caPem!,
    notifyTo: (url, secret) => {
      target = { url, secret };
    },
    program: (nomeFile, notices) => {
      programs.set(nomeFile, notices);
    },
    outbox,
    notifications,
    async deliver(opts = {}) {
      const chosen = outbox.filter(opts.pick ?? (() => true));
      for (const n of chosen) outbox.splice(outbox.indexOf(n), 1);
      if (opts.order === 'reversed') chosen.reverse();
      for (const n of chosen) await post(n);
      return chosen;
    },
    post,
    reset: () => {
      mode = 'normal';
      received.length = 0;
      fake.requests.length = 0;
      state.lastAnswer = undefined;
      programs.clear();
      outbox.length = 0;
      notifications.length = 0;
      taken.clear();
      takenNames.clear();
    },
    close: () => fake.close(),
  };
}
