/**
 * SAF-T (PT) 1.04_01 XML (schemas/pt/saft-pt/SAFTPT1.04_01.xsd): the sales document
 * (`SourceDocuments/SalesInvoices/Invoice`) a record's body holds, and the status change a
 * cancellation records. Elements in the schema's order; no declaration, no whitespace
 * between elements, so the monthly file (saft-file.ts) embeds a stored body unchanged.
 */
import { el, optEl } from '../../xml/escape.ts';
import { NS_SAFT } from './document.ts';

export interface InvoiceStatusXml {
  /** N normal, A cancelled. */
  status: 'N' | 'A';
  /** xs:dateTime, local, to the second. */
  statusDate: string;
  reason?: string | undefined;
  sourceId: string;
}

export interface InvoiceLineXml {
  lineNumber: number;
  productCode: string;
  productDescription: string;
  quantity: string;
  unitOfMeasure: string;
  unitPrice: string;
  taxPointDate: string;
  /** Credit notes: the document corrected and why. */
  reference?: { invoiceNo: string; reason: string } | undefined;
  description: string;
  /** Sales documents credit the revenue; credit notes debit it. */
  side: 'credit' | 'debit';
  amount: string;
  tax: { code: string; percentage: string; region: string };
  exemption?: { code: string; reason: string } | undefined;
}

export interface InvoiceXml {
  invoiceNo: string;
  atcud: string;
  documentStatus: InvoiceStatusXml;
  hash: string;
  hashControl: string;
  period: number;
  invoiceDate: string;
  invoiceType: string;
  sourceId: string;
  systemEntryDate: string;
  customerId: string;
  lines: InvoiceLineXml[];
  totals: { taxPayable: string; netTotal: string; grossTotal: string };
  /** Documents paid when issued (FS, FR): how. */
  payment?: { mechanism: string; amount: string; date: string } | undefined;
}

export function documentStatusXml(s: InvoiceStatusXml): string {
  return (
    '<DocumentStatus>' +
    el('InvoiceStatus', s.status) +
    el('InvoiceStatusDate', s.statusDate) +
    optEl('Reason', s.reason) +
    el('SourceID', s.sourceId) +
    el('SourceBilling', 'P') +
    '</DocumentStatus>'
  );
}

function lineXml(l: InvoiceLineXml): string {
  return (
    '<Line>' +
    el('LineNumber', String(l.lineNumber)) +
    el('ProductCode', l.productCode) +
    el('ProductDescription', l.productDescription) +
    el('Quantity', l.quantity) +
    el('UnitOfMeasure', l.unitOfMeasure) +
    el('UnitPrice', l.unitPrice) +
    el('TaxPointDate', l.taxPointDate) +
    (l.reference ? `<References>${el('Reference', l.reference.invoiceNo)}${el('Reason', l.reference.reason)}</References>` : '') +
    el('Description', l.description) +
    el(l.side === 'credit' ? 'CreditAmount' : 'DebitAmount', l.amount) +
    '<Tax>' +
    el('TaxType', 'IVA') +
    el('TaxCountryRegion', l.tax.region) +
    el('TaxCode', l.tax.code) +
    el('TaxPercentage', l.tax.percentage) +
    '</Tax>' +
    (l.exemption ? el('TaxExemptionReason', l.exemption.reason) + el('TaxExemptionCode', l.exemption.code) : '') +
    '</Line>'
  );
}

/** The `Invoice` element, in the SAF-T namespace (declared on it, so it stands alone). */
export function invoiceXml(d: InvoiceXml): string {
  return (
    `<Invoice xmlns="${NS_SAFT}">` +
    el('InvoiceNo', d.invoiceNo) +
    el('ATCUD', d.atcud) +
    documentStatusXml(d.documentStatus) +
    el('Hash', d.hash) +
    el('HashControl', d.hashControl) +
    el('Period', String(d.period)) +
    el('InvoiceDate', d.invoiceDate) +
    el('InvoiceType', d.invoiceType) +
    '<SpecialRegimes><SelfBillingIndicator>0</SelfBillingIndicator><CashVATSchemeIndicator>0</CashVATSchemeIndicator><ThirdPartiesBillingIndicator>0</ThirdPartiesBillingIndicator></SpecialRegimes>' +
    el('SourceID', d.sourceId) +
    el('SystemEntryDate', d.systemEntryDate) +
    el('CustomerID', d.customerId) +
    d.lines.map(lineXml).join('') +
    '<DocumentTotals>' +
    el('TaxPayable', d.totals.taxPayable) +
    el('NetTotal', d.totals.netTotal) +
    el('GrossTotal', d.totals.grossTotal) +
    (d.payment
      ? `<Payment>${el('PaymentMechanism', d.payment.mechanism)}${el('PaymentAmount', d.payment.amount)}${el('PaymentDate', d.payment.date)}</Payment>`
      : '') +
    '</DocumentTotals>' +
    '</Invoice>'
  );
}

/**
 * A cancellation's record: not a new document (no number, no Hash, outside the chain)
 * but the original's new `DocumentStatus` (A), named by the original's InvoiceNo and
 * ATCUD, in SAF-T's own elements. It is a fragment, not a complete `Invoice`: the monthly
 * file puts this DocumentStatus in place of the original's.
 */
export function statusChangeXml(d: { invoiceNo: string; atcud: string; status: InvoiceStatusXml }): string {
  return `<Invoice xmlns="${NS_SAFT}">${el('InvoiceNo', d.invoiceNo)}${el('ATCUD', d.atcud)}${documentStatusXml(d.status)}</Invoice>`;
}
