/**
 * The SOAP 1.1 messages of AEAT's issued-invoice service (SuministroFactEmitidas.wsdl,
 * binding `siiBinding`: document/literal, `soapAction=""`):
 *
 * - operation SuministroLRFacturasEmitidas: body `siiLR:SuministroLRFacturasEmitidas` =
 *   `sii:Cabecera` (IDVersionSii, Titular, TipoComunicacion) + 1..10000
 *   `RegistroLRFacturasEmitidas`;
 * - operation AnulacionLRFacturasEmitidas: body `siiLR:BajaLRFacturasEmitidas` =
 *   `sii:Cabecera` of type CabeceraSiiBaja (no TipoComunicacion) + 1..10000
 *   `RegistroLRBajaExpedidas`.
 *
 * The records are the stored record bodies, copied byte for byte (not re-indented: a
 * description may hold line breaks, and the bytes sent are the bytes stored).
 */
import type { LocationForFiscal } from '../types.ts';
import { MISSING_TAX_ID } from '../shared/issuer-tax-id.ts';
import { NS, SII_VERSION, renderXml } from './xml.ts';

export const SOAP_ENV_NS = 'http://schemas.xmlsoap.org/soap/envelope/';

/** The holder of the books (`Titular`, sii:PersonaFisicaJuridicaESType). */
export interface SiiTitular {
  name: string;
  nif: string;
}

/** The location as the holder of the books: its legal name (max 120) and NIF. */
export function titularOf(location: LocationForFiscal): SiiTitular {
  const legal = location.config.legal_name;
  const name = (typeof legal === 'string' && legal.trim() !== '' ? legal.trim() : location.name).slice(0, 120);
  const nif = location.tax_id?.trim();
  return { name, nif: nif === undefined || nif === '' ? MISSING_TAX_ID : nif };
}

/**
 * `TipoComunicacion` (sii:ClaveTipoComunicacionType): A0 "Alta (Se añade al libro un registro
 * una nueva factura)"; A1 "Modificación (La información que se comunica sustituye a la
 * existente relacionada)": the record of an invoice AEAT already holds, sent again with its
 * customer or description corrected (correction.ts). The header's, so one message carries
 * records of one kind; the client sends one record per message.
 */
export type TipoComunicacion = 'A0' | 'A1';

/** The header; a baja's (CabeceraSiiBaja) has no TipoComunicacion. */
const cabecera = (titular: SiiTitular, tipoComunicacion: TipoComunicacion | undefined): string =>
  renderXml({
    'sii:Cabecera': {
      'sii:IDVersionSii': SII_VERSION,
      'sii:Titular': { 'sii:NombreRazon': titular.name, 'sii:NIF': titular.nif },
      ...(tipoComunicacion ? { 'sii:TipoComunicacion': tipoComunicacion } : {}),
    },
  });

const wrap = (root: string, head: string, records: readonly string[]): string => {
  if (records.length < 1 || records.length > 10_000) throw new Error(`SII: a submission holds 1 to 10000 records, not ${records.length}`);
  return [`<siiLR:${root} xmlns:siiLR="${NS.siiLR}" xmlns:sii="${NS.sii}">`, head, ...records, `</siiLR:${root}>`].join('\n');
};

/** The SOAP body content of SuministroLRFacturasEmitidas (what SuministroLR.xsd validates): new records (A0) or modifications (A1). */
export const suministroBody = (titular: SiiTitular, records: readonly string[], tipo: TipoComunicacion = 'A0'): string =>
  wrap('SuministroLRFacturasEmitidas', cabecera(titular, tipo), records);

/** The SOAP body content of AnulacionLRFacturasEmitidas (`BajaLRFacturasEmitidas`). */
export const bajaBody = (titular: SiiTitular, records: readonly string[]): string =>
  wrap('BajaLRFacturasEmitidas', cabecera(titular, undefined), records);

/** The SOAP 1.1 envelope around one body element. */
export const soapEnvelope = (bodyContent: string): string =>
  [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<soapenv:Envelope xmlns:soapenv="${SOAP_ENV_NS}">`,
    '<soapenv:Header/>',
    '<soapenv:Body>',
    bodyContent,
    '</soapenv:Body>',
    '</soapenv:Envelope>',
    '',
  ].join('\n');

/** Which operation a stored record goes to, from its root element. */
export function operationOf(recordXml: string): 'alta' | 'baja' | undefined {
  const root = /^\s*<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)/.exec(recordXml)?.[2];
  if (root === 'RegistroLRFacturasEmitidas') return 'alta';
  if (root === 'RegistroLRBajaExpedidas') return 'baja';
  return undefined;
}
