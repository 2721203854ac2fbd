/**
 * What an LROE batch needs to know about each signed TicketBAI file it carries: which
 * invoice it is (issuer NIF, series, number, issue date: the key Batuz answers with in
 * `Registro/Identificador/IDFactura`, batuz_TiposComplejos.xsd `IDFacturaType`), its
 * fiscal year (the request's `Ejercicio` must equal it) and, for an alta, its TBAI
 * identifier (FORMATS.md §1.1).
 *
 * Element paths: ticketbaiv1-2-2.xsd (`TicketBai/Sujetos/Emisor`,
 * `TicketBai/Factura/CabeceraFactura`) and anula_ticketbaiv1-2-2.xsd
 * (`AnulaTicketBai/IDFactura/{Emisor,CabeceraFactura}`).
 */
import { XMLParser } from 'fast-xml-parser';
import { tbaiId } from '../tbai.ts';

export type LroeKind = 'alta' | 'anulacion';

/** The invoice key Batuz identifies records by (IDFacturaType). */
export interface InvoiceKey {
  /** `SerieFactura`; '' when the invoice has no series. */
  series: string;
  number: string;
  /** `FechaExpedicionFactura`, `DD-MM-YYYY`. */
  date: string;
}

export interface TicketBaiIdentity extends InvoiceKey {
  kind: LroeKind;
  nif: string;
  name: string;
  /** From the issue date. */
  year: number;
  /** The TBAI identifier of an alta (null for an AnulaTicketBai, or an unsigned file). */
  tbaiId: string | null;
}

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  // NIFs, numbers and dates are identifiers: keep them exactly as written.
  parseTagValue: false,
  trimValues: true,
});

type Node = Record<string, unknown>;
const node = (v: unknown): Node | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

export const invoiceKeyString = (k: InvoiceKey): string => `${k.series}\u0000${k.number}\u0000${k.date}`;

/** The identity of a signed TicketBAI or AnulaTicketBai file; null when it is neither. */
export function ticketBaiIdentity(xml: string | Buffer): TicketBaiIdentity | null {
  let doc: Node;
  try {
    doc = parser.parse(typeof xml === 'string' ? xml : xml.toString('utf8')) as Node;
  } catch {
    return null;
  }
  const alta = node(doc.TicketBai);
  const anula = node(doc.AnulaTicketBai);
  const root = alta ?? anula;
  if (!root) return null;
  const emisor = alta ? node(node(alta.Sujetos)?.Emisor) : node(node(anula?.IDFactura)?.Emisor);
  const cabecera = alta ? node(node(alta.Factura)?.CabeceraFactura) : node(node(anula?.IDFactura)?.CabeceraFactura);
  const nif = str(emisor?.NIF);
  const number = str(cabecera?.NumFactura);
  const date = str(cabecera?.FechaExpedicionFactura);
  const m = /^(\d{2})-(\d{2})-(\d{4})$/.exec(date);
  if (!nif || !number || !m) return null;
  const signatureValue = str(node(root.Signature)?.SignatureValue).replace(/\s+/g, '');
  return {
    kind: alta ? 'alta' : 'anulacion',
    nif,
    name: str(emisor?.ApellidosNombreRazonSocial),
    series: str(cabecera?.SerieFactura),
    number,
    date,
    year: Number(m[3]),
    tbaiId: alta && signatureValue ? tbaiId(nif, `${m[1]}${m[2]}${m[3]!.slice(2)}`, signatureValue) : null,
  };
}
