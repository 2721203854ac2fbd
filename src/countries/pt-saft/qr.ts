/**
 * The SAF-T (PT) document QR code content (Portaria 195/2020; AT "Especificações
 * Técnicas Código QR" v1.0; FORMATS.md §7.3): `CODE:value` fields in the table's order,
 * joined by `*`; money with 2 decimals and `.`; empty optional fields left out.
 */
import type { TxLine } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { taxCodeOf, type TaxRegion } from './tax.ts';

export interface SaftQrInput {
  issuerNif: string;
  /** `999999990` for a final consumer. */
  buyerNif: string;
  buyerCountry: string;
  documentType: string;
  /** SAF-T document status: N normal, A cancelled… */
  status: string;
  /** YYYYMMDD */
  date: string;
  invoiceNo: string;
  atcud: string;
  lines: readonly TxLine[];
  /** The fiscal space (field I1); default PT. */
  region?: TaxRegion | undefined;
  taxPayable: number;
  grossTotal: number;
  hashExtract: string;
  certificateNumber: string;
  /** Field S (other information, e.g. payment data), when given. */
  other?: string | undefined;
}

/**
 * A line's base/VAT fields in the document's fiscal space (I1, tax.ts): exempt → I2,
 * reduced → I3/I4, intermediate → I5/I6, normal → I7/I8. A rate that is not one of the
 * space's (code OUT) is reported with the normal rate, which keeps the totals (N, O) right.
 */
function bucketOf(rate: number, region: TaxRegion): 'I2' | 'I3' | 'I5' | 'I7' {
  const code = taxCodeOf(rate, region);
  return code === 'ISE' ? 'I2' : code === 'RED' ? 'I3' : code === 'INT' ? 'I5' : 'I7';
}

const VAT_FIELD = { I3: 'I4', I5: 'I6', I7: 'I8' } as const;

export function saftQrData(p: SaftQrInput): string {
  const base: Record<string, number> = {};
  const vat: Record<string, number> = {};
  for (const line of p.lines) {
    const b = bucketOf(line.tax_rate, p.region ?? 'PT');
    base[b] = (base[b] ?? 0) + (line.total_amount - line.tax_amount);
    if (b !== 'I2') vat[VAT_FIELD[b]] = (vat[VAT_FIELD[b]] ?? 0) + line.tax_amount;
  }
  const fields: Array<[string, string]> = [
    ['A', p.issuerNif],
    ['B', p.buyerNif],
    ['C', p.buyerCountry],
    ['D', p.documentType],
    ['E', p.status],
    ['F', p.date],
    ['G', p.invoiceNo],
    ['H', p.atcud],
    ['I1', p.region ?? 'PT'],
  ];
  for (const code of ['I2', 'I3', 'I4', 'I5', 'I6', 'I7', 'I8']) {
    const amount = base[code] ?? vat[code];
    if (amount !== undefined) fields.push([code, decimal(amount)]);
  }
  fields.push(['N', decimal(p.taxPayable)], ['O', decimal(p.grossTotal)], ['Q', p.hashExtract], ['R', p.certificateNumber]);
  if (p.other !== undefined && p.other !== '') fields.push(['S', p.other]);
  return fields.map(([code, value]) => `${code}:${value}`).join('*');
}

/** The 4 characters of the document hash printed and put in field Q: positions 1, 11, 21, 31 (Portaria 363/2010). */
export const hashExtract = (hash: string): string => [0, 10, 20, 30].map((i) => hash.charAt(i)).join('');

/** The QR content with field E (the document's status) set to `status`; the other fields as they are. */
export function withQrStatus(content: string, status: string): string {
  return content.split('*').map((f) => (f.startsWith('E:') ? `E:${status}` : f)).join('*');
}
