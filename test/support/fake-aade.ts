/**
 * A fake AADE myDATA REST API for tests: real HTTPS on 127.0.0.1 with its own certificate
 * (clients trust it through `caPem`, the submit context's `authorityCa`). Unlike the
 * Spanish and Italian services, AADE asks for no client certificate: it authenticates
 * each call by two headers (FORMATS.md §6).
 *
 * - any path ending in `/SendInvoices` or `/CancelInvoice` (the four channels differ by
 *   prefix; `requests` keeps the path so a test sees which one was used);
 * - `aade-user-id` and `Ocp-Apim-Subscription-Key` must both be present (and equal to
 *   `credentials` when given): HTTP 401 with AADE's JSON otherwise;
 * - SendInvoices: the InvoicesDoc is validated against the XSD with xmllint
 *   (`validateSchema`, default true; invalid → XMLSyntaxError 101); each invoice's UID is
 *   computed here from its fields (SHA-1 of VAT number, issue date, branch, invoice type,
 *   series, aa); AADE's business validations of what the service writes are applied
 *   (`businessErrors`: counterpart by invoice type and country, counterpart = issuer, VAT
 *   exemption, totals, income classification combinations; a 5.1 without
 *   correlatedInvoices is 204), each as AADE's ValidationError code; a UID
 *   already registered is answered as AADE does, error 228 naming the
 *   UID and the original MARK (`duplicateCode` '233' for the ERP wording); else a new MARK
 *   (increasing), the UID, a QR URL and an authentication code;
 * - CancelInvoice?mark=: a cancellationMark; 104 for an unknown MARK, 251 when cancelled already;
 * - GET RequestTransmittedDocs?mark=n: a RequestedDoc (requestedInvoicesDoc-v1.0.12.xsd) with
 *   the registered documents whose MARK is above n, as AADE's book keeps them (uid, mark,
 *   cancelledByMark, authenticationCode, the invoice as sent, qrCodeUrl), filtered by
 *   `maxMark` (MARKs up to it), `dateFrom`/`dateTo` (dd/MM/yyyy, the issue date) and
 *   `invType` when given, in pages of
 *   `transmittedPageSize` with a continuationToken (`nextPartitionKey`, `nextRowKey`);
 * - `duplicatesWithoutMark()`: the duplicate answer names no MARK (the case the client
 *   must look up); `hideTransmitted()`: RequestTransmittedDocs lists nothing (AADE's book
 *   lagging behind; or 503);
 * - programmable: `slow(ms)` (the document is registered at once, the answer comes late:
 *   AADE got it even if the client gave up), `down()` (the connection is cut, no answer),
 *   `refuse()` (nothing listens: connection refused, until `normal()`),
 *   `unavailable()` (HTTP 503), `technicalError()`, `rejectWith(codes)` (ValidationError),
 *   `normal()`.
 *
 * Independent of the code under test: its own parsing (fast-xml-parser), UID and XML.
 */
import crypto from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { XMLParser } from 'fast-xml-parser';
import { localhostCertificate } from './fake-authority.ts';
import { HAVE_SCHEMAS, xsdValidate } from './xml-tools.ts';

export const MYDATA_XSD = 'gr/mydata/v1.0.12/InvoicesDoc-v1.0.12.xsd';

export interface AadeRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status?: number;
}

export interface AadeDocument {
  uid: string;
  mark: string;
  xml: string;
  issuerVat: string;
  series: string;
  aa: string;
  invoiceType: string;
  schemaValid: boolean;
  schemaOutput: string;
  cancellationMark?: string;
  issueDate: string;
  authenticationCode: string;
  qrUrl: string;
  /** The `invoice` element's content as sent (for RequestTransmittedDocs). */
  invoiceXml: string;
}

type Mode =
  | { kind: 'normal' }
  | { kind: 'slow'; ms: number }
  | { kind: 'down' }
  | { kind: 'unavailable' }
  | { kind: 'technical' }
  | { kind: 'reject'; codes: string[] };

export interface FakeAade {
  url: string;
  caPem: string;
  requests: AadeRequest[];
  /** Registered documents by UID. */
  documents: Map<string, AadeDocument>;
  /** SendInvoices calls that registered nothing new (duplicates), by UID. */
  duplicates: string[];
  slow(ms: number): void;
  down(): void;
  /** Stops listening (connection refused) until `normal()`. */
  refuse(): Promise<void>;
  unavailable(): void;
  technicalError(): void;
  rejectWith(codes: string[]): void;
  /** Duplicate answers name no MARK (until `reset()`). */
  duplicatesWithoutMark(on?: boolean): void;
  /** RequestTransmittedDocs lists no document, or answers 503 (until `reset()` or `hideTransmitted(false)`). */
  hideTransmitted(on?: boolean | 'unavailable'): void;
  /** Documents per RequestTransmittedDocs page (default `transmittedPageSize`, else 100). */
  transmittedPageSize: number;
  normal(): Promise<void>;
  reset(): Promise<void>;
  close(): Promise<void>;
}

export interface FakeAadeOptions {
  validateSchema?: boolean;
  /** The InvoicesDoc schema under ../shared/schemas (default v1.0.12; v2.0.1 is `gr/mydata/v2.0.1/InvoicesDoc-v2.0.1.xsd`). */
  xsd?: string;
  credentials?: { userId: string; subscriptionKey: string };
  duplicateCode?: '228' | '233';
  /** The first MARK handed out (then +1 each). */
  firstMark?: bigint;
  /** Duplicate answers name no MARK from the start. */
  duplicateWithoutMark?: boolean;
  transmittedPageSize?: number;
}


const parser = new XMLParser({
  removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true,
  isArray: (name) => name === 'invoice',
});

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface Entry {
  index: number;
  ok?: { uid?: string; mark?: string; qrUrl?: string; auth?: string; cancellationMark?: string };
  errors?: { code: string; message: string }[];
  status: 'Success' | 'ValidationError' | 'TechnicalError' | 'XMLSyntaxError';
}

/** AADE's ResponseDoc (response-v1.0.12.xsd), written here independently of the client. */
export function aadeResponseDoc(entries: Entry[]): string {
  const rs = entries.map((e) => {
    const body = e.errors
      ? `<errors>${e.errors.map((x) => `<error><message>${esc(x.message)}</message><code>${x.code}</code></error>`).join('')}</errors>`
      : (e.ok?.uid ? `<invoiceUid>${e.ok.uid}</invoiceUid>` : '') + (e.ok?.mark ? `<invoiceMark>${e.ok.mark}</invoiceMark>` : '') +
        (e.ok?.qrUrl ? `<qrUrl>${esc(e.ok.qrUrl)}</qrUrl>` : '') + (e.ok?.cancellationMark ? `<cancellationMark>${e.ok.cancellationMark}</cancellationMark>` : '') +
        (e.ok?.auth ? `<authenticationCode>${e.ok.auth}</authenticationCode>` : '');
    return `<response><index>${e.index}</index>${body}<statusCode>${e.status}</statusCode></response>`;
  });
  return `<?xml version="1.0" encoding="utf-8"?><ResponseDoc xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">${rs.join('')}</ResponseDoc>`;
}

export const INVOICE_NS = 'http://www.aade.gr/myDATA/invoice/v1.0';

/**
 * AADE's RequestedDoc (requestedInvoicesDoc-v1.0.12.xsd) listing documents as its book
 * keeps them: the sender's invoice with uid, mark, cancelledByMark and authenticationCode
 * before it and qrCodeUrl after invoiceSummary (AadeBookInvoiceType).
 */
export function aadeRequestedDoc(docs: readonly AadeDocument[], next?: { nextPartitionKey: string; nextRowKey: string }): string {
  const invoices = docs.map((d) => {
    const head = `<uid>${d.uid}</uid><mark>${d.mark}</mark>${d.cancellationMark ? `<cancelledByMark>${d.cancellationMark}</cancelledByMark>` : ''}<authenticationCode>${d.authenticationCode}</authenticationCode>`;
    const body = d.invoiceXml.replace(/(<\/(?:\w+:)?invoiceSummary>)/, `$1<qrCodeUrl>${esc(d.qrUrl)}</qrCodeUrl>`);
    return `<invoice>${head}${body}</invoice>`;
  });
  const token = next ? `<continuationToken><nextPartitionKey>${esc(next.nextPartitionKey)}</nextPartitionKey><nextRowKey>${esc(next.nextRowKey)}</nextRowKey></continuationToken>` : '';
  return `<?xml version="1.0" encoding="utf-8"?><RequestedDoc xmlns="${INVOICE_NS}" xmlns:icls="https://www.aade.gr/myDATA/incomeClassificaton/v1.0" xmlns:ecls="https://www.aade.gr/myDATA/expensesClassificaton/v1.0">` +
    `${token}${invoices.length > 0 ? `<invoicesDoc>${invoices.join('')}</invoicesDoc>` : ''}</RequestedDoc>`;
}

/** The UID of an invoice (FORMATS.md §6), computed from its parsed fields. */
export function aadeUid(f: { vat: string; issueDate: string; branch: string; invoiceType: string; series: string; aa: string }): string {
  return crypto.createHash('sha1').update([f.vat, f.issueDate, f.branch, f.invoiceType, f.series, f.aa].join('-'), 'utf8').digest('hex').toUpperCase();
}

const list = (v: unknown): Record<string, any>[] => (v === undefined || v === null || v === '' ? [] : Array.isArray(v) ? v : [v]) as Record<string, any>[];
const cents = (v: unknown): number => Math.round(Number(v ?? 0) * 100);

// EU member states other than Greece (ISO 3166-1), for the counterpart rules of 1.2/2.2 and 1.3/2.3.
const EU_NOT_GR = new Set(['AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'HR', 'HU', 'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK']);

/**
 * AADE's income classification combinations (appendix "Συνδυασμοί Χαρακτηρισμών Εσόδων", as
 * firebed/aade-mydata config/income-classifications.php lists them) for the invoice types
 * the service issues: type → category → classification types. 5.1 takes its correlated
 * invoice's; here the 5.2 list. Written out here, apart from the service's table.
 */
const C = (s: string) => s.split(' ').map((x) => `E3_${x}`);
const INCOME: Record<string, Record<string, string[]>> = (() => {
  const prev = (t: Record<string, string[]>, p: string[]) => ({ ...t, category1_8: p, category1_9: p });
  const other = C('562 563 564 565 566 567 568 570');
  const t11 = prev({
    category1_1: C('561_003 561_004 561_005 561_006 561_007'), category1_2: C('561_003 561_004 561_005 561_006 561_007'),
    category1_3: C('561_003 561_004 561_005 561_006 561_007 563'), category1_4: C('880_002 880_003 880_004 561_007'),
    category1_5: C('561_007 562 563 570'), category1_6: C('595'), category1_7: C('881_002 881_003 881_004'),
  }, C('561_003 561_004 561_005 561_006 561_007 562 563 595 570 880_002 880_003 880_004 881_002 881_003 881_004'));
  const all = C('561_001 561_002 561_003 561_004 561_005 561_006 561_007');
  const t113 = prev({
    category1_1: all, category1_2: all, category1_3: [...all, 'E3_563'], category1_4: C('880_001 880_002 880_003 880_004 561_007'),
    category1_5: [...C('561_007'), ...other, 'E3_561_002'], category1_6: C('595'), category1_7: C('881_001 881_002 881_003 881_004'),
  }, [...all, ...C('880_001 880_002 880_003 880_004'), ...other, 'E3_595', ...C('881_001 881_002 881_003 881_004')]);
  const credit = C('561_001 561_002 561_005 561_006 561_007');
  const t52 = prev({
    category1_1: credit, category1_2: credit, category1_3: [...credit, 'E3_563'], category1_4: C('880_001 880_003 880_004'),
    category1_5: [...C('561_002 561_005 561_006 561_007'), ...other], category1_7: C('881_001 881_003 881_004'),
  }, [...credit, ...other, ...C('880_001 880_003 880_004 881_001 881_003 881_004')]);
  const abroad = (s: string, fa: string, tp: string) => prev({
    category1_1: C(`${s} 561_007`), category1_2: C(`${s} 561_007`), category1_3: C(`${s} 561_007`), category1_4: C(fa),
    category1_5: C(`${s} 561_007 562 570`), category1_7: C(tp),
  }, C(`${s} 561_007 562 570 ${fa} ${tp}`));
  const services = (s: string) => prev({ category1_3: C(`${s} 561_007 563`), category1_5: C(`${s} 561_007 562 570`) }, C(`${s} 561_007 562 563 570`));
  return {
    '1.1': prev({
      category1_1: C('561_001 561_002 561_007'), category1_2: C('561_001 561_002 561_007'), category1_3: C('561_001 561_002 561_007 563'),
      category1_4: C('880_001'), category1_5: [...C('561_002 561_007'), ...other], category1_7: C('881_001 881_003 881_004'), category1_95: C('596 597'),
    }, [...C('561_001 561_002 561_007'), ...other, ...C('880_001 881_001 881_003 881_004')]),
    '1.2': abroad('561_005', '880_003', '881_003'), '1.3': abroad('561_006', '880_004', '881_004'),
    '2.1': prev({ category1_3: C('561_001 561_002 561_007 563'), category1_5: ['E3_561_007', ...other] }, [...C('561_001 561_002 561_007'), ...other]),
    '2.2': services('561_005'), '2.3': services('561_006'),
    '5.1': t52, '5.2': t52,
    '11.1': t11,
    '11.2': prev({ category1_3: C('561_003 561_005 561_006 561_007 563'), category1_5: C('561_007 562 563 570'), category1_6: C('595') }, C('561_003 561_005 561_006 561_007 562 563 595 570')),
    '11.3': t113, '11.4': t113,
  };
})();

/**
 * AADE's business validations (myDATA ERP API documentation, error table) of one parsed
 * invoice, for what the service writes: 204/205 counterpart mandatory / forbidden by
 * invoice type (and 204 correlatedInvoices for a 5.1), 242-244 the counterpart's country
 * by invoice type, 235 counterpart = issuer, 220 a Greek counterpart's name, 217 / 271
 * vatCategory 7 and vatExemptionCategory, 207 / 209 / 203 totals, 307 / 308 income
 * classification combinations.
 */
function businessErrors(inv: Record<string, any>): { code: string; message: string }[] {
  const errors: { code: string; message: string }[] = [];
  const h = inv.invoiceHeader ?? {};
  const type = String(h.invoiceType ?? '');
  const retail = type.startsWith('11.');
  const cp = inv.counterpart as Record<string, any> | undefined;
  if (type === '5.1' && (h.correlatedInvoices === undefined || h.correlatedInvoices === '')) errors.push({ code: '204', message: 'CorrelatedInvoices is mandatory for this invoice type' });
  if (retail && cp) errors.push({ code: '205', message: 'Counterpart is forbidden for this invoice type' });
  if (!retail && !cp) errors.push({ code: '204', message: 'Counterpart is mandatory for this invoice type' });
  if (cp) {
    const country = String(cp.country ?? '');
    if ((type === '1.1' || type === '2.1') && country !== 'GR') errors.push({ code: '242', message: "Counterpart 's country for this invoice type must be Greece" });
    if ((type === '1.2' || type === '2.2') && !EU_NOT_GR.has(country)) errors.push({ code: '243', message: "Counterpart 's country for this invoice type must be in Europe but not Greece" });
    if ((type === '1.3' || type === '2.3') && (country === 'GR' || EU_NOT_GR.has(country))) errors.push({ code: '244', message: "Counterpart 's country for this invoice type must not be in EU" });
    if (String(cp.vatNumber ?? '') === String(inv.issuer?.vatNumber ?? '')) errors.push({ code: '235', message: 'Issuer must be different from counterpart' });
    if (country === 'GR' && cp.name !== undefined) errors.push({ code: '220', message: 'Counterpart Name is forbidden for Counterpart from Greece' });
  }
  const rows = list(inv.invoiceDetails);
  let net = 0;
  let vat = 0;
  for (const r of rows) {
    net += cents(r.netValue);
    vat += cents(r.vatAmount);
    const exemption = r.vatExemptionCategory !== undefined && r.vatExemptionCategory !== '';
    if (String(r.vatCategory) === '7' && !exemption) errors.push({ code: '217', message: 'When vatCategory has value 7, element vatExemptionCategory is mandatory' });
    if (String(r.vatCategory) !== '7' && exemption) errors.push({ code: '271', message: `Invoice Line Number: ${r.lineNumber}. VatExemptionCategory field is used only in case of vatCategory = 7` });
    const table = INCOME[type];
    for (const c of list(r.incomeClassification)) {
      if (!table) continue;
      const category = String(c.classificationCategory);
      const allowed = table[category];
      if (!allowed) errors.push({ code: '308', message: `Classification category ${category} is forbidden for Invoice type ${type}` });
      else if (!allowed.includes(String(c.classificationType))) {
        errors.push({ code: '307', message: `Classification type ${String(c.classificationType)} is forbidden for Classification category ${category} combined with invoice type ${type}` });
      }
    }
  }
  const s = inv.invoiceSummary ?? {};
  if (net !== cents(s.totalNetValue)) errors.push({ code: '207', message: "The sum of net values of the invoice lines doesn't match with total net value of the invoice" });
  if (vat !== cents(s.totalVatAmount)) errors.push({ code: '209', message: "The sum of vat amount of the invoice lines doesn't match with total vat amount of the invoice" });
  const gross = cents(s.totalNetValue) + cents(s.totalVatAmount) - cents(s.totalWithheldAmount) + cents(s.totalFeesAmount) + cents(s.totalStampDutyAmount) + cents(s.totalOtherTaxesAmount) - cents(s.totalDeductionsAmount);
  if (gross !== cents(s.totalGrossValue)) errors.push({ code: '203', message: "Gross Value doesn't match with sum of net value plus taxes" });
  return errors;
}

export async function startFakeAade(opts: FakeAadeOptions = {}): Promise<FakeAade> {
  const validateSchema = opts.validateSchema ?? true;
  const duplicateCode = opts.duplicateCode ?? '228';
  const requests: AadeRequest[] = [];
  const documents = new Map<string, AadeDocument>();
  const duplicates: string[] = [];
  let mode: Mode = { kind: 'normal' };
  let nextMark = opts.firstMark ?? 400001000000001n;
  let withoutMark = opts.duplicateWithoutMark ?? false;
  let hidden: boolean | 'unavailable' = false;
  const newMark = () => String(nextMark++);

  const xml = (status: number, body: string) => ({ status, type: 'application/xml; charset=utf-8', body });

  function sendInvoices(body: string, origin: string) {
    if (mode.kind === 'technical') return xml(200, aadeResponseDoc([{ index: 1, errors: [{ code: '999', message: 'Technical error (fake)' }], status: 'TechnicalError' }]));
    let schemaValid = true;
    let schemaOutput = '';
    if (validateSchema && HAVE_SCHEMAS) {
      const r = xsdValidate(body, opts.xsd ?? MYDATA_XSD);
      schemaValid = r.ok;
      schemaOutput = r.output;
      if (!r.ok) return xml(200, aadeResponseDoc([{ index: 1, errors: [{ code: '101', message: `XML Syntax Validation Error: ${r.output.slice(0, 300)}` }], status: 'XMLSyntaxError' }]));
    }
    let invoices: Record<string, any>[];
    try {
      invoices = (parser.parse(body) as Record<string, any>).InvoicesDoc?.invoice ?? [];
    } catch (err) {
      return xml(200, aadeResponseDoc([{ index: 1, errors: [{ code: '101', message: `XML Syntax Validation Error: ${(err as Error).message}` }], status: 'XMLSyntaxError' }]));
    }
    if (invoices.length === 0) return xml(200, aadeResponseDoc([{ index: 1, errors: [{ code: '101', message: 'XML Syntax Validation Error: no invoice' }], status: 'XMLSyntaxError' }]));
    const invoiceXmls = [...body.matchAll(/<(?:\w+:)?invoice>([\s\S]*?)<\/(?:\w+:)?invoice>/g)].map((m) => m[1]!);
    const entries = invoices.map((inv, i): Entry => {
      const h = inv.invoiceHeader ?? {};
      const f = { vat: String(inv.issuer?.vatNumber ?? ''), issueDate: String(h.issueDate ?? ''), branch: String(inv.issuer?.branch ?? ''), invoiceType: String(h.invoiceType ?? ''), series: String(h.series ?? ''), aa: String(h.aa ?? '') };
      const uid = aadeUid(f);
      if (mode.kind === 'reject') {
        return { index: i + 1, errors: mode.codes.map((code) => ({ code, message: `Validation error ${code} (fake)` })), status: 'ValidationError' };
      }
      const refused = businessErrors(inv);
      if (refused.length > 0) return { index: i + 1, errors: refused, status: 'ValidationError' };
      const known = documents.get(uid);
      if (known) {
        duplicates.push(uid);
        const auth = crypto.createHash('md5').update(known.mark).digest('hex').toUpperCase();
        const message = withoutMark
          ? (duplicateCode === '228' ? `The UID: ${uid} is invalid . It has already been sent for another invoice` : 'This UID has already been sent')
          : duplicateCode === '228'
            ? `The UID: ${uid} is invalid . It has already been sent for another invoice (MARK:${known.mark} , AUTHENTICATION_CODE:${auth})`
            : `This UID has already been sent (MARK:${known.mark})`;
        return { index: i + 1, errors: [{ code: duplicateCode, message }], status: 'ValidationError' };
      }
      const mark = newMark();
      const q = Buffer.from(`${uid}:${mark}`).toString('base64');
      const qrUrl = `${origin}/TimologioQR/QRInfo?q=${encodeURIComponent(q)}`;
      const auth = crypto.createHash('md5').update(mark).digest('hex').toUpperCase();
      documents.set(uid, {
        uid, mark, xml: body, issuerVat: f.vat, series: f.series, aa: f.aa, invoiceType: f.invoiceType, schemaValid, schemaOutput,
        issueDate: f.issueDate, authenticationCode: auth, qrUrl, invoiceXml: invoiceXmls[i] ?? '',
      });
      return { index: i + 1, status: 'Success', ok: { uid, mark, qrUrl, auth } };
    });
    return xml(200, aadeResponseDoc(entries));
  }

  function cancelInvoice(query: URLSearchParams) {
    const mark = query.get('mark') ?? '';
    const doc = [...documents.values()].find((d) => d.mark === mark);
    if (!doc) return xml(200, aadeResponseDoc([{ index: 1, errors: [{ code: '104', message: `The requested invoice with mark ${mark} was not found` }], status: 'ValidationError' }]));
    if (doc.cancellationMark) return xml(200, aadeResponseDoc([{ index: 1, errors: [{ code: '251', message: `Invoice with mark ${mark} is already cancelled` }], status: 'ValidationError' }]));
    doc.cancellationMark = newMark();
    return xml(200, aadeResponseDoc([{ index: 1, ok: { cancellationMark: doc.cancellationMark }, status: 'Success' }]));
  }

  const api = { transmittedPageSize: opts.transmittedPageSize ?? 100 };

  function requestTransmittedDocs(query: URLSearchParams) {
    if (hidden === 'unavailable') return { status: 503, type: 'text/html', body: '<html><body>Service Unavailable</body></html>' };
    const markText = query.get('mark');
    if (markText === null || !/^\d+$/.test(markText)) return xml(400, aadeResponseDoc([{ index: 1, errors: [{ code: '101', message: 'mark is required' }], status: 'ValidationError' }]));
    const day = (v: string | null) => (v && /^\d{2}\/\d{2}\/\d{4}$/.test(v) ? `${v.slice(6)}-${v.slice(3, 5)}-${v.slice(0, 2)}` : undefined);
    const from = day(query.get('dateFrom'));
    const to = day(query.get('dateTo'));
    const type = query.get('invType');
    const after = BigInt(markText);
    const maxText = query.get('maxMark');
    const max = maxText !== null && /^\d+$/.test(maxText) ? BigInt(maxText) : undefined;
    const all = hidden ? [] : [...documents.values()]
      .filter((d) => BigInt(d.mark) > after && (max === undefined || BigInt(d.mark) <= max) && (!from || d.issueDate >= from) && (!to || d.issueDate <= to) && (!type || d.invoiceType === type))
      .sort((a, b) => (BigInt(a.mark) < BigInt(b.mark) ? -1 : 1));
    const offset = Number(query.get('nextRowKey') ?? '0') || 0;
    const page = all.slice(offset, offset + api.transmittedPageSize);
    const end = offset + page.length;
    return xml(200, aadeRequestedDoc(page, end < all.length ? { nextPartitionKey: `fake-${markText}`, nextRowKey: String(end) } : undefined));
  }

  const { key, cert } = localhostCertificate();
  let origin = '';
  const server = https.createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const r: AadeRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body };
        requests.push(r);
        const answer = (status: number, type: string, text: string) => {
          r.status = status;
          res.writeHead(status, { 'content-type': type }).end(text);
        };
        if (mode.kind === 'down') {
          req.socket.destroy();
          return;
        }
        if (mode.kind === 'unavailable') return answer(503, 'text/html', '<html><body>Service Unavailable</body></html>');
        const user = req.headers['aade-user-id'];
        const subKey = req.headers['ocp-apim-subscription-key'];
        const authorized = typeof user === 'string' && user !== '' && typeof subKey === 'string' && subKey !== '' &&
          (!opts.credentials || (user === opts.credentials.userId && subKey === opts.credentials.subscriptionKey));
        if (!authorized) {
          return answer(401, 'application/json', JSON.stringify({ statusCode: 401, message: 'Access denied due to invalid subscription key or user id.' }));
        }
        const url = new URL(req.url ?? '/', 'https://127.0.0.1');
        let out: { status: number; type: string; body: string };
        if (req.method === 'POST' && url.pathname.endsWith('/SendInvoices')) out = sendInvoices(body, origin);
        else if (req.method === 'POST' && url.pathname.endsWith('/CancelInvoice')) out = cancelInvoice(url.searchParams);
        else if (req.method === 'GET' && url.pathname.endsWith('/RequestTransmittedDocs')) out = requestTransmittedDocs(url.searchParams);
        else out = { status: 404, type: 'text/plain', body: 'not found' };
        // Slow: registered already, the answer comes late (the client may have given up).
        if (mode.kind === 'slow') await new Promise((resolve) => setTimeout(resolve, (mode as { ms: number }).ms));
        if (res.destroyed) return;
        answer(out.status, out.type, out.body);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  origin = `https://127.0.0.1:${port}`;
  let listening = true;
  const listen = async () => {
    if (listening) return;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    listening = true;
  };
  return {
    get transmittedPageSize() {
      return api.transmittedPageSize;
    },
    set transmittedPageSize(n: number) {
      api.transmittedPageSize = n;
    },
    duplicatesWithoutMark: (on = true) => (withoutMark = on),
    hideTransmitted: (on = true) => (hidden = on),
    url: origin,
    caPem: cert,
    requests,
    documents,
    duplicates,
    slow: (ms) => (mode = { kind: 'slow', ms }),
    down: () => (mode = { kind: 'down' }),
    unavailable: () => (mode = { kind: 'unavailable' }),
    technicalError: () => (mode = { kind: 'technical' }),
    rejectWith: (codes) => (mode = { kind: 'reject', codes }),
    refuse: async () => {
      if (!listening) return;
      listening = false;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    normal: async () => {
      mode = { kind: 'normal' };
      await listen();
    },
    reset: async () => {
      mode = { kind: 'normal' };
      await listen();
      requests.length = 0;
      documents.clear();
      withoutMark = opts.duplicateWithoutMark ?? false;
      hidden = false;
      api.transmittedPageSize = opts.transmittedPageSize ?? 100;
      duplicates.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        if (!listening) return resolve();
        server.close(() => resolve());
      }),
  };
}

/**
 * A small valid InvoicesDoc (v1.0.12: one retail line at 24 %, income classification) for
 * client tests and for the API tests' stand-in while the record builder is a placeholder.
 */
export function sampleInvoicesDoc(f: { vat: string; branch?: number; series: string; aa: string; issueDate: string; invoiceType?: string; netCents: number; vatCents: number }): string {
  const d = (c: number) => (c / 100).toFixed(2);
  const cls = `<incomeClassification><icls:classificationType>E3_561_003</icls:classificationType><icls:classificationCategory>category1_2</icls:classificationCategory><icls:amount>${d(f.netCents)}</icls:amount></incomeClassification>`;
  return '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<InvoicesDoc xmlns="http://www.aade.gr/myDATA/invoice/v1.0" xmlns:icls="https://www.aade.gr/myDATA/incomeClassificaton/v1.0"><invoice>' +
    `<issuer><vatNumber>${f.vat}</vatNumber><country>GR</country><branch>${f.branch ?? 0}</branch></issuer>` +
    `<invoiceHeader><series>${esc(f.series)}</series><aa>${f.aa}</aa><issueDate>${f.issueDate}</issueDate><invoiceType>${f.invoiceType ?? '11.1'}</invoiceType><currency>EUR</currency></invoiceHeader>` +
    `<paymentMethods><paymentMethodDetails><type>3</type><amount>${d(f.netCents + f.vatCents)}</amount></paymentMethodDetails></paymentMethods>` +
    `<invoiceDetails><lineNumber>1</lineNumber><netValue>${d(f.netCents)}</netValue><vatCategory>1</vatCategory><vatAmount>${d(f.vatCents)}</vatAmount>${cls}</invoiceDetails>` +
    `<invoiceSummary><totalNetValue>${d(f.netCents)}</totalNetValue><totalVatAmount>${d(f.vatCents)}</totalVatAmount><totalWithheldAmount>0.00</totalWithheldAmount>` +
    '<totalFeesAmount>0.00</totalFeesAmount><totalStampDutyAmount>0.00</totalStampDutyAmount><totalOtherTaxesAmount>0.00</totalOtherTaxesAmount><totalDeductionsAmount>0.00</totalDeductionsAmount>' +
    `<totalGrossValue>${d(f.netCents + f.vatCents)}</totalGrossValue>${cls}</invoiceSummary>` +
    '</invoice></InvoicesDoc>';
}
