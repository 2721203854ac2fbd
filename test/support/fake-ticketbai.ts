/**
 * Fake TicketBAI authorities for tests, on the mutual-TLS fake of fake-authority.ts (a
 * request without a client certificate gets 403 before reaching these handlers). One
 * server answers every territory, since their paths differ:
 *
 * - Gipuzkoa (`/sarrerak/alta`, `/sarrerak/baja`) and Araba (`/TicketBAI/v1/facturas/`,
 *   `/TicketBAI/v1/anulaciones/`): one signed file per POST, validated against
 *   ticketbaiv1-2-2.xsd / anula_ticketbaiv1-2-2.xsd; the answer is a `TicketBaiResponse`
 *   (`Salida`: Estado 00 with a CSV, or 01 with `ResultadosValidacion`): 002 when the file
 *   does not validate, 005 for a TBAI identifier received before (019 for a second
 *   cancellation of the same invoice), or what the test asked for.
 * - Bizkaia LROE (`/N3B4000M/aurkezpena`): gzip body and `eus-bizkaia-n3-*` headers checked,
 *   the LROE request validated against its XSD, every base64 TicketBAI decoded and validated
 *   too, then a gzip `…Respuesta` (validated against its own XSD before it leaves) with a
 *   result per record, and the n3 answer headers. Duplicates answer B4_2000003 (alta) /
 *   B4_2000006 (anulación); chosen records can be rejected, which makes the answer
 *   "Parcialmente correcto".
 *
 * Both also apply the business rules `businessRefusal` lists (a rectificativa naming no corrected
 * invoice; Araba's reserved DFA_ series; Bizkaia, a recipient NIF that is not a correct one), as
 * the real services do on schema-valid files, and Araba and Gipuzkoa answer the consolidation
 * validations `businessWarnings` lists as the real ones do: received (Estado 00), with the
 * warning in ResultadosValidacion.
 *
 * Signatures are not verified (tests may edit official samples: another NIF, number…).
 * Codes named FAKE_* are this fake's own, where the real code is not documented to us.
 * Without ../shared/schemas, XSD checks are skipped (every file counts as valid).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { XMLParser } from 'fast-xml-parser';
import { ticketBaiIdentity, type LroeKind } from '../../src/countries/es-ticketbai/lroe/identity.ts';
import { LROE_DOCUMENTS, lroeModelFor, lroeNamespace, type LroeModel } from '../../src/countries/es-ticketbai/lroe/request.ts';
import { el } from '../../src/xml/escape.ts';
import { isValidSpanishNif } from '../../src/countries/es/nif.ts';
import { startFakeAuthority, type FakeAuthority, type FakeRequest, type FakeResponse } from './fake-authority.ts';
import { HAVE_SCHEMAS, schemaPath, xsdValidate } from './xml-tools.ts';

/** The official signed samples of the TicketBAI 1.2.2 package (shared/schemas/README.md). */
export const OFFICIAL_SAMPLES = {
  'alta-01': 'es/ticketbai/samples/TicketBAI_Alta_Faktura__Alta_Factura_01_lehena__primera.xml',
  'alta-02': 'es/ticketbai/samples/TicketBAI_Alta_Faktura__Alta_Factura_02_hurrengoa__sucesiva.xml',
  'anulacion-02': 'es/ticketbai/samples/TicketBAI_Baligabetzea_Faktura__Anulacion_Factura_02.xml',
} as const;
/** Their issuer: a natural person's NIF (Modelo 140 in Bizkaia). */
export const SAMPLE_NIF = '99999974E';

export function officialSample(name: keyof typeof OFFICIAL_SAMPLES): string {
  return fs.readFileSync(schemaPath(OFFICIAL_SAMPLES[name]), 'utf8');
}

/**
 * An official sample edited to be another invoice: issuer NIF, number, issue date. The
 * signature no longer verifies (the fakes do not check it), but the file still validates
 * against its XSD. The first 13 characters of SignatureValue are rewritten from the number
 * so that each variant has its own TBAI identifier.
 */
export function sampleVariant(xml: string, over: { nif?: string; number?: string; date?: string }): string {
  let out = xml;
  if (over.nif) out = out.replaceAll(`<NIF>${SAMPLE_NIF}</NIF>`, `<NIF>${over.nif}</NIF>`);
  if (over.number) {
    out = out.replace(/<NumFactura>[^<]*<\/NumFactura>/, `<NumFactura>${over.number}</NumFactura>`);
    out = out.replace(/(<ds:SignatureValue[^>]*>)[A-Za-z0-9+/]{13}/, (_m, open: string) => `${open}Var${over.number!.padStart(10, '0').slice(-10)}`);
  }
  if (over.date) out = out.replace(/<FechaExpedicionFactura>[^<]*<\/FechaExpedicionFactura>/, `<FechaExpedicionFactura>${over.date}</FechaExpedicionFactura>`);
  return out;
}

const TBAI_XSD = { alta: 'es/ticketbai/ticketbaiv1-2-2.xsd', anulacion: 'es/ticketbai/anula_ticketbaiv1-2-2.xsd' } as const;
const LROE_DIR = 'es/ticketbai/bizkaia-lroe/';

const REALTIME_PATHS: Record<string, { territory: 'gipuzkoa' | 'araba'; kind: LroeKind }> = {
  '/sarrerak/alta': { territory: 'gipuzkoa', kind: 'alta' },
  '/sarrerak/baja': { territory: 'gipuzkoa', kind: 'anulacion' },
  '/TicketBAI/v1/facturas/': { territory: 'araba', kind: 'alta' },
  '/TicketBAI/v1/anulaciones/': { territory: 'araba', kind: 'anulacion' },
};
const LROE_PATH = '/N3B4000M/aurkezpena';

export interface Verdict {
  code: string;
  message: string;
}

/** Who decides a record's fate: (number, series) of the invoice → a rejection, or undefined. */
export type RecordRule = (invoice: { series: string; number: string; kind: LroeKind }) => Verdict | undefined;

export interface FakeTicketBai {
  url: string;
  caPem: string;
  authority: FakeAuthority;
  /** Every request received (also refused ones). */
  requests: FakeRequest[];
  /** Per Gipuzkoa/Araba answer and per LROE record: the XSD output of files that failed. */
  xsdFailures: string[];
  /** Reject every file whose invoice matches (Gipuzkoa/Araba: Estado 01; LROE: Incorrecto). */
  rejectWhen(rule: RecordRule | undefined): void;
  /** Answer every request with this status and a non-TicketBAI body. */
  failWith(status: number | undefined): void;
  /** Never answer (the client's timeout fires). */
  hang(on: boolean): void;
  /** Forget received invoices and every setting. */
  reset(): void;
  close(): Promise<void>;
}

const parser = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, parseTagValue: false, trimValues: true, isArray: (n) => ['FacturaEmitida', 'Ingreso'].includes(n) });
type Node = Record<string, unknown>;

const pad = (n: number): string => String(n).padStart(2, '0');
const fecha = (d: Date): string =>
  `${pad(d.getUTCDate())}-${pad(d.getUTCMonth() + 1)}-${d.getUTCFullYear()} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

const validate = (xml: string | Buffer, xsd: string): { ok: boolean; output: string } =>
  HAVE_SCHEMAS ? xsdValidate(xml, xsd) : { ok: true, output: '' };

/**
 * Business validations the real services apply to a schema-valid alta (as
 * src/countries/es-ticketbai/foral-rules.ts cites them), where the fake can tell from the file:
 * - a rectificativa that names no corrected invoice: Gipuzkoa 011 (Mews `ErrorCode.cs`:
 *   corrected invoice not indicated; Araba's 10-235 likewise, reported here as 011), Bizkaia
 *   B4_2000045;
 * - Araba: a series starting with DFA_ (reserved for FakturAraba), 004.
 */
/** The recipients' NIFs (`IDDestinatario/NIF`) whose control character is wrong (src/countries/es/nif.ts). */
const wrongRecipientNif = (xml: string): boolean =>
  [...xml.matchAll(/<IDDestinatario>\s*<NIF>\s*([^<\s]*)\s*<\/NIF>/g)].some((m) => !isValidSpanishNif(m[1]!));

function businessRefusal(xml: string, territory: 'gipuzkoa' | 'araba' | 'bizkaia'): Verdict | undefined {
  if (xml.includes('<FacturaRectificativa>') && !xml.includes('<FacturasRectificadasSustituidas>')) {
    return territory === 'bizkaia'
      ? { code: 'B4_2000045', message: 'Factura rectificativa sin facturas rectificadas' }
      : { code: '011', message: 'Error validación de negocio: factura rectificativa sin factura rectificada' };
  }
  if (territory === 'araba' && /<CabeceraFactura><SerieFactura>DFA_/i.test(xml)) {
    return { code: '004', message: 'Serie de factura no admitida (DFA_ reservada para FakturAraba)' };
  }
  // Batuz refuses the record (MewsSystems/fiscalizations maps B4_2000011 to "invalid receiver
  // tax identifier format"; a public LROE response sample answers it with EstadoRegistro
  // Incorrecto).
  if (territory === 'bizkaia' && wrongRecipientNif(xml)) return { code: 'B4_2000011', message: 'El NIF tiene un formato erróneo.' };
  return undefined;
}

/**
 * Consolidation validations Araba and Gipuzkoa answer on a received invoice (Estado 00, the
 * result a warning to be corrected through Zuzendu):
 * - a recipient NIF that is not a correct one: Gipuzkoa 1153 (Mews `ErrorCode.cs`: "the
 *   recipient's NIF has the wrong format"); Araba 10-68, written as Araba writes its 10-nnn
 *   (code 010, the validation's number heading the text: "010 196-AVISO: Error validación de
 *   negocio […]", OCA l10n-spain issue 3500).
 */
function businessWarnings(xml: string, territory: 'gipuzkoa' | 'araba'): Verdict[] {
  if (!wrongRecipientNif(xml)) return [];
  return territory === 'gipuzkoa'
    ? [{ code: '1153', message: 'El NIF del destinatario tiene un formato erróneo' }]
    : [{ code: '010', message: '068-AVISO: Error validación de negocio [NIF del destinatario incorrecto]' }];
}

export async function startFakeTicketBai(): Promise<FakeTicketBai> {
  let rule: RecordRule | undefined;
  let failStatus: number | undefined;
  let hanging = false;
  const xsdFailures: string[] = [];
  /** Realtime: TBAI ids received (alta), invoices cancelled; LROE: invoice keys registered and cancelled. */
  const received = { tbai: new Set<string>(), tbaiCancelled: new Set<string>(), lroe: new Set<string>(), lroeCancelled: new Set<string>() };
  let registration = 0;

  const authority = await startFakeAuthority(async (req) => {
    if (hanging) return new Promise<FakeResponse>(() => undefined);
    if (failStatus !== undefined) return { status: failStatus, headers: { 'content-type': 'text/html' }, body: '<html><body>Service Unavailable</body></html>' };
    const path = req.path.split('?')[0]!;
    const realtime = REALTIME_PATHS[path];
    if (realtime) return realtimeAnswer(req, realtime.territory, realtime.kind);
    if (path === LROE_PATH) return lroeAnswer(req);
    return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
  });

  // ---- Gipuzkoa / Araba -------------------------------------------------------------

  function salida(fields: { id?: string | null; estado: '00' | '01'; resultados?: Verdict[]; csv?: string }): FakeResponse {
    const resultados = (fields.resultados ?? [])
      .map((r) => `<ResultadosValidacion>${el('Codigo', r.code)}${el('Descripcion', r.message)}${el('Azalpena', `[eu] ${r.message}`)}</ResultadosValidacion>`)
      .join('');
    const body =
      '<?xml version="1.0" encoding="UTF-8"?><TicketBaiResponse><Salida>' +
      (fields.id ? el('IdentificadorTBAI', fields.id) : '') +
      el('FechaRecepcion', fecha(new Date())) +
      el('Estado', fields.estado) +
      el('Descripcion', fields.estado === '00' ? 'Recibido' : 'Rechazado') +
      el('Azalpena', fields.estado === '00' ? 'Jasota' : 'Baztertuta') +
      resultados +
      (fields.csv ? el('CSV', fields.csv) : '') +
      '</Salida></TicketBaiResponse>';
    return { status: 200, headers: { 'content-type': 'application/xml;charset=UTF-8' }, body };
  }

  /** Each Hacienda keeps its own books. */
  function realtimeAnswer(req: FakeRequest, territory: 'gipuzkoa' | 'araba', kind: LroeKind): FakeResponse {
    if (!/xml/i.test(String(req.headers['content-type'] ?? ''))) {
      return salida({ estado: '01', resultados: [{ code: '002', message: 'FAKE: content-type is not XML' }] });
    }
    const check = validate(req.body, TBAI_XSD[kind]);
    const id = check.ok ? ticketBaiIdentity(req.body) : null;
    if (!check.ok || !id || id.kind !== kind) {
      xsdFailures.push(check.output);
      return salida({ estado: '01', resultados: [{ code: '002', message: 'El mensaje no cumple el esquema XSD' }] });
    }
    const verdict = rule?.({ series: id.series, number: id.number, kind }) ?? (kind === 'alta' ? businessRefusal(req.body.toString('utf8'), territory) : undefined);
    if (verdict) return salida({ id: id.tbaiId, estado: '01', resultados: [verdict] });
    if (kind === 'alta') {
      if (received.tbai.has(`${territory}|${id.tbaiId!}`)) {
        return salida({ id: id.tbaiId, estado: '01', resultados: [{ code: '005', message: 'Factura ya recibida' }] });
      }
      received.tbai.add(`${territory}|${id.tbaiId!}`);
      return salida({ id: id.tbaiId, estado: '00', resultados: businessWarnings(req.body.toString('utf8'), territory), csv: `TBAI${crypto.randomUUID()}` });
    }
    const key = `${territory}|${id.nif}|${id.series}|${id.number}|${id.date}`;
    if (received.tbaiCancelled.has(key)) {
      return salida({ estado: '01', resultados: [{ code: '019', message: 'Factura ya anulada' }] });
    }
    received.tbaiCancelled.add(key);
    return salida({ estado: '00', csv: `TBAI${crypto.randomUUID()}` });
  }

  // ---- Bizkaia LROE -----------------------------------------------------------------

  function lroeRefusal(code: string, message: string): FakeResponse {
    return {
      status: 200,
      headers: {
        'eus-bizkaia-n3-tipo-respuesta': 'Incorrecto',
        'eus-bizkaia-n3-codigo-respuesta': code,
        // A header carries one line of Latin-1 text.
        'eus-bizkaia-n3-mensaje-respuesta': message.replace(/[^\x20-\x7e\xa0-\xff]+/g, ' '),
        'eus-bizkaia-n3-identificativo': crypto.randomUUID(),
      },
      body: '',
    };
  }

  function lroeAnswer(req: FakeRequest): FakeResponse {
    const h = (name: string): string => String(req.headers[name] ?? '');
    if (!/gzip/.test(h('content-encoding'))) return lroeRefusal('B4_1000003', 'Error al descomprimir el fichero');
    if (h('content-type') !== 'application/octet-stream') return lroeRefusal('FAKE_HEADER', 'content-type must be application/octet-stream');
    if (h('eus-bizkaia-n3-version') !== '1.0') return lroeRefusal('FAKE_HEADER', 'eus-bizkaia-n3-version must be 1.0');
    if (h('eus-bizkaia-n3-content-type') !== 'application/xml') return lroeRefusal('FAKE_HEADER', 'eus-bizkaia-n3-content-type must be application/xml');
    let data: { con?: string; apa?: string; inte?: { nif?: string; nrs?: string }; drs?: { mode?: string; ejer?: string } };
    try {
      data = JSON.parse(h('eus-bizkaia-n3-data')) as typeof data;
    } catch {
      return lroeRefusal('FAKE_HEADER', 'eus-bizkaia-n3-data is not JSON');
    }
    if (data.con !== 'LROE') return lroeRefusal('FAKE_HEADER', 'con must be LROE');
    if (data.apa !== '1.1') return lroeRefusal('B4_1000026', 'Apartado erróneo');

    // Which document is it? The root's local name tells model and kind.
    const xml = req.body.toString('utf8');
    const rootName = /<([A-Za-z0-9_]+:)?(LROEP[A-Z0-9a-z]+Peticion)[\s>]/.exec(xml)?.[2];
    let model: LroeModel | undefined;
    let kind: LroeKind | undefined;
    for (const m of ['240', '140'] as const) {
      for (const k of ['alta', 'anulacion'] as const) if (LROE_DOCUMENTS[m][k].root === rootName) [model, kind] = [m, k];
    }
    if (!model || !kind) return lroeRefusal('FAKE_DOCUMENT', `unknown LROE document ${rootName ?? '(none)'}`);
    const doc = LROE_DOCUMENTS[model][kind];
    const check = validate(xml, LROE_DIR + doc.xsd);
    if (!check.ok) {
      xsdFailures.push(check.output);
      return lroeRefusal('FAKE_XSD', `the LROE request does not validate: ${check.output.slice(0, 200)}`);
    }
    const parsed = parser.parse(xml) as Node;
    const root = parsed[doc.root] as Node;
    const cab = root.Cabecera as Node;
    const obligado = cab.ObligadoTributario as Node;
    if (data.drs?.mode !== model) return lroeRefusal('FAKE_HEADER', 'drs.mode does not match Modelo');
    if (data.drs?.ejer !== cab.Ejercicio) return lroeRefusal('FAKE_HEADER', 'drs.ejer does not match Ejercicio');
    if (data.inte?.nif !== obligado.NIF) return lroeRefusal('B4_1000022', 'El NIF del interesado no coincide con el del obligado tributario');
    if (data.inte?.nrs !== obligado.ApellidosNombreRazonSocial) {
      return lroeRefusal('B4_1000030', 'El nombre del interesado no coincide con el del obligado tributario');
    }
    if (lroeModelFor(String(obligado.NIF)) !== model) return lroeRefusal('B4_1000006', 'El Modelo no corresponde al tipo de persona');

    const items = ((root[doc.list] as Node)[doc.item] as Node[]) ?? [];
    const registros = items.map((item) => {
      const b64 = String(item[doc.file]);
      const file = Buffer.from(b64, 'base64');
      const tbaiCheck = validate(file, TBAI_XSD[kind]);
      const id = tbaiCheck.ok ? ticketBaiIdentity(file) : null;
      const ident = id
        ? `<IDFactura>${id.series ? el('SerieFactura', id.series) : ''}${el('NumFactura', id.number)}${el('FechaExpedicionFactura', id.date)}</IDFactura>`
        : el(doc.file, b64);
      const situacion = (() => {
        if (!tbaiCheck.ok || !id || id.kind !== kind) {
          xsdFailures.push(tbaiCheck.output);
          return { estado: 'Incorrecto', error: { code: 'FAKE_TBAI_XSD', message: 'El fichero TicketBAI no cumple el esquema' } };
        }
        if (id.nif !== obligado.NIF) return { estado: 'Incorrecto', error: { code: 'FAKE_EMISOR', message: 'El emisor no es el obligado tributario' } };
        const verdict = rule?.({ series: id.series, number: id.number, kind }) ?? (kind === 'alta' ? businessRefusal(file.toString('utf8'), 'bizkaia') : undefined);
        if (verdict) return { estado: 'Incorrecto', error: verdict };
        const key = `${id.nif}|${id.series}|${id.number}|${id.date}`;
        if (kind === 'alta') {
          if (received.lroe.has(key)) return { estado: 'Incorrecto', error: { code: 'B4_2000003', message: 'El registro no puede existir en el sistema' } };
          received.lroe.add(key);
          return { estado: 'Correcto' };
        }
        if (received.lroeCancelled.has(key)) return { estado: 'Incorrecto', error: { code: 'B4_2000006', message: 'El registro ya está anulado' } };
        if (!received.lroe.has(key)) return { estado: 'Incorrecto', error: { code: 'B4_2000004', message: 'El registro que se anula no existe en el sistema' } };
        received.lroeCancelled.add(key);
        return { estado: 'Correcto' };
      })();
      const error = situacion.error
        ? el('CodigoErrorRegistro', situacion.error.code) +
          el('DescripcionErrorRegistroES', situacion.error.message) +
          el('DescripcionErrorRegistroEU', `[eu] ${situacion.error.message}`)
        : '';
      return { ok: situacion.estado === 'Correcto', xml: `<Registro><Identificador>${ident}</Identificador><SituacionRegistro>${el('EstadoRegistro', situacion.estado)}${error}</SituacionRegistro></Registro>` };
    });

    const correct = registros.filter((r) => r.ok).length;
    const tipo = correct === registros.length ? 'Correcto' : correct === 0 ? 'Incorrecto' : 'Parcialmente correcto';
    const cabecera = /<Cabecera>[\s\S]*?<\/Cabecera>/.exec(xml)![0];
    const prefix = 'lr';
    const body =
      '<?xml version="1.0" encoding="UTF-8"?>' +
      `<${prefix}:${doc.responseRoot} xmlns:${prefix}="${lroeNamespace(doc.responseXsd)}">` +
      cabecera +
      `<DatosPresentacion>${el('FechaPresentacion', fecha(new Date()))}${el('NIFPresentador', String(obligado.NIF))}</DatosPresentacion>` +
      `<Registros>${registros.map((r) => r.xml).join('')}</Registros>` +
      `</${prefix}:${doc.responseRoot}>`;
    // The fake must itself speak the schema it claims to.
    const own = validate(body, LROE_DIR + doc.responseXsd);
    if (!own.ok) throw new Error(`fake LROE answer does not validate: ${own.output}`);

    registration += 1;
    const headers: Record<string, string> = {
      'content-type': 'application/xml',
      'eus-bizkaia-n3-tipo-respuesta': tipo,
      'eus-bizkaia-n3-identificativo': crypto.randomUUID(),
      'eus-bizkaia-n3-numero-registro': `${cab.Ejercicio as string}-FAKE-${String(registration).padStart(6, '0')}`,
    };
    if (tipo === 'Incorrecto') {
      headers['eus-bizkaia-n3-codigo-respuesta'] = 'B4_1000002';
      // Header values travel as Latin-1 bytes; the real service's accents do too.
      headers['eus-bizkaia-n3-mensaje-respuesta'] = 'Todos los registros incluidos en la petición son incorrectos';
    }
    return { status: 200, headers, body, gzip: true };
  }

  return {
    url: authority.url,
    caPem: authority.caPem,
    authority,
    requests: authority.requests,
    xsdFailures,
    rejectWhen: (r) => (rule = r),
    failWith: (s) => (failStatus = s),
    hang: (on) => (hanging = on),
    reset: () => {
      rule = undefined;
      failStatus = undefined;
      hanging = false;
      xsdFailures.length = 0;
      for (const s of Object.values(received)) s.clear();
      authority.requests.length = 0;
    },
    close: () => authority.close(),
  };
}
