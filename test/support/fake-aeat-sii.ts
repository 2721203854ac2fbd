/**
 * A fake AEAT SII issued-invoice service (port SiiFactFEV1SOAP of
 * SuministroFactEmitidas.wsdl) on top of the fake authority (real HTTPS on 127.0.0.1,
 * client certificate required):
 *
 * - takes the SOAP body's element out of the envelope (with its in-scope namespace
 *   declarations) and validates it against the official SuministroLR.xsd with xmllint;
 *   an invalid message gets a SOAP fault "Codigo[4102]…" with HTTP 500, as AEAT does;
 * - remembers what it registered: an alta of an invoice it already holds is refused
 *   with 3000 (and the CSV of the first one), a baja of an unknown invoice with 3002, a
 *   second baja with 3001 (and the CSV of the first baja); a modification (TipoComunicacion
 *   A1) replaces the FacturaExpedida of an invoice it holds (its state Correcta, or
 *   AceptadaConErrores in that mode), and is refused with 3002 "No existe el registro de
 *   facturación." for an invoice it does not hold (never registered, or annulled);
 * - answers per RespuestaSuministro.xsd with a CSV; a duplicate's line carries the CSV
 *   AEAT holds unless told not to (`duplicateCsv = false`: the schema makes it optional);
 * - answers the consultation ConsultaLRFacturasEmitidas (the request validated against
 *   ConsultaLR.xsd) from its book, per RespuestaConsultaLR.xsd: each invoice of the
 *   Titular's period (and number and date, when the filter names them) with its data, its
 *   DatosPresentacion (CSV) and EstadoFactura (Correcta, AceptadaConErrores, Anulada). For
 *   an annulled invoice the presentation is the annulment's (`annulledPresentation =
 *   'registration'`: the alta's), TimestampUltimaModificacion the annulment's time. Its
 *   own clock gives every submission a later second than the one before;
 * - can be told to refuse records with a code, accept them with errors, answer a SOAP
 *   fault, answer 503 without SOAP, or never answer; the consultation on its own
 *   (`setConsultaMode`): a SOAP fault, 503, or no answer.
 *
 * Independent of the code under test: its own namespaces and parsing.
 */
import { createHash } from 'node:crypto';
import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { startFakeAuthority, type FakeAuthority, type FakeRequest, type FakeResponse } from './fake-authority.ts';
import { HAVE_SCHEMAS, xsdValidate } from './xml-tools.ts';

const BASE = 'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/ssii/fact/ws';
const NS_SII = `${BASE}/SuministroInformacion.xsd`;
const NS_SIIR = `${BASE}/RespuestaSuministro.xsd`;
const NS_SIILRRC = `${BASE}/RespuestaConsultaLR.xsd`;
const NS_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SII_FAKE_PATH = '/wlpl/SSII-FACT/ws/fe/SiiFactFEV1SOAP';

export type FakeSiiMode =
  | { kind: 'normal' }
  /** Every record: EstadoRegistro Incorrecto with this code. */
  | { kind: 'reject'; code: string; description?: string }
  /** Every record: registered, EstadoRegistro AceptadoConErrores with this code. */
  | { kind: 'accept_with_errors'; code: string; description?: string }
  /** A SOAP fault "Codigo[code].description" (faultcode Client, or Server). */
  | { kind: 'fault'; code: string; description: string; server?: boolean }
  /** HTTP 503 with an HTML page (no SOAP). */
  | { kind: 'unavailable' }
  /** Never answers. */
  | { kind: 'hang' };

/** How the consultation answers (the submissions keep their own mode). */
export type FakeSiiConsultaMode =
  | { kind: 'normal' }
  | { kind: 'fault'; code: string; description: string; server?: boolean }
  | { kind: 'unavailable' }
  | { kind: 'hang' };

export interface FakeAeatSii {
  /** `https://127.0.0.1:<port>`: use as `authorityBaseUrl`. */
  url: string;
  /** Trust as `authorityCa`. */
  caPem: string;
  requests: FakeRequest[];
  /** The SOAP body content of the last request (what was validated). */
  lastBody: string | undefined;
  /** The last SOAP answer sent. */
  lastAnswer: string | undefined;
  /** Registered invoices: `NIF|NumSerie|Fecha` → CSV. */
  registered: Map<string, string>;
  /** Cancelled invoices: `NIF|NumSerie|Fecha` → CSV of the baja. */
  cancelled: Map<string, string>;
  /** Whether a duplicate's answer line (3000, 3001) carries the CSV AEAT holds (default true). */
  duplicateCsv: boolean;
  /** Which presentation the consultation shows for an annulled invoice (default `annulment`). */
  annulledPresentation: 'annulment' | 'registration';
  /** The consultation requests received (each also in `requests`). */
  consultas: FakeRequest[];
  /** What the book holds of `NIF|NumSerie|Fecha`: its state, FacturaExpedida (by local name) and whether an A1 modified it. */
  invoice(key: string): { estado: 'Correcta' | 'AceptadaConErrores'; factura: Obj; modified: boolean; annulled: boolean } | undefined;
  setMode(mode: FakeSiiMode): void;
  setConsultaMode(mode: FakeSiiConsultaMode): void;
  reset(): void;
  close(): Promise<void>;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

// Document order and attributes kept, to cut the body element out of the envelope.
const ordered = new XMLParser({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false, parseAttributeValue: false, trimValues: false });
const orderedBuilder = new XMLBuilder({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: '@_', suppressEmptyNode: false });
// Values by local name, to read the records.
const plain = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  parseTagValue: false,
  isArray: (name) => name === 'RegistroLRFacturasEmitidas' || name === 'RegistroLRBajaExpedidas',
});

/** What the fake's book holds about one invoice. */
interface BookEntry {
  nif: string;
  numSerie: string;
  fecha: string;
  exercise: string;
  period: string;
  /** FacturaExpedida as sent, by local name. */
  factura: Obj;
  estado: 'Correcta' | 'AceptadaConErrores';
  alta: { csv: string; at: string; presenter: string };
  /** The last modification (A1) of it. */
  modificacion?: { csv: string; at: string; presenter: string } | undefined;
  baja?: { csv: string; at: string; presenter: string } | undefined;
}

/**
 * FacturaExpedida (SuministroInformacion.xsd, namespace sii) as RespuestaConsultaLR.xsd's
 * DatosFacturaEmitida: its children, and those of FacturasRectificadas and TipoDesglose,
 * are declared there (namespace siiLRRC); what they contain keeps the sii types. Cobros
 * (required) closes it.
 */
function datosFacturaEmitida(factura: Obj): Obj {
  const LOCAL_PARENTS = new Set(['FacturasRectificadas', 'TipoDesglose']);
  // Below those, every element is of a sii type: namespace sii.
  const tree = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(tree);
    if (!isObj(v)) return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [`sii:${k}`, tree(x)]));
  };
  const out: Obj = {};
  for (const [name, value] of Object.entries(factura)) {
    const inner = LOCAL_PARENTS.has(name) && isObj(value)
      ? Object.fromEntries(Object.entries(value).map(([k, x]) => [`siiLRRC:${k}`, tree(x)]))
      : tree(value);
    out[`siiLRRC:${name}`] = inner;
  }
  out['siiLRRC:Cobros'] = 'N';
  return out;
}
const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, indentBy: '  ', suppressEmptyNode: false });

type OrderedNode = Obj & { ':@'?: Obj };
const local = (name: string): string => name.slice(name.indexOf(':') + 1);
const elementName = (n: OrderedNode): string | undefined => Object.keys(n).find((k) => k !== ':@' && k !== '#text');
const nsAttrs = (n: OrderedNode): Obj => Object.fromEntries(Object.entries(n[':@'] ?? {}).filter(([k]) => k === '@_xmlns' || k.startsWith('@_xmlns:')));

/** The first element inside soap:Body, serialized with the namespaces in scope. */
export function soapBodyContent(xml: string): string | undefined {
  const doc = ordered.parse(xml) as OrderedNode[];
  const env = doc.find((n) => local(elementName(n) ?? '') === 'Envelope');
  if (!env) return undefined;
  const envName = elementName(env)!;
  const body = (env[envName] as OrderedNode[]).find((n) => local(elementName(n) ?? '') === 'Body');
  if (!body) return undefined;
  const bodyName = elementName(body)!;
  const child = (body[bodyName] as OrderedNode[]).find((n) => elementName(n) !== undefined);
  if (!child) return undefined;
  const childName = elementName(child)!;
  const attrs = { ...nsAttrs(env), ...nsAttrs(body), ...(child[':@'] ?? {}) };
  return orderedBuilder.build([{ [childName]: child[childName], ':@': attrs }]) as string;
}

function csvOf(seed: string): string {
  const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  return [...createHash('sha256').update(seed).digest().subarray(0, 16)].map((b) => alnum[b % alnum.length]).join('');
}

function madridTimestamp(at: Date): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Europe/Madrid', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
  }).formatToParts(at);
  const p = (t: string) => parts.find((x) => x.type === t)?.value ?? '';
  return `${p('day')}-${p('month')}-${p('year')} ${p('hour')}:${p('minute')}:${p('second')}`;
}

const soap = (inner: Obj): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ 'env:Envelope': { '@_xmlns:env': NS_ENV, 'env:Header': '', 'env:Body': inner } })}`;

export function soapFault(faultcode: 'Client' | 'Server', faultstring: string): FakeResponse {
  return {
    status: 500,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: soap({ 'env:Fault': { faultcode: `env:${faultcode}`, faultstring } }),
  };
}

interface LineResult {
  id: { nif: string; numSerie: string; fecha: string };
  estado: 'Correcto' | 'AceptadoConErrores' | 'Incorrecto';
  code?: string;
  description?: string;
  csv?: string;
  duplicate?: string;
}

export async function startFakeAeatSii(): Promise<FakeAeatSii> {
  let mode: FakeSiiMode = { kind: 'normal' };
  let consultaMode: FakeSiiConsultaMode = { kind: 'normal' };
  let submissions = 0;
  const registered = new Map<string, string>();
  const cancelled = new Map<string, string>();
  const book = new Map<string, BookEntry>();
  const consultas: FakeRequest[] = [];

  const state = {
    lastBody: undefined as string | undefined,
    lastAnswer: undefined as string | undefined,
    duplicateCsv: true,
    annulledPresentation: 'annulment' as 'annulment' | 'registration',
    lastStampMs: 0,
  };

  /** Madrid time of a presentation: never the same second as the one before. */
  const stamp = (): string => {
    const ms = Math.max(Date.now(), state.lastStampMs + 1000);
    state.lastStampMs = ms;
    return madridTimestamp(new Date(ms));
  };

  const handler = async (req: FakeRequest): Promise<FakeResponse> => {
    if (mode.kind === 'hang') return new Promise<FakeResponse>(() => undefined);
    if (mode.kind === 'unavailable') return { status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body>Servicio no disponible</body></html>' };
    if (req.path !== SII_FAKE_PATH) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };

    const content = soapBodyContent(req.body.toString('utf8'));
    state.lastBody = content;
    if (content === undefined) return answer(soapFault('Client', 'Codigo[4103].Se ha producido un error inesperado al parsear el XML.'));
    const rootName = /^<(?:[\w.-]+:)?([\w.-]+)/.exec(content)?.[1];
    if (rootName === 'ConsultaLRFacturasEmitidas') {
      consultas.push(req);
      return consulta(content);
    }
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(content, 'es/sii/SuministroLR.xsd');
      if (!v.ok) {
        const first = v.output.split('\n').find((l) => /error/i.test(l)) ?? v.output;
        return answer(soapFault('Client', `Codigo[4102].El XML no cumple el esquema. ${first}`));
      }
    }
    if (mode.kind === 'fault') return answer(soapFault(mode.server ? 'Server' : 'Client', `Codigo[${mode.code}].${mode.description}`));

    const doc = plain.parse(content) as Obj;
    const alta = doc.SuministroLRFacturasEmitidas;
    const baja = doc.BajaLRFacturasEmitidas;
    const root = isObj(alta) ? alta : isObj(baja) ? baja : undefined;
    if (root === undefined) return answer(soapFault('Client', 'Codigo[4102].El XML no cumple el esquema. Operación no soportada por este servicio.'));
    const isBaja = root === baja;
    const cab = isObj(root.Cabecera) ? root.Cabecera : {};
    const titular = isObj(cab.Titular) ? cab.Titular : {};
    const n = ++submissions;
    const at = stamp();
    const records = ((isBaja ? root.RegistroLRBajaExpedidas : root.RegistroLRFacturasEmitidas) as Obj[]) ?? [];
    /** Book entries this submission files, completed with its CSV below. */
    const filed: { key: string; entry: BookEntry; baja: boolean; modificacion?: boolean }[] = [];
    // A1: "Modificación (La información que se comunica sustituye a la existente relacionada)".
    const modifying = !isBaja && str(cab.TipoComunicacion) === 'A1';

    const lines: LineResult[] = records.map((r, i) => {
      const idf = isObj(r.IDFactura) ? r.IDFactura : {};
      const emisor = isObj(idf.IDEmisorFactura) ? idf.IDEmisorFactura : {};
      const id = { nif: str(emisor.NIF), numSerie: str(idf.NumSerieFacturaEmisor), fecha: str(idf.FechaExpedicionFacturaEmisor) };
      const key = `${id.nif}|${id.numSerie}|${id.fecha}`;
      const heldCsv = (csv: string) => (state.duplicateCsv ? { csv } : {});
      if (mode.kind === 'reject') return { id, estado: 'Incorrecto', code: mode.code, description: mode.description ?? `Error ${mode.code}` };
      if (isBaja) {
        const done = cancelled.get(key);
        if (done) return { id, estado: 'Incorrecto', code: '3001', description: 'El registro de facturación ya ha sido dado de baja.', ...heldCsv(done) };
        if (!registered.has(key)) return { id, estado: 'Incorrecto', code: '3002', description: 'No existe el registro de facturación.' };
        registered.delete(key);
        cancelled.set(key, `pending:${i}`);
        const entry = book.get(key);
        if (entry) filed.push({ key, entry, baja: true });
        return { id, estado: 'Correcto' };
      }
      const withErrors = mode.kind === 'accept_with_errors';
      if (modifying) {
        const held = book.get(key);
        if (!registered.has(key) || held === undefined) return { id, estado: 'Incorrecto', code: '3002', description: 'No existe el registro de facturación.' };
        filed.push({
          key, baja: false, modificacion: true,
          entry: { ...held, factura: isObj(r.FacturaExpedida) ? r.FacturaExpedida : {}, estado: withErrors ? 'AceptadaConErrores' : 'Correcta' },
        });
        if (mode.kind === 'accept_with_errors') return { id, estado: 'AceptadoConErrores', code: mode.code, description: mode.description ?? `Aceptado con errores ${mode.code}` };
        return { id, estado: 'Correcto' };
      }
      const before = registered.get(key);
      if (before) return { id, estado: 'Incorrecto', code: '3000', description: 'Factura duplicada', ...heldCsv(before), duplicate: book.get(key)?.estado ?? 'Correcta' };
      registered.set(key, `pending:${i}`);
      const period = isObj(r.PeriodoLiquidacion) ? r.PeriodoLiquidacion : {};
      filed.push({
        key, baja: false,
        entry: {
          ...id, exercise: str(period.Ejercicio), period: str(period.Periodo),
          factura: isObj(r.FacturaExpedida) ? r.FacturaExpedida : {},
          estado: withErrors ? 'AceptadaConErrores' : 'Correcta',
          alta: { csv: '', at, presenter: str(titular.NIF) },
        },
      });
      if (mode.kind === 'accept_with_errors') return { id, estado: 'AceptadoConErrores', code: mode.code, description: mode.description ?? `Aceptado con errores ${mode.code}` };
      return { id, estado: 'Correcto' };
    });

    // EstadoEnvio per RespuestaSuministro.xsd: all correct → Correcto; all refused →
    // Incorrecto (no CSV: nothing was filed); otherwise ParcialmenteCorrecto.
    const estadoEnvio = lines.every((l) => l.estado === 'Correcto')
      ? 'Correcto'
      : lines.every((l) => l.estado === 'Incorrecto')
        ? 'Incorrecto'
        : 'ParcialmenteCorrecto';
    const csv = estadoEnvio === 'Incorrecto' ? undefined : csvOf(`sii-fake:${n}:${content}`);
    // What this submission filed is known by its CSV from now on.
    for (const map of [registered, cancelled]) {
      for (const [k, v] of map) if (v.startsWith('pending:') && csv) map.set(k, csv);
    }
    if (csv) {
      for (const f of filed) {
        if (f.baja) f.entry.baja = { csv, at, presenter: str(titular.NIF) };
        else if (f.modificacion) book.set(f.key, { ...f.entry, modificacion: { csv, at, presenter: str(titular.NIF) } });
        else book.set(f.key, { ...f.entry, alta: { ...f.entry.alta, csv } });
      }
    }

    const R = isBaja ? 'siiR:RespuestaLRBajaFacturasEmitidas' : 'siiR:RespuestaLRFacturasEmitidas';
    const cabecera: Obj = {
      'sii:IDVersionSii': str(cab.IDVersionSii),
      'sii:Titular': { 'sii:NombreRazon': str(titular.NombreRazon), 'sii:NIF': str(titular.NIF) },
      ...(isBaja ? {} : { 'sii:TipoComunicacion': str(cab.TipoComunicacion) }),
    };
    const body: Obj = {
      '@_xmlns:siiR': NS_SIIR,
      '@_xmlns:sii': NS_SII,
      ...(csv ? { 'siiR:CSV': csv } : {}),
      ...(csv ? { 'siiR:DatosPresentacion': { 'sii:NIFPresentador': str(titular.NIF), 'sii:TimestampPresentacion': at } } : {}),
      'siiR:Cabecera': cabecera,
      'siiR:EstadoEnvio': estadoEnvio,
      'siiR:RespuestaLinea': lines.map((l) => ({
        'siiR:IDFactura': {
          'sii:IDEmisorFactura': { 'sii:NIF': l.id.nif },
          'sii:NumSerieFacturaEmisor': l.id.numSerie,
          'sii:FechaExpedicionFacturaEmisor': l.id.fecha,
        },
        'siiR:EstadoRegistro': l.estado,
        ...(l.code ? { 'siiR:CodigoErrorRegistro': l.code } : {}),
        ...(l.description ? { 'siiR:DescripcionErrorRegistro': l.description } : {}),
        ...(l.csv ? { 'siiR:CSV': l.csv } : {}),
        ...(l.duplicate ? { 'siiR:RegistroDuplicado': { 'sii:EstadoRegistro': l.duplicate } } : {}),
      })),
    };
    return answer({ status: 200, headers: { 'content-type': 'text/xml; charset=utf-8' }, body: soap({ [R]: body }) });
  };

  /** ConsultaLRFacturasEmitidas: the Titular's invoices of the period (and number and date, when given). */
  const consulta = (content: string): Promise<FakeResponse> | FakeResponse => {
    if (consultaMode.kind === 'hang') return new Promise<FakeResponse>(() => undefined);
    if (consultaMode.kind === 'unavailable') return { status: 503, headers: { 'content-type': 'text/html' }, body: '<html><body>Servicio no disponible</body></html>' };
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(content, 'es/sii/ConsultaLR.xsd');
      if (!v.ok) {
        const first = v.output.split('\n').find((l) => /error/i.test(l)) ?? v.output;
        return answer(soapFault('Client', `Codigo[4102].El XML no cumple el esquema. ${first}`));
      }
    }
    if (consultaMode.kind === 'fault') return answer(soapFault(consultaMode.server ? 'Server' : 'Client', `Codigo[${consultaMode.code}].${consultaMode.description}`));
    const doc = plain.parse(content) as Obj;
    const root = isObj(doc.ConsultaLRFacturasEmitidas) ? doc.ConsultaLRFacturasEmitidas : {};
    const cab = isObj(root.Cabecera) ? root.Cabecera : {};
    const titular = isObj(cab.Titular) ? cab.Titular : {};
    const filtro = isObj(root.FiltroConsulta) ? root.FiltroConsulta : {};
    const period = isObj(filtro.PeriodoLiquidacion) ? filtro.PeriodoLiquidacion : {};
    const idf = isObj(filtro.IDFactura) ? filtro.IDFactura : {};
    const found = [...book.values()].filter((e) =>
      e.nif === str(titular.NIF) && e.exercise === str(period.Ejercicio) && e.period === str(period.Periodo)
      && (idf.NumSerieFacturaEmisor === undefined || e.numSerie === str(idf.NumSerieFacturaEmisor))
      && (idf.FechaExpedicionFacturaEmisor === undefined || e.fecha === str(idf.FechaExpedicionFacturaEmisor)));
    const body: Obj = {
      '@_xmlns:siiLRRC': NS_SIILRRC,
      '@_xmlns:sii': NS_SII,
      'sii:Cabecera': {
        'sii:IDVersionSii': str(cab.IDVersionSii),
        'sii:Titular': { 'sii:NombreRazon': str(titular.NombreRazon), 'sii:NIF': str(titular.NIF) },
      },
      'siiLRRC:PeriodoLiquidacion': { 'siiLRRC:Ejercicio': str(period.Ejercicio), 'siiLRRC:Periodo': str(period.Periodo) },
      'siiLRRC:IndicadorPaginacion': 'N',
      'siiLRRC:ResultadoConsulta': found.length > 0 ? 'ConDatos' : 'SinDatos',
      'siiLRRC:RegistroRespuestaConsultaLRFacturasEmitidas': found.map((e) => {
        const shown = e.baja && state.annulledPresentation === 'annulment' ? e.baja : e.modificacion ?? e.alta;
        return {
          'siiLRRC:IDFactura': {
            'sii:IDEmisorFactura': { 'sii:NIF': e.nif },
            'sii:NumSerieFacturaEmisor': e.numSerie,
            'sii:FechaExpedicionFacturaEmisor': e.fecha,
          },
          'siiLRRC:DatosFacturaEmitida': datosFacturaEmitida(e.factura),
          'siiLRRC:DatosPresentacion': { 'sii:NIFPresentador': shown.presenter, 'sii:TimestampPresentacion': shown.at, 'sii:CSV': shown.csv },
          'siiLRRC:EstadoFactura': {
            'siiLRRC:TimestampUltimaModificacion': (e.baja ?? e.modificacion ?? e.alta).at,
            'siiLRRC:EstadoRegistro': e.baja ? 'Anulada' : e.estado,
          },
        };
      }),
    };
    return answer({ status: 200, headers: { 'content-type': 'text/xml; charset=utf-8' }, body: soap({ 'siiLRRC:RespuestaConsultaLRFacturasEmitidas': body }) });
  };

  const answer = (res: FakeResponse): FakeResponse => {
    state.lastAnswer = typeof res.body === 'string' ? res.body : res.body.toString('utf8');
    return res;
  };

  const fake: FakeAuthority = await startFakeAuthority(handler);
  return {
    url: fake.url,
    caPem: fake.caPem,
    requests: fake.requests,
    consultas,
    get lastBody() {
      return state.lastBody;
    },
    get lastAnswer() {
      return state.lastAnswer;
    },
    get duplicateCsv() {
      return state.duplicateCsv;
    },
    set duplicateCsv(v: boolean) {
      state.duplicateCsv = v;
    },
    get annulledPresentation() {
      return state.annulledPresentation;
    },
    set annulledPresentation(v: 'annulment' | 'registration') {
      state.annulledPresentation = v;
    },
    registered,
    cancelled,
    invoice: (key) => {
      const e = book.get(key);
      return e && { estado: e.estado, factura: e.factura, modified: e.modificacion !== undefined, annulled: e.baja !== undefined };
    },
    setMode: (m) => {
      mode = m;
    },
    setConsultaMode: (m) => {
      consultaMode = m;
    },
    reset: () => {
      mode = { kind: 'normal' };
      consultaMode = { kind: 'normal' };
      state.duplicateCsv = true;
      state.annulledPresentation = 'annulment';
      registered.clear();
      cancelled.clear();
      book.clear();
      consultas.length = 0;
      fake.requests.length = 0;
      state.lastBody = undefined;
      state.lastAnswer = undefined;
    },
    close: () => fake.close(),
  };
}
