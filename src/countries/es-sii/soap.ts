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
import type { LocationForFiscal, StoredRecord } from '../types.ts';
import { MISSING_TAX_ID } from '../shared/issuer-tax-id.ts';
import { textWithin } from '../shared/xml-text.ts';
import { NS, SII_VERSION, renderXml } from './xml.ts';

export const SOAP_ENV_NS = 'http://schemas.xmlsoap.org/soap/envelope/';

/** The holder of the books (`Titular`, sii:PersonaFisicaJuridicaESType). */
export interface SiiTitular {
  name: string;
  nif: string;
}

/** The location as the holder of the books: its legal name (max 120) and NIF. */
export function titularOf(location: LocationForFiscal): SiiTitular {
  const nif = location.tax_id?.trim();
  return { name: titularName(location.config.legal_name, location.name), nif: nif === undefined || nif === '' ? MISSING_TAX_ID : nif };
}

/** NombreRazon (max 120): the legal name when there is one, else the location's name. */
const titularName = (legal: unknown, name: string): string =>
  (typeof legal === 'string' && legal.trim() !== '' ? legal.trim() : name).slice(0, 120);

/**
 * The holder of the books a stored record is sent under: the one the invoice was issued by,
 * not the location as it stands when the record is sent (a retry hours later, after a PATCH
 * of its legal name or NIF, must not report the invoice under another name):
 *
 * - NIF: the record's own `IDFactura/IDEmisorFactura/NIF`, fixed when it was built. In the
 *   issued-invoice book the holder is the issuer (RD 1624/1992 arts. 62.1 and 63: each
 *   taxpayer keeps the book of the invoices it issues; SuministroInformacion.xsd, Cabecera:
 *   Titular "Titular de los libros de registro que suministra la información");
 * - NombreRazon: the location's legal name (else name) kept beside the record when it was
 *   built (`StoredRecord.issuer`).
 *
 * Each falls back to the location's current value when the record does not carry it
 * (records stored before the issuer was kept). A modification (A1) is sent under the issuer
 * of the invoice it modifies: the core hands a correction that record's issuer. A
 * cancellation's baja likewise goes under the issuer of the invoice it withdraws
 * (`StoredRecord.cancelledIssuer`), not the location as it stood when the cancellation was
 * made: it removes that invoice from the book of the holder who issued it (same articles);
 * its own kept issuer stands in when the original kept none.
 * The client sends one record per message, so no two records share a Cabecera; a sender of
 * several per message would have to group them by this Titular (one message each).
 */
export function titularFor(record: Pick<StoredRecord, 'body' | 'issuer' | 'cancelledIssuer'>, location: LocationForFiscal): SiiTitular {
  const current = titularOf(location);
  const nif = issuerNifOf(record.body);
  const issuer = record.cancelledIssuer ?? record.issuer;
  return {
    name: issuer ? titularName(issuer.legalName, issuer.name) : current.name,
    nif: nif ?? current.nif,
  };
}

/** The issuer NIF a stored alta or baja names (`siiLR:IDFactura/sii:IDEmisorFactura/sii:NIF`). */
const issuerNifOf = (recordXml: string): string | undefined => textWithin(recordXml, 'IDEmisorFactura', 'NIF');

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
