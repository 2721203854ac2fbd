/**
 * A fake AEAT VERI*FACTU service for tests, on top of fake-authority.ts (a real HTTPS
 * server on 127.0.0.1 that refuses callers without a TLS client certificate, HTTP 403).
 *
 * Like the real `VerifactuSOAP` endpoint (SistemaFacturacion.wsdl) it:
 * - takes the SOAP 1.1 Body content and validates it against SuministroLR.xsd with
 *   xmllint; an invalid or unreadable request gets a SOAP Fault, HTTP 500, with
 *   `Codigo[4102]` / `Codigo[4103]` as AEAT writes them (errores.properties);
 * - keeps the records it accepted, per issuer: an invoice it already holds (issuer,
 *   NumSerieFactura, FechaExpedicionFactura; AEAT developer FAQ §6) is refused with 3000
 *   and a `RegistroDuplicado` block; an annulment of an unknown invoice gets 3002, of a
 *   cancelled one 3001;
 * - checks the chain (FORMATS.md §2.4): a record's `RegistroAnterior` must name the last
 *   record it accepted for that issuer and carry its huella, else 1180 (rejected);
 *   `PrimerRegistro` while it holds records gets 2007 (accepted with errors, as AEAT);
 * - recomputes each huella from the record's own fields (FORMATS.md §2.1-2.2): a wrong
 *   one is accepted with error 2000, as AEAT does;
 * - with a clock (`now`), compares each record's FechaHoraHusoGenRegistro with it: more than
 *   240 s apart is accepted with error 2004, unless the record is older and the request's
 *   Cabecera says `RemisionVoluntaria/Incidencia` S (sent after an incident). Without a
 *   clock (the default) no time is checked: tests run the service on a clock of their own;
 * - applies some of AEAT's business validations of an alta ("Validaciones y errores",
 *   `businessRefusal`): the recipient block by invoice type (1189, 1190), R2/R3 recipients
 *   (1191, 1192), a recipient that is the issuer (1193), an F2 above 3,000 (1150), the dated
 *   IVA rates 5 / 2 / 7.5 (1194, 1235, 1236) and Macrodato from 100,000,000 (1139);
 * - reads an alta's `Subsanacion` / `RechazoPrevio` as AEAT's record design does (the
 *   operations table: N/N alta inicial, S/N subsanación, S/X alta por rechazo, S/S alta por
 *   rechazo de una subsanación): RechazoPrevio X or S without Subsanacion S is refused (1153,
 *   1161); a Subsanacion S/N or S/S of an invoice it does not hold gets 3002 (a subsanación
 *   corrects a record AEAT holds), of an annulled one 3001 (an assumption: not documented);
 *   S/X of one it holds is a duplicate (3000: X says AEAT holds none); S/N or S/S of one it
 *   holds replaces it. It keeps nothing of the records it refused (AEAT registers no refused
 *   record), so a plain alta of an invoice it refused before is judged as any alta: AEAT's
 *   list has no code for it;
 * - answers per RespuestaSuministro.xsd with a CSV (unless every record was refused) and
 *   `TiempoEsperaEnvio`.
 * It can be told to refuse with a code, to accept with errors, to answer 503 or 429, or to
 * hang (and later let go of the hung requests); to refuse single records of a request
 * (`refuseRecord`), or a whole request with a SOAP Fault (`faultRequest`). It answers every
 * record of a request (up to 1,000) with its own `RespuestaLinea`, and logs the requests it
 * processed (`submissions`).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { huellaAlta, huellaAnulacion } from '../../src/countries/es-verifactu/huella.ts';
import { escapeText } from '../../src/xml/escape.ts';
import { startFakeAuthority, type FakeAuthority, type FakeRequest, type FakeResponse } from './fake-authority.ts';
import { HAVE_SCHEMAS, xsdValidate } from './xml-tools.ts';

const NS_SOAP = 'http://schemas.xmlsoap.org/soap/envelope/';
const NS_BASE = 'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/tike/cont/ws/';
const NS_SF = `${NS_BASE}SuministroInformacion.xsd`;
const NS_SFR = `${NS_BASE}RespuestaSuministro.xsd`;
export const VERIFACTU_PATH = '/wlpl/TIKE-CONT/ws/SistemaFacturacion/VerifactuSOAP';

/** AEAT's Spanish texts (errores.properties) for the codes the fake produces itself. */
const TEXTS: Record<string, string> = {
  '1108': 'El NIF del IDEmisorFactura debe ser el mismo que el NIF del ObligadoEmision.',
  '1139': 'Si el campo ImporteTotal está informado y es igual o superior a +-100.000.000 el campo Macrodato debe estar informado con valor S.',
  '1153': 'Valor del campo RechazoPrevio no válido, solo podrá incluirse el campo RechazoPrevio con valor X si se ha informado el campo Subsanacion y tiene el valor S.',
  '1161': 'El valor del campo RechazoPrevio no es válido, no podrá incluirse el campo RechazoPrevio con valor S si no se ha informado del campo Subsanacion o tiene el valor N.',
  '1150': 'Cuando TipoFactura sea F2 y no este informado NumRegistroAcuerdoFacturacion o FacturaSinIdentifDestinatarioArt61d no sea S el sumatorio de BaseImponibleOimporteNoSujeto y CuotaRepercutida de todas las líneas de detalle no podrá ser superior a 3.000.',
  '1180': 'Error en el bloque de Encadenamiento.',
  '1189': 'Si TipoFactura es F1 o F3 o R1 o R2 o R3 o R4 el bloque Destinatarios tiene que estar cumplimentado.',
  '1190': 'Si TipoFactura es F2 o R5 el bloque Destinatarios no puede estar cumplimentado.',
  '1191': 'Si TipoFactura es R3 sólo se admitirá NIF o IDType = No Censado (07).',
  '1192': 'Si TipoFactura es R2 sólo se admitirá NIF o IDType = No Censado (07) o NIF-IVA (02).',
  '1193': 'En el bloque Destinatarios si se identifica mediante NIF, el NIF debe estar identificado y ser distinto del NIF ObligadoEmision.',
  '1194': 'El valor del campo TipoImpositivo es incorrecto, el valor informado solo es permitido para FechaOperacion o FechaExpedicionFactura posterior o igual a 1 de julio de 2022 e inferior o igual a 30 de septiembre de 2024.',
  '1235': 'El valor del campo TipoImpositivo es incorrecto, el valor informado sólo es permitido para FechaOperacion o FechaExpedicionFactura posterior o igual a 1 de octubre de 2024 e inferior o igual a 31 de diciembre de 2024.',
  '1236': 'El valor del campo TipoImpositivo es incorrecto, el valor informado solo es permitido para FechaOperacion o FechaExpedicionFactura posterior o igual a 1 de octubre de 2024 e inferior o igual a 31 de diciembre de 2024.',
  '2000': 'El cálculo de la huella suministrada es incorrecta.',
  '2004': 'El valor del campo FechaHoraHusoGenRegistro debe ser la fecha actual del sistema de la AEAT, admitiéndose un margen de error de: 240 segundos.',
  '2007': 'No debe informarse como primer registro, existen facturas emitidas con el obligado emisión y el sistema informático actual.',
  '3000': 'Registro de facturación duplicado.',
  '3001': 'El registro de facturación ya ha sido dado de baja.',
  '3002': 'No existe el registro de facturación.',
  '4102': 'El XML no cumple el esquema. Falta informar campo obligatorio.',
  '4103': 'Se ha producido un error inesperado al parsear el XML.',
};
const textOf = (code: string) => TEXTS[code] ?? `Error ${code}.`;

export type FakeAeatBehaviour =
  | { kind: 'normal' }
  /** Every record is refused (EstadoRegistro Incorrecto) with this code. */
  | { kind: 'reject'; code: string; description?: string }
  /** Every valid record is accepted with errors (AceptadoConErrores) with this code. */
  | { kind: 'acceptWithErrors'; code: string; description?: string }
  /** HTTP 503 with an HTML page (no SOAP). */
  | { kind: 'unavailable' }
  /** HTTP 429 (AEAT limiting the request rate), with Retry-After when given. */
  | { kind: 'rateLimited'; retryAfterSeconds?: number }
  /** Never answers (until `releaseHung`). */
  | { kind: 'hang' };

/** One request the fake processed (schema-valid): whose, and its records in order. */
export interface Submission {
  nif: string;
  /** The Cabecera's RemisionVoluntaria/Incidencia (S: sent after an incident), if given. */
  incidencia: string | undefined;
  /** `Alta A-1`, `Anulacion A-1`…, in request order. */
  records: string[];
  /** The answer's CSV (absent when every record was refused). */
  csv: string | undefined;
}

interface InvoiceId {
  IDEmisorFactura: string;
  NumSerieFactura: string;
  FechaExpedicionFactura: string;
}

export interface HeldRecord {
  type: 'Alta' | 'Anulacion';
  id: InvoiceId;
  huella: string;
  estado: 'Correcta' | 'AceptadaConErrores';
  idPeticion: string;
  /** Set on an alta once an annulment of it was accepted. */
  cancelled: boolean;
  /** Set on an alta once a Subsanacion of it was accepted (the later record holds the invoice now). */
  corrected?: true;
}

export interface FakeAeatVerifactu {
  url: string;
  caPem: string;
  /** Every HTTP request received (fake-authority's list). */
  requests: FakeRequest[];
  /** Raw answers sent, in order. */
  responses: string[];
  /** Seconds sent as TiempoEsperaEnvio (default 60, AEAT's usual value). */
  waitSeconds: number;
  /**
   * AEAT's clock, against which FechaHoraHusoGenRegistro is checked (2004, margin 240 s);
   * undefined (the default): not checked. Tests give the service's clock.
   */
  now: (() => Date) | undefined;
  behave(b: FakeAeatBehaviour): void;
  /** Per record: a code to refuse it with (EstadoRegistro Incorrecto), or undefined to judge it normally. */
  refuseRecord: ((r: { type: 'Alta' | 'Anulacion'; NumSerieFactura: string }) => { code: string; description?: string } | undefined) | undefined;
  /** Per request: an AEAT code to refuse the whole message with (a SOAP Fault, nothing judged), or undefined. */
  faultRequest: ((records: string[]) => string | undefined) | undefined;
  /** The requests processed (schema-valid, judged), in order. */
  submissions: Submission[];
  /** Answers every request hung so far with HTTP 503 (unprocessed: nothing is registered). */
  releaseHung(): void;
  /** Records held for an issuer, in acceptance order (altas and anulaciones). */
  held(nif: string): HeldRecord[];
  close(): Promise<void>;
}

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  parseTagValue: false,
  isArray: (name) => name === 'RegistroFactura',
});

type Node = Record<string, unknown>;
const node = (v: unknown): Node => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Node) : {});
const text = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/**
 * The element inside the SOAP 1.1 Body, as a document of its own: the namespace
 * declarations it inherits from Envelope and Body are copied onto it. Null when the text
 * is not a SOAP 1.1 envelope with one element in its Body.
 */
export function soapBodyContent(xml: string): string | null {
  const env = /<(?:([\w.-]+):)?Envelope\b([^>]*)>/.exec(xml);
  if (!env) return null;
  const envPrefix = env[1] ?? '';
  const body = new RegExp(`<${envPrefix ? `${envPrefix}:` : ''}Body\\b([^>]*)>([\\s\\S]*)</${envPrefix ? `${envPrefix}:` : ''}Body>`).exec(xml);
  if (!body) return null;
  const declarations = new Map<string, string>();
  for (const attrs of [env[2] ?? '', body[1] ?? '']) {
    for (const m of attrs.matchAll(/\s(xmlns(?::[\w.-]+)?)="([^"]*)"/g)) declarations.set(m[1]!, m[2]!);
  }
  const envNs = declarations.get(envPrefix ? `xmlns:${envPrefix}` : 'xmlns');
  if (envNs !== NS_SOAP) return null;
  const content = (body[2] ?? '').trim();
  const first = /^<([\w.:-]+)([^>]*?)(\/?)>/.exec(content);
  if (!first) return null;
  const own = new Set([...(first[2] ?? '').matchAll(/\s(xmlns(?::[\w.-]+)?)=/g)].map((m) => m[1]));
  const inherited = [...declarations].filter(([k]) => !own.has(k)).map(([k, val]) => ` ${k}="${val}"`).join('');
  return `<${first[1]}${first[2]}${inherited}${first[3]}>${content.slice(first[0].length)}`;
}

const fault = (code: string, detail: string): FakeResponse => ({
  status: 500,
  headers: { 'content-type': 'text/xml; charset=utf-8' },
  body:
    `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${NS_SOAP}"><env:Body><env:Fault>` +
    `<faultcode>env:Client</faultcode><faultstring>${escapeText(`Codigo[${code}].${textOf(code)}${detail ? `: ${detail}` : ''}`)}</faultstring>` +
    '</env:Fault></env:Body></env:Envelope>',
});

/** A node that may repeat: its occurrences (the parser makes an array of two or more). */
const many = (v: unknown): Node[] => (Array.isArray(v) ? v.map(node) : v === undefined ? [] : [node(v)]);
/** DD-MM-YYYY → YYYY-MM-DD (comparable as text). */
const isoOf = (dmy: string): string => dmy.split('-').reverse().join('-');
const CUSTOMER_TYPES = new Set(['F1', 'F3', 'R1', 'R2', 'R3', 'R4']);
/** The IVA rates AEAT dates by FechaOperacion (FechaExpedicionFactura without one), and their codes. */
const DATED_RATES: readonly [number, string, string, string][] = [
  [5, '2022-07-01', '2024-09-30', '1194'],
  [2, '2024-10-01', '2024-12-31', '1235'],
  [7.5, '2024-10-01', '2024-12-31', '1236'],
];

/**
 * Some of AEAT's business validations of a RegistroAlta (AEAT's "Validaciones y errores" of
 * VERI*FACTU, codes and texts of its errores.properties): the code of the first one the record
 * fails, or undefined. The census checks are not modelled (every well-formed NIF exists here).
 */
export function businessRefusal(obligadoNif: string, r: Node, fechaExpedicion: string): string | undefined {
  const tipo = text(r.TipoFactura);
  const destinatarios = many(node(r.Destinatarios).IDDestinatario);
  if (CUSTOMER_TYPES.has(tipo) && destinatarios.length === 0) return '1189';
  if ((tipo === 'F2' || tipo === 'R5') && destinatarios.length > 0) return '1190';
  for (const d of destinatarios) {
    const otro = node(d.IDOtro);
    const idType = text(otro.IDType);
    if (tipo === 'R3' && 'IDOtro' in d && idType !== '07') return '1191';
    if (tipo === 'R2' && 'IDOtro' in d && idType !== '07' && idType !== '02') return '1192';
    if (text(d.NIF) !== '' && text(d.NIF) === obligadoNif) return '1193';
  }
  const detalles = many(node(r.Desglose).DetalleDesglose);
  const amount = (v: unknown) => Number(text(v) || '0');
  if (tipo === 'F2' && text(r.FacturaSinIdentifDestinatarioArt61d) !== 'S') {
    const sum = detalles.reduce((s, d) => s + amount(d.BaseImponibleOimporteNoSujeto) + amount(d.CuotaRepercutida), 0);
    if (sum > 3000) return '1150';
  }
  const day = isoOf(text(r.FechaOperacion) || fechaExpedicion);
  for (const d of detalles) {
    const impuesto = text(d.Impuesto);
    if (impuesto !== '' && impuesto !== '01') continue;
    const rate = text(d.TipoImpositivo);
    const dated = rate === '' ? undefined : DATED_RATES.find(([r]) => r === Number(rate));
    if (dated && (day < dated[1] || day > dated[2])) return dated[3];
  }
  if (Math.abs(amount(r.ImporteTotal)) >= 100_000_000 && text(r.Macrodato) !== 'S') return '1139';
  return undefined;
}

interface Line {
  id: InvoiceId;
  tipoOperacion: 'Alta' | 'Anulacion';
  estado: 'Correcto' | 'AceptadoConErrores' | 'Incorrecto';
  code?: string | undefined;
  description?: string | undefined;
  duplicado?: HeldRecord | undefined;
}

export async function startFakeAeatVerifactu(): Promise<FakeAeatVerifactu> {
  let behaviour: FakeAeatBehaviour = { kind: 'normal' };
  const store = new Map<string, HeldRecord[]>();
  const responses: string[] = [];
  let counter = 0;
  const hung: ((r: FakeResponse) => void)[] = [];
  const heldOf = (nif: string): HeldRecord[] => {
    let list = store.get(nif);
    if (!list) store.set(nif, (list = []));
    return list;
  };

  const fake: FakeAeatVerifactu = {
    url: '',
    caPem: '',
    requests: [],
    responses,
    waitSeconds: 60,
    now: undefined,
    behave: (b) => (behaviour = b),
    refuseRecord: undefined,
    faultRequest: undefined,
    submissions: [],
    releaseHung: () => {
      for (const answer of hung.splice(0)) answer({ status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body>Servicio no disponible</body></html>' });
    },
    held: (nif) => [...(store.get(nif) ?? [])],
    close: async () => undefined,
  };

  /** AEAT's margin between a record's FechaHoraHusoGenRegistro and its own clock (2004). */
  const MARGIN_MS = 240_000;
  /** 2004 when the record's generation time is out of the margin and not excused by Incidencia S. */
  function timeRefusal(r: Node, incidencia: boolean): string | undefined {
    const now = fake.now?.();
    if (now === undefined) return undefined;
    const at = new Date(text(r.FechaHoraHusoGenRegistro)).getTime();
    const age = now.getTime() - at;
    if (age > MARGIN_MS && !incidencia) return '2004';
    if (-age > MARGIN_MS) return '2004';
    return undefined;
  }

  function processRecord(obligadoNif: string, reg: Node, idPeticion: string, incidencia: boolean): Line {
    const isAlta = 'RegistroAlta' in reg;
    const r = node(isAlta ? reg.RegistroAlta : reg.RegistroAnulacion);
    const idf = node(r.IDFactura);
    const id: InvoiceId = isAlta
      ? { IDEmisorFactura: text(idf.IDEmisorFactura), NumSerieFactura: text(idf.NumSerieFactura), FechaExpedicionFactura: text(idf.FechaExpedicionFactura) }
      : {
          IDEmisorFactura: text(idf.IDEmisorFacturaAnulada),
          NumSerieFactura: text(idf.NumSerieFacturaAnulada),
          FechaExpedicionFactura: text(idf.FechaExpedicionFacturaAnulada),
        };
    const tipoOperacion = isAlta ? 'Alta' : 'Anulacion';
    const refuse = (code: string, description = textOf(code), duplicado?: HeldRecord): Line => ({ id, tipoOperacion, estado: 'Incorrecto', code, description, duplicado });

    if (behaviour.kind === 'reject') return refuse(behaviour.code, behaviour.description);
    const own = fake.refuseRecord?.({ type: tipoOperacion, NumSerieFactura: id.NumSerieFactura });
    if (own) return refuse(own.code, own.description);
    if (id.IDEmisorFactura !== obligadoNif) return refuse('1108');
    const business = isAlta ? businessRefusal(obligadoNif, r, id.FechaExpedicionFactura) : undefined;
    if (business !== undefined) return refuse(business);

    // Subsanacion / RechazoPrevio (AEAT's "Validaciones y errores", RegistroAlta §2).
    const subsanacion = isAlta ? text(r.Subsanacion) : '';
    const rechazoPrevio = isAlta ? text(r.RechazoPrevio) : '';
    if (rechazoPrevio === 'X' && subsanacion !== 'S') return refuse('1153');
    if (rechazoPrevio === 'S' && subsanacion !== 'S') return refuse('1161');

    const held = heldOf(id.IDEmisorFactura);
    const sameInvoice = (h: HeldRecord) =>
      h.type === 'Alta' && h.corrected !== true && h.id.NumSerieFactura === id.NumSerieFactura && h.id.FechaExpedicionFactura === id.FechaExpedicionFactura;
    const original = held.find(sameInvoice);
    // A subsanación (S/N, S/S) corrects the record AEAT holds; an alta por rechazo (S/X) and
    // a plain alta (N/N) register one AEAT does not hold.
    const corrects = subsanacion === 'S' && rechazoPrevio !== 'X';
    if (corrects && !original) return refuse('3002');
    // Not in AEAT's documents: a subsanación of an annulled invoice is taken as refused (3001, as its annulment again).
    if (corrects && original?.cancelled) return refuse('3001');
    if (isAlta && !corrects && original) return refuse('3000', undefined, original);
    if (!isAlta && !original) return refuse('3002');
    if (!isAlta && original?.cancelled) return refuse('3001');

    // The chain: RegistroAnterior must be the last record held for this issuer.
    const enc = node(r.Encadenamiento);
    const last = held.at(-1);
    let code: string | undefined;
    let previousHuella = '';
    if ('PrimerRegistro' in enc) {
      if (last) code = '2007';
    } else {
      const prev = node(enc.RegistroAnterior);
      previousHuella = text(prev.Huella);
      const matches =
        last !== undefined &&
        previousHuella === last.huella &&
        text(prev.IDEmisorFactura) === last.id.IDEmisorFactura &&
        text(prev.NumSerieFactura) === last.id.NumSerieFactura &&
        text(prev.FechaExpedicionFactura) === last.id.FechaExpedicionFactura;
      if (!matches) return refuse('1180');
    }

    // The huella, recomputed from the record's own values.
    const huella = text(r.Huella);
    const expected = isAlta
      ? huellaAlta({
          ...id, TipoFactura: text(r.TipoFactura), CuotaTotal: text(r.CuotaTotal), ImporteTotal: text(r.ImporteTotal),
          Huella: previousHuella, FechaHoraHusoGenRegistro: text(r.FechaHoraHusoGenRegistro),
        })
      : huellaAnulacion({
          IDEmisorFacturaAnulada: id.IDEmisorFactura, NumSerieFacturaAnulada: id.NumSerieFactura,
          FechaExpedicionFacturaAnulada: id.FechaExpedicionFactura, Huella: previousHuella,
          FechaHoraHusoGenRegistro: text(r.FechaHoraHusoGenRegistro),
        });
    if (huella !== expected) code ??= '2000';
    code ??= timeRefusal(r, incidencia);
    let description = code === undefined ? undefined : textOf(code);
    if (code === undefined && behaviour.kind === 'acceptWithErrors') {
      code = behaviour.code;
      description = behaviour.description ?? textOf(code);
    }

    const estado = code === undefined ? 'Correcto' : 'AceptadoConErrores';
    held.push({ type: tipoOperacion, id, huella, estado: code === undefined ? 'Correcta' : 'AceptadaConErrores', idPeticion, cancelled: false });
    if (!isAlta && original) original.cancelled = true;
    if (corrects && original) original.corrected = true;
    return { id, tipoOperacion, estado, code, description };
  }

  function answer(obligado: { NombreRazon: string; NIF: string }, lines: Line[]): FakeResponse & { csv: string | undefined } {
    const ok = lines.filter((l) => l.estado !== 'Incorrecto').length;
    const estadoEnvio = ok === lines.length ? 'Correcto' : ok === 0 ? 'Incorrecto' : 'ParcialmenteCorrecto';
    counter += 1;
    // RespuestaBaseType: CSV and DatosPresentacion only when the submission is not rejected.
    const csv = `FAKECSV${String(counter).padStart(9, '0')}`;
    const sf = (name: string, value: string) => `<tik:${name}>${escapeText(value)}</tik:${name}>`;
    const r = (name: string, value: string) => `<tikR:${name}>${escapeText(value)}</tikR:${name}>`;
    const linea = (l: Line) =>
      '<tikR:RespuestaLinea><tikR:IDFactura>' +
      sf('IDEmisorFactura', l.id.IDEmisorFactura) + sf('NumSerieFactura', l.id.NumSerieFactura) + sf('FechaExpedicionFactura', l.id.FechaExpedicionFactura) +
      `</tikR:IDFactura><tikR:Operacion>${sf('TipoOperacion', l.tipoOperacion)}</tikR:Operacion>` +
      r('EstadoRegistro', l.estado) +
      (l.code !== undefined ? r('CodigoErrorRegistro', l.code) : '') +
      (l.description !== undefined ? r('DescripcionErrorRegistro', l.description) : '') +
      (l.duplicado
        ? `<tikR:RegistroDuplicado>${sf('IdPeticionRegistroDuplicado', l.duplicado.idPeticion)}${sf('EstadoRegistroDuplicado', l.duplicado.cancelled ? 'Anulada' : l.duplicado.estado)}</tikR:RegistroDuplicado>`
        : '') +
      '</tikR:RespuestaLinea>';
    const body =
      `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="${NS_SOAP}"><env:Header></env:Header><env:Body>` +
      `<tikR:RespuestaRegFactuSistemaFacturacion xmlns:tikR="${NS_SFR}" xmlns:tik="${NS_SF}">` +
      (estadoEnvio !== 'Incorrecto'
        ? r('CSV', csv) + `<tikR:DatosPresentacion>${sf('NIFPresentador', obligado.NIF)}${sf('TimestampPresentacion', new Date().toISOString())}</tikR:DatosPresentacion>`
        : '') +
      `<tikR:Cabecera><tik:ObligadoEmision>${sf('NombreRazon', obligado.NombreRazon)}${sf('NIF', obligado.NIF)}</tik:ObligadoEmision></tikR:Cabecera>` +
      r('TiempoEsperaEnvio', String(fake.waitSeconds)) +
      r('EstadoEnvio', estadoEnvio) +
      lines.map(linea).join('') +
      '</tikR:RespuestaRegFactuSistemaFacturacion></env:Body></env:Envelope>';
    return { status: 200, headers: { 'content-type': 'text/xml; charset=utf-8' }, body, csv: estadoEnvio !== 'Incorrecto' ? csv : undefined };
  }

  async function handle(req: FakeRequest): Promise<FakeResponse> {
    if (behaviour.kind === 'hang') return new Promise<FakeResponse>((resolve) => hung.push(resolve));
    if (behaviour.kind === 'rateLimited') {
      const after = behaviour.retryAfterSeconds;
      return { status: 429, headers: { 'content-type': 'text/html', ...(after !== undefined ? { 'retry-after': String(after) } : {}) }, body: '<html>Too Many Requests</html>' };
    }
    if (behaviour.kind === 'unavailable') {
      return { status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>Servicio no disponible</h1></body></html>' };
    }
    if (req.method !== 'POST' || req.path !== VERIFACTU_PATH) return { status: 404, headers: { 'content-type': 'text/html' }, body: '<html>Not found</html>' };
    const xml = req.body.toString('utf8');
    const valid = XMLValidator.validate(xml);
    const content = valid === true ? soapBodyContent(xml) : null;
    if (content === null) return fault('4103', valid === true ? 'no SOAP 1.1 Body' : valid.err.msg);
    if (HAVE_SCHEMAS) {
      const check = xsdValidate(content, 'es/verifactu/SuministroLR.xsd');
      if (!check.ok) return fault('4102', check.output.split('\n').find((l) => /error/i.test(l)) ?? check.output);
    }
    const doc = node(parser.parse(content));
    const root = node(doc.RegFactuSistemaFacturacion);
    const cabecera = node(root.Cabecera);
    const obligado = node(cabecera.ObligadoEmision);
    const incidencia = 'RemisionVoluntaria' in cabecera ? text(node(cabecera.RemisionVoluntaria).Incidencia) || undefined : undefined;
    const header = { NombreRazon: text(obligado.NombreRazon), NIF: text(obligado.NIF) };
    const idPeticion = String(counter + 1);
    const registros = Array.isArray(root.RegistroFactura) ? root.RegistroFactura : [];
    const names = registros.map((reg) => {
      const r = node(reg);
      const alta = 'RegistroAlta' in r;
      const idf = node(node(alta ? r.RegistroAlta : r.RegistroAnulacion).IDFactura);
      return `${alta ? 'Alta' : 'Anulacion'} ${text(alta ? idf.NumSerieFactura : idf.NumSerieFacturaAnulada)}`;
    });
    const faultCode = fake.faultRequest?.(names);
    if (faultCode !== undefined) return fault(faultCode, '');
    const lines = registros.map((reg) => processRecord(header.NIF, node(reg), idPeticion, incidencia === 'S'));
    const res = answer(header, lines);
    fake.submissions.push({ nif: header.NIF, incidencia, records: names, csv: res.csv });
    return res;
  }

  const server: FakeAuthority = await startFakeAuthority(async (req) => {
    const res = await handle(req);
    responses.push(typeof res.body === 'string' ? res.body : res.body.toString('utf8'));
    return res;
  });
  fake.url = server.url;
  fake.caPem = server.caPem;
  fake.requests = server.requests;
  fake.close = () => {
    fake.releaseHung();
    return server.close();
  };
  return fake;
}
