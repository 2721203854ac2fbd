/**
 * The monthly SAF-T (PT) 1.04_01 file of one location (Portaria 302/2016; the file a
 * certified invoicing program exports for the AT and for inspectors): `AuditFile` with
 * the Header, MasterFiles (Customer, Product, TaxTable) and SourceDocuments/SalesInvoices
 * holding the month's documents with their control totals. Windows-1252 encoded.
 *
 * Pure: the caller (a batch processor or the inspectors' file route, wired elsewhere)
 * reads the location's stored records and hands them in. Documents are taken from the
 * records' bodies exactly as stored and signed (record.body, the `Invoice` element);
 * a cancellation record (xml.ts `statusChangeXml`) replaces the DocumentStatus of the
 * document it names, which then counts in no total (AT: documents with status A are
 * excluded from TotalDebit/TotalCredit). Records outside the month are ignored, so the
 * caller may hand a wider list. The customers' details come from the transactions
 * (document.ts `customerOf`), the products and taxes from the documents themselves.
 */
import type { LocationForFiscal, SoftwareIdentity, TransactionDraft } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { el } from '../../xml/escape.ts';
import { NS_SAFT, UNKNOWN, customerOf, type SaftCustomer } from './document.ts';
import { taxDescriptionOf, type TaxCode } from './tax.ts';
import { encodeWindows1252Xml } from './windows-1252.ts';
import { certificateNumberOf } from './signature.ts';
import { saftAssertionViolations } from './saft-assertions.ts';

/** A stored record of the location, as the store keeps it. */
export interface SaftFileRecord {
  kind: 'record' | 'cancellation';
  body: string;
  tx: TransactionDraft;
}

export interface SaftFileInput {
  location: LocationForFiscal;
  /** The month, `YYYY-MM`. */
  period: string;
  records: readonly SaftFileRecord[];
  software: SoftwareIdentity;
  /** The software producer's name (Header/ProductID is `<product>/<producer>`); default: its tax id. */
  producerName?: string | undefined;
  /** When the file is made (Header/DateCreated). */
  createdAt: Date;
  /**
   * Header/TaxEntity: the establishment the file covers; default the location's name. AT
   * wants `Global` for a file of all the company's establishments: the records of several
   * locations of one NIF may be handed together (their series prefixes must then differ,
   * as AT's series registration already requires), with `location` the one whose name and
   * address head the file.
   */
  taxEntity?: string | undefined;
}

export interface SaftFile {
  /** The file, Windows-1252. */
  bytes: Buffer;
  /** The same document as a string (before encoding). */
  xml: string;
  contentType: 'application/xml; charset=windows-1252';
  /** A file name in AT's usual form: SAFT_<NIF>_<YYYY-MM>.xml. */
  fileName: string;
  numberOfEntries: number;
  /** Control totals, 2 decimals. */
  totalDebit: string;
  totalCredit: string;
}

const PERIOD = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** What the file needs of one stored document, read from its body (our own, fixed layout). */
interface StoredDocument {
  body: string;
  invoiceNo: string;
  invoiceType: string;
  invoiceDate: string;
  customerId: string;
  tx: TransactionDraft;
}

const first = (body: string, tag: string): string | undefined => new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(body)?.[1];
const all = (body: string, re: RegExp): RegExpExecArray[] => [...body.matchAll(new RegExp(re.source, 'g'))];

function readDocument(r: SaftFileRecord): StoredDocument {
  const invoiceNo = first(r.body, 'InvoiceNo');
  const invoiceType = first(r.body, 'InvoiceType');
  const invoiceDate = first(r.body, 'InvoiceDate');
  const customerId = first(r.body, 'CustomerID');
  if (!invoiceNo || !invoiceType || !invoiceDate || !customerId) throw new Error('pt-saft: a stored record is not a SAF-T (PT) Invoice');
  return { body: r.body, invoiceNo, invoiceType, invoiceDate, customerId, tx: r.tx };
}

/** `FS A2026/35` → [`FS A2026`, 35]: documents are listed by type and series, then number. */
function orderKey(invoiceNo: string): [string, number] {
  const slash = invoiceNo.lastIndexOf('/');
  return [invoiceNo.slice(0, slash), Number(invoiceNo.slice(slash + 1))];
}

/** A SAF-T amount (`12.10`) in cents. */
function cents(amount: string): number {
  const [units = '0', frac = ''] = amount.split('.');
  const whole = Number(units) * 100 + Number((frac + '00').slice(0, 2));
  // Amounts we write carry 2 decimals; round any further digits half up.
  return frac.length > 2 && Number(frac[2]) >= 5 ? whole + 1 : whole;
}

export function buildSaftFile(input: SaftFileInput): SaftFile {
  const m = PERIOD.exec(input.period);
  if (!m) throw new Error(`pt-saft: period must be YYYY-MM, got ${input.period}`);
  const year = m[1]!;
  const month = m[2]!;
  const nif = input.location.tax_id?.trim();
  if (!nif || !/^[1-9][0-9]{8}$/.test(nif)) throw new Error('pt-saft: the SAF-T file needs the location\'s Portuguese NIF (tax_id)');

  // The month's documents, and the status changes of any of them.
  const documents = input.records
    .filter((r) => r.kind === 'record')
    .map(readDocument)
    .filter((d) => d.invoiceDate.startsWith(`${year}-${month}-`))
    .sort((a, b) => {
      const [sa, na] = orderKey(a.invoiceNo);
      const [sb, nb] = orderKey(b.invoiceNo);
      return sa < sb ? -1 : sa > sb ? 1 : na - nb;
    });
  const statusOf = new Map<string, string>();
  for (const r of input.records) {
    if (r.kind !== 'cancellation') continue;
    const invoiceNo = first(r.body, 'InvoiceNo');
    const status = /<DocumentStatus>.*?<\/DocumentStatus>/s.exec(r.body)?.[0];
    if (invoiceNo && status) statusOf.set(invoiceNo, status);
  }

  const invoices: string[] = [];
  const customers = new Map<string, SaftCustomer>();
  const products = new Map<string, string>();
  const taxes = new Map<string, { region: string; code: string; percentage: string }>();
  let totalDebit = 0;
  let totalCredit = 0;
  for (const d of documents) {
    const changed = statusOf.get(d.invoiceNo);
    const body = changed ? d.body.replace(/<DocumentStatus>.*?<\/DocumentStatus>/s, changed) : d.body;
    invoices.push(body);
    if (!customers.has(d.customerId)) customers.set(d.customerId, { ...customerOf(d.tx), id: d.customerId });
    for (const p of all(body, /<ProductCode>([^<]*)<\/ProductCode><ProductDescription>([^<]*)<\/ProductDescription>/)) {
      if (!products.has(p[1]!)) products.set(p[1]!, p[2]!);
    }
    for (const t of all(body, /<TaxCountryRegion>([^<]*)<\/TaxCountryRegion><TaxCode>([^<]*)<\/TaxCode><TaxPercentage>([^<]*)<\/TaxPercentage>/)) {
      taxes.set(`${t[1]} ${t[2]} ${t[3]}`, { region: t[1]!, code: t[2]!, percentage: t[3]! });
    }
    // Control totals: the lines' amounts, without cancelled documents.
    if (/<InvoiceStatus>A<\/InvoiceStatus>/.test(body)) continue;
    for (const a of all(body, /<DebitAmount>([^<]*)<\/DebitAmount>/)) totalDebit += cents(a[1]!);
    for (const a of all(body, /<CreditAmount>([^<]*)<\/CreditAmount>/)) totalCredit += cents(a[1]!);
  }

  const lastDay = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  const certificate = certificateNumberOf(input.location, input.software) ?? '0';
  const header =
    '<Header>' +
    el('AuditFileVersion', '1.04_01') +
    el('CompanyID', nif) +
    el('TaxRegistrationNumber', nif) +
    el('TaxAccountingBasis', 'F') +
    el('CompanyName', clip(input.location.name, 100) || UNKNOWN) +
    '<CompanyAddress>' +
    el('AddressDetail', clip(input.location.address?.trim() || UNKNOWN, 210)) +
    el('City', UNKNOWN) +
    el('PostalCode', UNKNOWN) +
    el('Country', 'PT') +
    '</CompanyAddress>' +
    el('FiscalYear', year) +
    el('StartDate', `${year}-${month}-01`) +
    el('EndDate', `${year}-${month}-${String(lastDay).padStart(2, '0')}`) +
    el('CurrencyCode', 'EUR') +
    el('DateCreated', isoDate(localDate(input.createdAt, 'PT'))) +
    // The establishment the file covers: the location, unless told otherwise.
    el('TaxEntity', clip(input.taxEntity ?? input.location.name, 20) || 'Global') +
    el('ProductCompanyTaxID', clip(input.software.vendorTaxId, 30)) +
    el('SoftwareCertificateNumber', certificate) +
    el('ProductID', `${input.software.name.replaceAll('/', '-')}/${(input.producerName ?? input.software.vendorTaxId).replaceAll('/', '-')}`) +
    el('ProductVersion', clip(input.software.version, 30)) +
    '</Header>';

  const masterFiles =
    '<MasterFiles>' +
    [...customers.values()].map(customerXml).join('') +
    [...products.entries()]
      .map(([code, description]) => `<Product><ProductType>P</ProductType><ProductCode>${code}</ProductCode><ProductDescription>${description}</ProductDescription><ProductNumberCode>${code}</ProductNumberCode></Product>`)
      .join('') +
    (taxes.size > 0 ? `<TaxTable>${[...taxes.values()].map(taxEntryXml).join('')}</TaxTable>` : '') +
    '</MasterFiles>';

  const salesInvoices =
    '<SourceDocuments><SalesInvoices>' +
    el('NumberOfEntries', String(documents.length)) +
    el('TotalDebit', decimal(totalDebit)) +
    el('TotalCredit', decimal(totalCredit)) +
    invoices.join('') +
    '</SalesInvoices></SourceDocuments>';

  const xml = `<?xml version="1.0" encoding="Windows-1252"?>\n<AuditFile xmlns="${NS_SAFT}">${header}${masterFiles}${salesInvoices}</AuditFile>\n`;
  // The schema's XSD 1.1 assertions, which the XSD 1.0 tools cannot check (saft-assertions.ts):
  // a file that breaks one is not produced (the processor reports the month, which waits).
  const broken = saftAssertionViolations(xml);
  if (broken.length > 0) {
    throw new Error(`pt-saft: the SAF-T file breaks the schema's assertions: ${broken.slice(0, 5).map((v) => `${v.path}: ${v.message} (${v.rule})`).join('; ')}`);
  }
  return {
    bytes: encodeWindows1252Xml(xml),
    xml,
    contentType: 'application/xml; charset=windows-1252',
    fileName: `SAFT_${nif}_${year}-${month}.xml`,
    numberOfEntries: documents.length,
    totalDebit: decimal(totalDebit),
    totalCredit: decimal(totalCredit),
  };
}

const clip = (s: string, max: number): string => (s.length > max ? s.slice(0, max) : s).trim();

function customerXml(c: SaftCustomer): string {
  return (
    '<Customer>' +
    el('CustomerID', c.id) +
    el('AccountID', UNKNOWN) +
    el('CustomerTaxID', c.taxId) +
    el('CompanyName', c.name) +
    '<BillingAddress>' +
    el('AddressDetail', c.addressDetail) +
    el('City', c.city) +
    el('PostalCode', c.postalCode) +
    el('Country', c.country) +
    '</BillingAddress>' +
    el('SelfBillingIndicator', '0') +
    '</Customer>'
  );
}

function taxEntryXml(t: { region: string; code: string; percentage: string }): string {
  // The description of the rate: the table's own for the region's codes.
  const description = taxDescriptionOf(t.code as TaxCode, t.percentage);
  return `<TaxTableEntry><TaxType>IVA</TaxType>${el('TaxCountryRegion', t.region)}${el('TaxCode', t.code)}${el('Description', description)}${el('TaxPercentage', t.percentage)}</TaxTableEntry>`;
}
