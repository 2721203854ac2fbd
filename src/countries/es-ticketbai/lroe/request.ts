/**
 * Bizkaia (Batuz) LROE requests carrying signed TicketBAI files: chapter 1.1, invoices
 * issued with guarantee software ("ConSG"). Pure: inputs in, XML / headers / gzip body out.
 *
 * Documents (schemas in shared/schemas/es/ticketbai/bizkaia-lroe/):
 * - companies, Modelo 240: `LROEPJ240FacturasEmitidasConSGAltaPeticion`
 *   (LROE_PJ_240_1_1_FacturasEmitidas_ConSG_AltaPeticion_V1_0_2.xsd), one
 *   `FacturasEmitidas/FacturaEmitida/TicketBai` per file, and
 *   `LROEPJ240FacturasEmitidasConSGAnulacionPeticion` (…_AnulacionPeticion_V1_0_0.xsd) with
 *   `FacturaEmitida/AnulacionTicketBai`;
 * - individuals with an economic activity, Modelo 140:
 *   `LROEPF140IngresosConFacturaConSGAltaPeticion`
 *   (LROE_PF_140_1_1_Ingresos_ConfacturaConSG_AltaPeticion_V1_0_2.xsd), one
 *   `Ingresos/Ingreso` per file, which also needs `Renta/DetalleRenta/Epigrafe` (the
 *   activity's IAE heading, batuz_TiposComplejos.xsd `IngresoConSGCodificadoType`), and the
 *   matching AnulacionPeticion with `Ingreso/AnulacionTicketBai`.
 * The root element is in the schema's target namespace; everything below it is
 * unqualified (the schemas set no elementFormDefault).
 *
 * Transport (FORMATS.md §1.6, Batuz "Servicio Entradas, descripción técnica llamada
 * v1.0.3"): the XML is gzip-compressed and POSTed with the `eus-bizkaia-n3-*` headers.
 */
import zlib from 'node:zlib';
import { el, escapeAttr } from '../../../xml/escape.ts';
import type { LroeKind } from './identity.ts';

export type LroeModel = '240' | '140';

/**
 * Most files per request: `maxOccurs="1000"` on `FacturaEmitida` and `Ingreso`
 * (batuz_TiposComplejos.xsd `FacturasEmitidasConSGCodificadoType`,
 * `IngresosConSGCodificadoType`; batuz_TiposAnulacion.xsd
 * `AnulacionesFacturasEmitidasConSGType`, `AnulacionesIngresosConSGType`) and on the
 * answer's `Registro`. Larger batches are split.
 */
export const LROE_MAX_RECORDS = 1000;

/** LROE section ("apartado") of invoices issued with guarantee software: chapter 1, subchapter 1.1. */
export const LROE_APARTADO = '1.1';

const NS_BASE = 'https://www.batuz.eus/fitxategiak/batuz/LROE/esquemas/';

interface Document {
  /** Schema file, relative to the bizkaia-lroe folder. */
  xsd: string;
  root: string;
  prefix: string;
  /** Container and item elements, and the element holding the base64 file. */
  list: string;
  item: string;
  file: string;
}

/** The four request documents, and their answers' schemas (for tests and the fake). */
export const LROE_DOCUMENTS: Readonly<Record<LroeModel, Record<LroeKind, Document & { responseXsd: string; responseRoot: string }>>> = {
  '240': {
    alta: {
      xsd: 'LROE_PJ_240_1_1_FacturasEmitidas_ConSG_AltaPeticion_V1_0_2.xsd',
      root: 'LROEPJ240FacturasEmitidasConSGAltaPeticion',
      prefix: 'lrpjfecsgap',
      list: 'FacturasEmitidas',
      item: 'FacturaEmitida',
      file: 'TicketBai',
      responseXsd: 'LROE_PJ_240_1_1_FacturasEmitidas_ConSG_AltaRespuesta_V1_0_1.xsd',
      responseRoot: 'LROEPJ240FacturasEmitidasConSGAltaRespuesta',
    },
    anulacion: {
      xsd: 'LROE_PJ_240_1_1_FacturasEmitidas_ConSG_AnulacionPeticion_V1_0_0.xsd',
      root: 'LROEPJ240FacturasEmitidasConSGAnulacionPeticion',
      prefix: 'lrpjfecsgap',
      list: 'FacturasEmitidas',
      item: 'FacturaEmitida',
      file: 'AnulacionTicketBai',
      responseXsd: 'LROE_PJ_240_1_1_FacturasEmitidas_ConSG_AnulacionRespuesta_V1_0_0.xsd',
      responseRoot: 'LROEPJ240FacturasEmitidasConSGAnulacionRespuesta',
    },
  },
  '140': {
    alta: {
      xsd: 'LROE_PF_140_1_1_Ingresos_ConfacturaConSG_AltaPeticion_V1_0_2.xsd',
      root: 'LROEPF140IngresosConFacturaConSGAltaPeticion',
      prefix: 'lrpficfcsgap',
      list: 'Ingresos',
      item: 'Ingreso',
      file: 'TicketBai',
      responseXsd: 'LROE_PF_140_1_1_Ingresos_ConfacturaConSG_AltaRespuesta_V1_0_2.xsd',
      responseRoot: 'LROEPF140IngresosConFacturaConSGAltaRespuesta',
    },
    anulacion: {
      xsd: 'LROE_PF_140_1_1_Ingresos_ConfacturaConSG_AnulacionPeticion_V1_0_0.xsd',
      root: 'LROEPF140IngresosConFacturaConSGAnulacionPeticion',
      prefix: 'lrpficfcsgap',
      list: 'Ingresos',
      item: 'Ingreso',
      file: 'AnulacionTicketBai',
      responseXsd: 'LROE_PF_140_1_1_Ingresos_ConfacturaConSG_AnulacionRespuesta_V1_0_0.xsd',
      responseRoot: 'LROEPF140IngresosConFacturaConSGAnulacionRespuesta',
    },
  },
};

export const lroeNamespace = (xsd: string): string => `${NS_BASE}${xsd}`;

/** A request's input is not one Batuz could accept (caller or configuration error). */
export class LroeInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LroeInputError';
  }
}

/** batuz_TiposBasicos.xsd `NIFType`. */
const NIF_RE = /^(([A-Za-z]\d{7}[A-Za-z])|(\d{8}[A-Za-z])|([A-Za-z]\d{8}))$/;

/**
 * Modelo 240 for legal persons and entities, 140 for natural persons (the Batuz answer
 * B4_1000006 "El Modelo no corresponde al tipo de persona" enforces it). A NIF starting
 * with a digit is a DNI; K, L, M (Spaniards without DNI) and X, Y, Z (NIE, foreigners)
 * are natural persons too (Orden EHA/451/2008; see es/nif.ts); any other leading letter
 * names an entity type.
 */
export function lroeModelFor(nif: string): LroeModel {
  const first = nif.trim().charAt(0).toUpperCase();
  return /[0-9KLMXYZ]/.test(first) ? '140' : '240';
}

/** Income data Modelo 140 requires per file (batuz_TiposComplejos.xsd `DetalleRentaIngresosType`). */
export interface LroeRenta {
  /** IAE heading of the activity (`Epigrafe`, up to 7 digits). */
  epigrafe: string;
}

export interface LroeRequestInput {
  model: LroeModel;
  kind: LroeKind;
  issuerNif: string;
  /** `ApellidosNombreRazonSocial` (at most 120 characters: longer names are cut). */
  issuerName: string;
  /** `Ejercicio`: the issue year of every file in the request. */
  year: number;
  /** The signed TicketBAI (alta) or AnulaTicketBai (anulación) files, exactly as signed. */
  files: readonly (string | Buffer)[];
  /** Required for a Modelo 140 alta. */
  renta?: LroeRenta | undefined;
}

/** batuz_TiposBasicos.xsd `TextMax120Type`: the name as both the XML and the n3 header carry it. */
export const lroeIssuerName = (name: string): string => [...name.trim()].slice(0, 120).join('');

function check(input: LroeRequestInput): void {
  if (!NIF_RE.test(input.issuerNif)) throw new LroeInputError(`issuer NIF ${JSON.stringify(input.issuerNif)} is not a 9-character NIF`);
  if (lroeIssuerName(input.issuerName) === '') throw new LroeInputError('issuer name is required');
  if (!Number.isInteger(input.year) || input.year < 1000 || input.year > 9999) throw new LroeInputError(`year ${input.year} is not a 4-digit year`);
  if (input.files.length === 0) throw new LroeInputError('an LROE request carries at least one TicketBAI file');
  if (input.files.length > LROE_MAX_RECORDS) throw new LroeInputError(`an LROE request carries at most ${LROE_MAX_RECORDS} files`);
  if (input.model === '140' && input.kind === 'alta' && !/^\d{1,7}$/.test(input.renta?.epigrafe ?? '')) {
    throw new LroeInputError('a Modelo 140 alta needs the activity epigrafe (1 to 7 digits)');
  }
}

const base64Of = (file: string | Buffer): string => (typeof file === 'string' ? Buffer.from(file, 'utf8') : file).toString('base64');

/** The LROE request XML (UTF-8, with declaration). */
export function buildLroeRequestXml(input: LroeRequestInput): string {
  check(input);
  const doc = LROE_DOCUMENTS[input.model][input.kind];
  const cabecera =
    '<Cabecera>' +
    el('Modelo', input.model) +
    el('Capitulo', '1') +
    el('Subcapitulo', LROE_APARTADO) +
    // batuz_Enumerados.xsd OperacionEnum: A00 alta, AN0 anulación.
    el('Operacion', input.kind === 'alta' ? 'A00' : 'AN0') +
    el('Version', '1.0') +
    el('Ejercicio', String(input.year)) +
    '<ObligadoTributario>' +
    el('NIF', input.issuerNif) +
    el('ApellidosNombreRazonSocial', lroeIssuerName(input.issuerName)) +
    '</ObligadoTributario>' +
    '</Cabecera>';
  const renta =
    input.model === '140' && input.kind === 'alta'
      ? `<Renta><DetalleRenta>${el('Epigrafe', input.renta!.epigrafe)}</DetalleRenta></Renta>`
      : '';
  const items = input.files.map((f) => `<${doc.item}>${el(doc.file, base64Of(f))}${renta}</${doc.item}>`).join('');
  const root = `${doc.prefix}:${doc.root}`;
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<${root} xmlns:${doc.prefix}="${escapeAttr(lroeNamespace(doc.xsd))}">` +
    cabecera +
    `<${doc.list}>${items}</${doc.list}>` +
    `</${root}>`
  );
}

/**
 * `eus-bizkaia-n3-data` (FORMATS.md §1.6): `con` LROE, `apa` the section, `inte` the
 * interested party (`nif`, `nrs` name; Batuz checks both against `ObligadoTributario`,
 * B4_1000022 / B4_1000030), `drs` {`mode` model, `ejer` year}. Non-ASCII characters are
 * written as JSON `\uXXXX` escapes, which any JSON reader decodes to the same text
 * (RFC 8259 §7), so the header stays ASCII whatever the name holds.
 */
export function lroeN3Data(input: Pick<LroeRequestInput, 'model' | 'issuerNif' | 'issuerName' | 'year'>): string {
  const json = JSON.stringify({
    con: 'LROE',
    apa: LROE_APARTADO,
    inte: { nif: input.issuerNif, nrs: lroeIssuerName(input.issuerName) },
    drs: { mode: input.model, ejer: String(input.year) },
  });
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export interface LroeHttpRequest {
  headers: Record<string, string>;
  /** The gzip-compressed XML. */
  body: Buffer;
  /** The XML before compression (kept for audit and tests). */
  xml: string;
}

/** The complete HTTP request: headers per FORMATS.md §1.6, gzip body. */
export function buildLroeHttpRequest(input: LroeRequestInput): LroeHttpRequest {
  const xml = buildLroeRequestXml(input);
  return {
    headers: {
      'content-encoding': 'gzip',
      'content-type': 'application/octet-stream',
      'accept-encoding': 'gzip',
      'eus-bizkaia-n3-version': '1.0',
      // The document asks for the business content type; the value follows gobl.ticketbai
      // `internal/gateways/ebizkaia.go` and Barnetik `Api/Bizkaia/Endpoint.php`.
      'eus-bizkaia-n3-content-type': 'application/xml',
      'eus-bizkaia-n3-data': lroeN3Data(input),
    },
    body: zlib.gzipSync(Buffer.from(xml, 'utf8')),
    xml,
  };
}

/**
 * Submission endpoint (FORMATS.md §1.6 [primary], Batuz "Servicio Entradas" v1.0.3 and
 * "Batuz LROE Entorno Pruebas" v1.0.0). An `authorityBaseUrl` replaces scheme and host.
 */
export function lroeSubmissionUrl(environment: 'test' | 'live', authorityBaseUrl?: string): string {
  const host = authorityBaseUrl ?? (environment === 'live' ? 'https://sarrerak.bizkaia.eus' : 'https://pruesarrerak.bizkaia.eus');
  return `${host.replace(/\/+$/, '')}/N3B4000M/aurkezpena`;
}
