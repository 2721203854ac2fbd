/**
 * Finding a document AADE already holds when its duplicate answer names no MARK, and the
 * cancellation MARK of a document AADE answers "already cancelled" (251) for
 * (`documentQuery`, `cancellationMarkOf`: its `cancelledByMark`).
 *
 * AADE answers a second SendInvoices of a UID with 233 ("This UID has already been sent")
 * or, on the provider channel, 228 quoting the original MARK (response.ts `duplicateOf`).
 * When the message names no MARK we still need it: the receipt prints MARK, UID,
 * authentication code and QR (spec, Greek render_hints). `RequestTransmittedDocs`
 * (FORMATS.md §6, ERP services) lists the documents the caller transmitted with a MARK
 * greater than `mark`, as a `RequestedDoc` (requestedInvoicesDoc-v1.0.12.xsd): each
 * `invoicesDoc/invoice` is an `AadeBookInvoiceType` (uid, mark, cancelledByMark,
 * authenticationCode, the document, qrCodeUrl), and a `continuationToken`
 * (`nextPartitionKey`, `nextRowKey`) when more pages follow, asked for with the same
 * query plus those two parameters.
 *
 * Where the search starts (docs/decisions.md "Greece: a duplicate without a MARK"): from
 * MARK 0, narrowed to the document's issue date (`dateFrom` = `dateTo`, dd/MM/yyyy) and
 * invoice type (`invType`): the query parameters of AADE's documentation for
 * RequestDocs/RequestTransmittedDocs as we recall them (not in the XSDs; to be confirmed
 * against the dev environment). A day's documents of one type are few pages; we read at
 * most `MAX_PAGES`. A document not found is not a rejection: AADE said it holds it, so the
 * attempt is transient and the lookup runs again on the next retry.
 */
import { createHash } from 'node:crypto';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** One `invoice` of a RequestedDoc: what a receipt needs, and the fields its UID is made of. */
export interface TransmittedInvoice {
  uid?: string | undefined;
  mark?: string | undefined;
  cancelledByMark?: string | undefined;
  authenticationCode?: string | undefined;
  qrCodeUrl?: string | undefined;
  /** The UID computed from the document (AFM-issueDate-branch-invoiceType-series-aa), when its fields are there. */
  computedUid?: string | undefined;
}

/** One `cancelledInvoicesDoc/cancelledInvoice` of a RequestedDoc (CancelledInvoiceType). */
export interface TransmittedCancellation {
  invoiceMark: string;
  cancellationMark: string;
}

export interface RequestedDoc {
  invoices: TransmittedInvoice[];
  /** The cancellations AADE lists beside the documents (present only when it lists any). */
  cancellations?: TransmittedCancellation[] | undefined;
  continuation?: { nextPartitionKey: string; nextRowKey: string } | undefined;
}

/** Pages of RequestTransmittedDocs read for one lookup (each a round trip inside the 5 s attempt). */
export const MAX_PAGES = 5;

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  // MARKs are 15-digit longs: strings, never numbers.
  parseTagValue: false,
  trimValues: true,
  isArray: (name, jpath) => jpath === 'RequestedDoc.invoicesDoc.invoice' || jpath === 'RequestedDoc.cancelledInvoicesDoc.cancelledInvoice',
});

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The UID AADE gives a document (FORMATS.md §6): SHA-1 of its six fields joined by `-`, upper-case hex. */
export function uidOf(parts: readonly unknown[]): string | undefined {
  if (parts.some((p) => typeof p !== 'string' || p === '')) return undefined;
  return createHash('sha1').update(parts.join('-'), 'utf8').digest('hex').toUpperCase();
}

/** Reads a RequestedDoc; null when the body is not one (an error page, a ResponseDoc, JSON). */
export function parseRequestedDoc(xml: string): RequestedDoc | null {
  if (!/<(\w+:)?RequestedDoc[\s>/]/.test(xml)) return null;
  // A truncated page is unreadable, not the end of the list (the parser alone is lenient).
  if (XMLValidator.validate(xml) !== true) return null;
  let doc: Record<string, any>;
  try {
    doc = parser.parse(xml) as Record<string, any>;
  } catch {
    return null;
  }
  const root = doc.RequestedDoc;
  if (root === undefined) return null;
  const list = (root === '' ? undefined : root?.invoicesDoc?.invoice) as Record<string, any>[] | undefined;
  const invoices = (list ?? []).map((inv): TransmittedInvoice => {
    const h = inv.invoiceHeader ?? {};
    return {
      uid: str(inv.uid)?.toUpperCase(),
      mark: str(inv.mark),
      cancelledByMark: str(inv.cancelledByMark),
      authenticationCode: str(inv.authenticationCode),
      qrCodeUrl: str(inv.qrCodeUrl),
      computedUid: uidOf([inv.issuer?.vatNumber, h.issueDate, inv.issuer?.branch, h.invoiceType, h.series, h.aa]),
    };
  });
  const cancelled = (root === '' ? undefined : root?.cancelledInvoicesDoc?.cancelledInvoice) as Record<string, any>[] | undefined;
  const cancellations = (cancelled ?? []).flatMap((c): TransmittedCancellation[] => {
    const invoiceMark = str(c.invoiceMark);
    const cancellationMark = str(c.cancellationMark);
    return invoiceMark !== undefined && cancellationMark !== undefined ? [{ invoiceMark, cancellationMark }] : [];
  });
  const token = root?.continuationToken;
  const next = str(token?.nextPartitionKey) !== undefined && str(token?.nextRowKey) !== undefined
    ? { nextPartitionKey: token.nextPartitionKey as string, nextRowKey: token.nextRowKey as string }
    : undefined;
  return { invoices, ...(cancellations.length > 0 ? { cancellations } : {}), ...(next ? { continuation: next } : {}) };
}

/**
 * The MARK of the cancellation of the document `mark`, as a page lists it: the document's
 * `cancelledByMark`, or its entry among the cancellations. Undefined when the page does not
 * list the document, or lists it as not cancelled.
 */
export function cancellationMarkOf(doc: RequestedDoc, mark: string): string | undefined {
  return doc.invoices.find((i) => i.mark === mark)?.cancelledByMark
    ?? doc.cancellations?.find((c) => c.invoiceMark === mark)?.cancellationMark;
}

/** The invoice of a page whose UID (given by AADE, else computed from its fields) is `uid`. */
export function findByUid(doc: RequestedDoc, uid: string): TransmittedInvoice | undefined {
  const want = uid.toUpperCase();
  return doc.invoices.find((i) => i.mark !== undefined && (i.uid ?? i.computedUid) === want);
}

/**
 * The query that lists exactly one document, the one whose MARK is `mark`: AADE lists the
 * MARKs above `mark` and, with `maxMark`, up to and including it (FORMATS.md §6 services;
 * the parameters of RequestTransmittedDocs [secondary: firebed/aade-mydata docs,
 * request-transmitted-docs.md]). Used to read a cancelled document's `cancelledByMark`.
 */
export function documentQuery(mark: string, page?: RequestedDoc['continuation']): URLSearchParams {
  const q = new URLSearchParams({ mark: String(BigInt(mark) - 1n), maxMark: mark });
  if (page) {
    q.set('nextPartitionKey', page.nextPartitionKey);
    q.set('nextRowKey', page.nextRowKey);
  }
  return q;
}

/** The query of a lookup: from MARK 0, the document's issue date and type (see the header). */
export function lookupQuery(doc: { issueDate?: string | undefined; invoiceType?: string | undefined }, page?: RequestedDoc['continuation']): URLSearchParams {
  const q = new URLSearchParams({ mark: '0' });
  const m = doc.issueDate ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(doc.issueDate) : null;
  if (m) {
    const day = `${m[3]}/${m[2]}/${m[1]}`;
    q.set('dateFrom', day);
    q.set('dateTo', day);
  }
  if (doc.invoiceType) q.set('invType', doc.invoiceType);
  if (page) {
    q.set('nextPartitionKey', page.nextPartitionKey);
    q.set('nextRowKey', page.nextRowKey);
  }
  return q;
}
