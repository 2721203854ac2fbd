/**
 * The myDATA `InvoicesDoc` (SendInvoices request body) holding one invoice, written
 * against InvoicesDoc-v1.0.12.xsd (schemas/gr/mydata/v1.0.12/; the elements we write are
 * the same in v2.0.1, and the golden test validates against both). Element order is the
 * schema's `xs:sequence` order; optional elements we have nothing for are left out.
 * One line, UTF-8, with an XML declaration: AADE reads the bytes as sent (nothing is
 * signed), so no canonical form is needed.
 */
import { el, optEl } from '../../xml/escape.ts';
import { decimal } from '../shared/amounts.ts';

export const NS_INV = 'http://www.aade.gr/myDATA/invoice/v1.0';
// AADE's spelling ("Classificaton").
export const NS_ICLS = 'https://www.aade.gr/myDATA/incomeClassificaton/v1.0';
export const NS_ECLS = 'https://www.aade.gr/myDATA/expensesClassificaton/v1.0';

export interface Party {
  vatNumber: string;
  country: string;
  branch: number;
  /** Only for a foreign party: AADE refuses a name (and the issuer's address) for a Greek one. */
  name?: string | undefined;
  address?: { street?: string | undefined; number?: string | undefined; postalCode: string; city: string } | undefined;
}

export interface Classification {
  type: string;
  category: string;
  /** Minor units. */
  amount: number;
}

export interface InvoiceRow {
  lineNumber: number;
  /** Minor units. */
  netValue: number;
  vatCategory: number;
  vatAmount: number;
  vatExemptionCategory?: number | undefined;
  incomeClassification?: Classification | undefined;
}

export interface InvoiceModel {
  issuer: Party;
  counterpart?: Party | undefined;
  header: {
    series: string;
    aa: string;
    issueDate: string;
    invoiceType: string;
    correlatedInvoices?: string[] | undefined;
    /** specialInvoiceCategory (SpecialInvoiceCategoryType 1-13), e.g. 13 "correlation difficulty" on a lone 11.4. */
    specialInvoiceCategory?: number | undefined;
  };
  payments: { type: number; amount: number }[];
  rows: InvoiceRow[];
  summary: { totalNetValue: number; totalVatAmount: number; totalGrossValue: number; incomeClassification: Classification[] };
}

const amount = (name: string, minor: number): string => el(name, decimal(minor));

function party(name: 'issuer' | 'counterpart', p: Party): string {
  const address = p.address
    ? `<address>${optEl('street', p.address.street)}${optEl('number', p.address.number)}${el('postalCode', p.address.postalCode)}${el('city', p.address.city)}</address>`
    : '';
  return `<${name}>${el('vatNumber', p.vatNumber)}${el('country', p.country)}${el('branch', String(p.branch))}${optEl('name', p.name)}${address}</${name}>`;
}

const classification = (c: Classification): string =>
  `<incomeClassification>${el('icls:classificationType', c.type)}${el('icls:classificationCategory', c.category)}${amount('icls:amount', c.amount)}</incomeClassification>`;

function row(r: InvoiceRow): string {
  return (
    '<invoiceDetails>' +
    el('lineNumber', String(r.lineNumber)) +
    amount('netValue', r.netValue) +
    el('vatCategory', String(r.vatCategory)) +
    amount('vatAmount', r.vatAmount) +
    (r.vatExemptionCategory !== undefined ? el('vatExemptionCategory', String(r.vatExemptionCategory)) : '') +
    (r.incomeClassification ? classification(r.incomeClassification) : '') +
    '</invoiceDetails>'
  );
}

export function invoicesDocXml(m: InvoiceModel): string {
  const h = m.header;
  const header =
    '<invoiceHeader>' +
    el('series', h.series) +
    el('aa', h.aa) +
    el('issueDate', h.issueDate) +
    el('invoiceType', h.invoiceType) +
    el('currency', 'EUR') +
    (h.correlatedInvoices ?? []).map((mark) => el('correlatedInvoices', mark)).join('') +
    (h.specialInvoiceCategory !== undefined ? el('specialInvoiceCategory', String(h.specialInvoiceCategory)) : '') +
    '</invoiceHeader>';
  const payments = m.payments.length
    ? `<paymentMethods>${m.payments.map((p) => `<paymentMethodDetails>${el('type', String(p.type))}${amount('amount', p.amount)}</paymentMethodDetails>`).join('')}</paymentMethods>`
    : '';
  const s = m.summary;
  // Withheld, fees, stamp duty, other taxes and deductions are required totals: the
  // canonical request carries none of them, so they are 0.00 (and taxesTotals is left out).
  const summary =
    '<invoiceSummary>' +
    amount('totalNetValue', s.totalNetValue) +
    amount('totalVatAmount', s.totalVatAmount) +
    amount('totalWithheldAmount', 0) +
    amount('totalFeesAmount', 0) +
    amount('totalStampDutyAmount', 0) +
    amount('totalOtherTaxesAmount', 0) +
    amount('totalDeductionsAmount', 0) +
    amount('totalGrossValue', s.totalGrossValue) +
    s.incomeClassification.map(classification).join('') +
    '</invoiceSummary>';
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<InvoicesDoc xmlns="${NS_INV}" xmlns:icls="${NS_ICLS}" xmlns:ecls="${NS_ECLS}">` +
    '<invoice>' +
    party('issuer', m.issuer) +
    (m.counterpart ? party('counterpart', m.counterpart) : '') +
    header +
    payments +
    m.rows.map(row).join('') +
    summary +
    '</invoice>' +
    '</InvoicesDoc>'
  );
}
