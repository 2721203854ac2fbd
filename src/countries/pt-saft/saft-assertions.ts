/**
 * The XSD 1.1 assertions of SAF-T (PT) 1.04_01 (SAFTPT1.04_01.xsd, `xs:assert`), checked in
 * code. libxml2 cannot load an XSD 1.1 schema: the structure is validated with xmllint
 * against the schema with its assertions stripped (scripts/strip-xsd11-assertions.py),
 * and these rules stand in for the 19 assertions it strips. Each rule names the XSD's
 * `test`; where one test is repeated under several parents it is one rule here.
 *
 * | rule | parents (assertions) | test, in words |
 * |---|---|---|
 * | account-taxonomy | GeneralLedgerAccounts/Account (1) | TaxonomyCode present exactly when GroupingCategory is GM |
 * | account-grouping | GeneralLedgerAccounts/Account (1) | GroupingCode absent for GR, AR; present for GA, AA, GM, AM |
 * | tax-amount-exemption | Line of Invoice, WorkDocument, Payment (3) | Tax/TaxAmount given: ≠ 0 without TaxExemptionReason, = 0 with it |
 * | tax-percentage-exemption | Line of Invoice, StockMovement, WorkDocument, Payment (4) | the same for Tax/TaxPercentage |
 * | exemption-code-and-reason | Line of Invoice, StockMovement, WorkDocument, Payment (4) | TaxExemptionReason and TaxExemptionCode together or neither |
 * | tax-base-unit-price | Line of Invoice, WorkDocument (2) | with TaxBase, UnitPrice is 0 |
 * | tax-base-amounts | Line of Invoice, WorkDocument (2) | with TaxBase, DebitAmount and CreditAmount are 0 |
 * | payment-line-tax | Payment/Line (1) | a line of a receipt of the VAT cash regime (PaymentType RC) has Tax |
 * | payment-type | Payment (1) | PaymentType RG, or RC with some Line/Tax/TaxType |
 *
 * Values compare as numbers, as the XSD's typed values do (`0.00` is 0). The monthly file
 * holds SalesInvoices only, but every rule is checked wherever its parent appears, so a
 * file from elsewhere is checked whole.
 */
import { XMLParser } from 'fast-xml-parser';
import { decodeWindows1252 } from './windows-1252.ts';

export interface AssertionViolation {
  rule: string;
  /** Where: `SalesInvoices/Invoice[FS A/1]/Line[2]`. */
  path: string;
  message: string;
}

type Node = Record<string, unknown>;

const LISTS = new Set(['Account', 'Invoice', 'StockMovement', 'WorkDocument', 'Payment', 'Line']);
const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => LISTS.has(name),
});

const list = (v: unknown): Node[] => (Array.isArray(v) ? (v as Node[]) : []);
const obj = (v: unknown): Node | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : undefined);
const has = (n: Node | undefined, name: string): boolean => n !== undefined && n[name] !== undefined;
const text = (n: Node | undefined, name: string): string | undefined => {
  const v = n?.[name];
  return typeof v === 'string' ? v : undefined;
};
/** XPath `x != 0` on a typed decimal: false when absent. */
const nonZero = (n: Node | undefined, name: string): boolean => {
  const v = text(n, name);
  return v !== undefined && Number(v) !== 0;
};
const isZero = (n: Node | undefined, name: string): boolean => {
  const v = text(n, name);
  return v !== undefined && Number(v) === 0;
};

/** The rules of a document line; `rules` says which of them its parent's type carries. */
function checkLine(line: Node, path: string, rules: ReadonlySet<string>, out: AssertionViolation[], paymentType?: string): void {
  const tax = obj(line.Tax);
  const reason = has(line, 'TaxExemptionReason');
  const code = has(line, 'TaxExemptionCode');
  const add = (rule: string, message: string) => out.push({ rule, path, message });
  for (const [rule, field] of [['tax-amount-exemption', 'TaxAmount'], ['tax-percentage-exemption', 'TaxPercentage']] as const) {
    if (!rules.has(rule) || !has(tax, field)) continue;
    const ok = (nonZero(tax, field) && !reason) || (isZero(tax, field) && reason);
    if (!ok) add(rule, reason ? `Tax/${field} is not 0 but the line has a TaxExemptionReason` : `Tax/${field} is 0 but the line has no TaxExemptionReason`);
  }
  if (rules.has('exemption-code-and-reason') && reason !== code) {
    add('exemption-code-and-reason', reason ? 'TaxExemptionReason without TaxExemptionCode' : 'TaxExemptionCode without TaxExemptionReason');
  }
  if (rules.has('tax-base-unit-price') && has(line, 'TaxBase') && nonZero(line, 'UnitPrice')) {
    add('tax-base-unit-price', 'a line with TaxBase must have UnitPrice 0');
  }
  if (rules.has('tax-base-amounts') && has(line, 'TaxBase') && (nonZero(line, 'DebitAmount') || nonZero(line, 'CreditAmount'))) {
    add('tax-base-amounts', 'a line with TaxBase must have DebitAmount or CreditAmount 0');
  }
  if (rules.has('payment-line-tax') && paymentType === 'RC' && tax === undefined) {
    add('payment-line-tax', 'a line of a PaymentType RC receipt must have Tax');
  }
}

const INVOICE_LINE = new Set(['tax-amount-exemption', 'tax-percentage-exemption', 'exemption-code-and-reason', 'tax-base-unit-price', 'tax-base-amounts']);
const WORK_LINE = INVOICE_LINE;
const STOCK_LINE = new Set(['tax-percentage-exemption', 'exemption-code-and-reason']);
const PAYMENT_LINE = new Set(['tax-amount-exemption', 'tax-percentage-exemption', 'exemption-code-and-reason', 'payment-line-tax']);

const GROUPING_CODE_ABSENT = new Set(['GR', 'AR']);
const GROUPING_CODE_PRESENT = new Set(['GA', 'AA', 'GM', 'AM']);

/** The assertion rules a SAF-T (PT) file breaks (empty: none). Throws on XML that does not parse. */
export function saftAssertionViolations(xml: string | Buffer): AssertionViolation[] {
  const doc = obj(parser.parse(typeof xml === 'string' ? xml : decodeWindows1252(xml)).AuditFile);
  if (doc === undefined) throw new Error('pt-saft: not a SAF-T (PT) AuditFile');
  const out: AssertionViolation[] = [];

  for (const [i, account] of list(obj(obj(doc.MasterFiles)?.GeneralLedgerAccounts)?.Account).entries()) {
    const path = `GeneralLedgerAccounts/Account[${text(account, 'AccountID') ?? i + 1}]`;
    const category = text(account, 'GroupingCategory');
    const gm = category === 'GM';
    if (gm !== has(account, 'TaxonomyCode')) out.push({ rule: 'account-taxonomy', path, message: gm ? 'GroupingCategory GM needs a TaxonomyCode' : 'TaxonomyCode is only for GroupingCategory GM' });
    const grouping = has(account, 'GroupingCode');
    const ok = (GROUPING_CODE_ABSENT.has(category ?? '') && !grouping) || (GROUPING_CODE_PRESENT.has(category ?? '') && grouping);
    if (!ok) out.push({ rule: 'account-grouping', path, message: `GroupingCategory ${category ?? '(none)'} ${grouping ? 'takes no' : 'needs a'} GroupingCode` });
  }

  const source = obj(doc.SourceDocuments);
  const documents: Array<[string, string, unknown, ReadonlySet<string>]> = [
    ['SalesInvoices', 'Invoice', obj(source?.SalesInvoices)?.Invoice, INVOICE_LINE],
    ['MovementOfGoods', 'StockMovement', obj(source?.MovementOfGoods)?.StockMovement, STOCK_LINE],
    ['WorkingDocuments', 'WorkDocument', obj(source?.WorkingDocuments)?.WorkDocument, WORK_LINE],
  ];
  const ids: Record<string, string> = { Invoice: 'InvoiceNo', StockMovement: 'DocumentNumber', WorkDocument: 'DocumentNumber' };
  for (const [section, element, docs, rules] of documents) {
    for (const [i, d] of list(docs).entries()) {
      const base = `${section}/${element}[${text(d, ids[element]!) ?? i + 1}]`;
      for (const [j, line] of list(d.Line).entries()) checkLine(line, `${base}/Line[${j + 1}]`, rules, out);
    }
  }
  for (const [i, p] of list(obj(source?.Payments)?.Payment).entries()) {
    const base = `Payments/Payment[${text(p, 'PaymentRefNo') ?? i + 1}]`;
    const type = text(p, 'PaymentType');
    const lines = list(p.Line);
    lines.forEach((line, j) => checkLine(line, `${base}/Line[${j + 1}]`, PAYMENT_LINE, out, type));
    const taxed = lines.some((l) => has(obj(l.Tax), 'TaxType'));
    if (!((taxed && type === 'RC') || type === 'RG')) out.push({ rule: 'payment-type', path: base, message: `PaymentType ${type ?? '(none)'}: must be RG, or RC with Tax on its lines` });
  }
  return out;
}
