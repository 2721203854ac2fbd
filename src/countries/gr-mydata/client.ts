/**
 * The myDATA transport (`submit` in `authority` mode): SendInvoices with the record's
 * InvoicesDoc, or CancelInvoice?mark=<MARK> for a cancellation, over HTTPS with the two
 * headers AADE authenticates a caller by (FORMATS.md §6): `aade-user-id` (the location's
 * `aade_user_id`) and `Ocp-Apim-Subscription-Key` (its sealed `subscription_key`,
 * unsealed by the core for `submit`). No TLS client certificate. A duplicate answer that
 * names no MARK is followed by RequestTransmittedDocs (transmitted.ts) to recover it, and
 * so is a CancelInvoice answered "already cancelled" (251), for the cancellation's MARK.
 *
 * Base URLs by the location's `env` (FORMATS.md §6 [secondary: firebed/aade-mydata docs]):
 * ERP production `https://mydatapi.aade.gr/myDATA/`, ERP development
 * `https://mydataapidev.aade.gr/` (no `/myDATA`), provider production
 * `https://mydatapi.aade.gr/myDataProvider/`, provider development
 * `https://mydataapidev.aade.gr/myDATAProvider/` (AADE spells the two differently).
 * `ctx.authorityBaseUrl` (AUTHORITY_URL_GR_MYDATA_TEST/LIVE) replaces scheme and host and
 * keeps the path, so tests reach a fake AADE on 127.0.0.1 and see which channel was used.
 *
 * One attempt lasts at most the 5 s inline window (spec Limits); the first, less a margin:
 * the create call waits 5 s too, and the timeout must be recorded (`offline_pending`, its
 * label) before that wait ends, so the POS gets the offline status, not `processing`.
 */
import { XMLParser } from 'fast-xml-parser';
import { authorityGet, authorityPost } from '../shared/authority-http.ts';
import { configString } from '../shared/config-fields.ts';
import { TransportError, type AuthorityOutcome, type StoredRecord, type SubmitContext } from '../types.ts';
import {
  alreadyCancelledOutcome, cancelOutcome, duplicateNotFoundOutcome, duplicateWithLookup, errorOf, foundDuplicateOutcome, LOCAL_CODES, markLessDuplicate, sendOutcome,
  type AadeAnswer, type CancellationLookup, type TransmittedLookup,
} from './response.ts';
import { cancellationMarkOf, documentQuery, findByUid, lookupQuery, MAX_PAGES, parseRequestedDoc, uidOf, type RequestedDoc } from './transmitted.ts';

export type MyDataEnv = 'sandbox' | 'production' | 'provider_sandbox' | 'provider_production';

export const MYDATA_BASE_URLS: Readonly<Record<MyDataEnv, string>> = {
  sandbox: 'https://mydataapidev.aade.gr/',
  production: 'https://mydatapi.aade.gr/myDATA/',
  provider_sandbox: 'https://mydataapidev.aade.gr/myDATAProvider/',
  provider_production: 'https://mydatapi.aade.gr/myDataProvider/',
};

/**
 * Milliseconds kept out of the first attempt (the one the create call waits for) so that
 * its failure is stored before the 5 s wait ends; later attempts run in the background and
 * take the whole window.
 */
export const INLINE_MARGIN_MS = 1000;

/** The HTTP timeout of an attempt. */
export const attemptTimeoutMs = (ctx: Pick<SubmitContext, 'timeoutMs' | 'attempt'>): number =>
  ctx.attempt <= 1 ? Math.max(1000, ctx.timeoutMs - INLINE_MARGIN_MS) : ctx.timeoutMs;

const isEnv = (v: unknown): v is MyDataEnv => typeof v === 'string' && Object.hasOwn(MYDATA_BASE_URLS, v);

/** The URL of a myDATA service for the location's channel; a configured base URL replaces scheme and host. */
export function myDataUrl(service: 'SendInvoices' | 'CancelInvoice' | 'RequestTransmittedDocs', ctx: Pick<SubmitContext, 'location' | 'authorityBaseUrl' | 'environment'>): string {
  const configured = ctx.location.config.env;
  // A location always has env (validated); a live key without one would be production.
  const env: MyDataEnv = isEnv(configured) ? configured : ctx.environment === 'live' ? 'production' : 'sandbox';
  const official = new URL(service, MYDATA_BASE_URLS[env]);
  if (!ctx.authorityBaseUrl) return official.toString();
  return new URL(official.pathname, new URL(ctx.authorityBaseUrl).origin).toString();
}

/** The authentication headers of every call. */
export function myDataHeaders(ctx: Pick<SubmitContext, 'location'>): Record<string, string> {
  return {
    'aade-user-id': configString(ctx.location.config, 'aade_user_id') ?? '',
    'Ocp-Apim-Subscription-Key': configString(ctx.location.config, 'subscription_key') ?? '',
    accept: 'application/xml',
  };
}

/** What a stored record asks AADE to do. */
export type MyDataCall = { op: 'send'; body: string } | { op: 'cancel'; mark: string; entityVatNumber?: string } | { op: 'none'; why: string };

export function callOf(record: StoredRecord): MyDataCall {
  if (record.contentType.startsWith('application/xml')) {
    if (!/<(\w+:)?InvoicesDoc[\s>]/.test(record.body)) return { op: 'none', why: 'the record is XML but not an InvoicesDoc' };
    return { op: 'send', body: record.body };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(record.body);
  } catch {
    return { op: 'none', why: 'the record is neither an InvoicesDoc nor a CancelInvoice call' };
  }
  const p = parsed as { operation?: unknown; mark?: unknown; entityVatNumber?: unknown };
  if (p.operation === 'CancelInvoice') {
    if (typeof p.mark === 'string' && /^\d{1,19}$/.test(p.mark)) {
      // entityVatNumber: the issuer's AFM when the caller acts for it (a provider, an accountant).
      return typeof p.entityVatNumber === 'string' && p.entityVatNumber !== ''
        ? { op: 'cancel', mark: p.mark, entityVatNumber: p.entityVatNumber }
        : { op: 'cancel', mark: p.mark };
    }
    return { op: 'none', why: 'the cancellation names no MARK (the original was never registered by AADE)' };
  }
  // A record from before the real format (a JSON placeholder) cannot be sent.
  return { op: 'none', why: 'the record is a placeholder, not an InvoicesDoc' };
}

async function post(url: string, body: string, ctx: SubmitContext): Promise<AadeAnswer> {
  const res = await authorityPost({
    url,
    headers: { ...myDataHeaders(ctx), 'content-type': 'application/xml; charset=utf-8' },
    body,
    clientKey: undefined,
    ca: ctx.authorityCa,
    timeoutMs: attemptTimeoutMs(ctx),
  });
  return { status: res.status, body: res.body.toString('utf8'), retryAfter: res.headers['retry-after'] };
}

const docParser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });

/**
 * The UID of the (first) invoice of an InvoicesDoc, as AADE computes it (FORMATS.md §6):
 * SHA-1 of issuer VAT number, issue date, branch, invoice type, series and aa joined by
 * `-`, upper-case hex. UTF-8 for the text (the FAQ does not say; it matters only for a
 * Greek series). Undefined when the document lacks a field. The build stores the same
 * UID as the record's fingerprint; `submit` is not handed that, so it is read back from
 * the document it sends: a duplicate answer naming another UID is not about this document.
 */
export function uidOfInvoicesDoc(xml: string): string | undefined {
  return headerOfInvoicesDoc(xml).uid;
}

/** The UID, issue date and invoice type of the (first) invoice of an InvoicesDoc. */
export function headerOfInvoicesDoc(xml: string): { uid?: string | undefined; issueDate?: string | undefined; invoiceType?: string | undefined } {
  let doc: Record<string, any>;
  try {
    doc = docParser.parse(xml) as Record<string, any>;
  } catch {
    return {};
  }
  const inv = doc.InvoicesDoc?.invoice;
  const first = Array.isArray(inv) ? inv[0] : inv;
  const h = first?.invoiceHeader;
  const parts = [first?.issuer?.vatNumber, h?.issueDate, first?.issuer?.branch, h?.invoiceType, h?.series, h?.aa];
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    uid: uidOf(parts),
    issueDate: text(h?.issueDate),
    invoiceType: text(h?.invoiceType),
  };
}

async function get(url: string, ctx: SubmitContext, timeoutMs: number): Promise<AadeAnswer> {
  const res = await authorityGet({ url, headers: myDataHeaders(ctx), clientKey: undefined, ca: ctx.authorityCa, timeoutMs });
  return { status: res.status, body: res.body.toString('utf8'), retryAfter: res.headers['retry-after'] };
}

/**
 * Reads RequestTransmittedDocs (transmitted.ts) page by page until `pick` finds what is
 * looked for: at most `MAX_PAGES` pages, all within the attempt's time (the core bounds the
 * whole `submit` by it). Found → it; else why not.
 */
async function readTransmitted<T>(
  queryOf: (page: RequestedDoc['continuation']) => URLSearchParams,
  pick: (doc: RequestedDoc) => T | undefined,
  ctx: SubmitContext,
  deadline: number,
): Promise<{ found: T; pages: number } | { why: string; pages: number }> {
  let page: RequestedDoc['continuation'];
  let pages = 0;
  while (pages < MAX_PAGES) {
    const left = deadline - Date.now();
    if (left < 200) return { why: `could not be read to the end within the attempt's time (${pages} pages)`, pages };
    let answer: AadeAnswer;
    try {
      answer = await get(`${myDataUrl('RequestTransmittedDocs', ctx)}?${queryOf(page).toString()}`, ctx, left);
    } catch (err) {
      if (err instanceof TransportError) return { why: `did not answer (${err.code}: ${err.message})`, pages };
      throw err;
    }
    pages++;
    const requested = answer.status === 200 ? parseRequestedDoc(answer.body) : null;
    if (requested === null) return { why: `answered HTTP ${answer.status} without a RequestedDoc`, pages };
    const found = pick(requested);
    if (found !== undefined) return { found, pages };
    if (!requested.continuation) return { why: `does not list it (${pages} pages)`, pages };
    page = requested.continuation;
  }
  return { why: `does not list it in the first ${MAX_PAGES} pages`, pages };
}

/** The document AADE says it holds, by its UID: its entry (MARK, UID, authentication code, QR URL), or why none. */
async function findTransmitted(
  doc: { uid: string; issueDate?: string | undefined; invoiceType?: string | undefined },
  ctx: SubmitContext,
  deadline: number,
): Promise<TransmittedLookup> {
  return readTransmitted(
    (page) => lookupQuery(doc, page),
    (requested) => {
      const found = findByUid(requested, doc.uid);
      return found?.mark !== undefined ? { ...found, mark: found.mark } : undefined;
    },
    ctx, deadline,
  );
}

/** The MARK of the cancellation of the document `mark` (its `cancelledByMark` in AADE's book), or why none. */
async function findCancellation(mark: string, ctx: SubmitContext, deadline: number): Promise<CancellationLookup> {
  const r = await readTransmitted((page) => documentQuery(mark, page), (requested) => cancellationMarkOf(requested, mark), ctx, deadline);
  return 'found' in r ? { cancellationMark: r.found, pages: r.pages } : r;
}

/**
 * AADE holds the document without naming its MARK: the lookup recovers it (`duplicate_as_success`
 * with the original MARK, UID, authentication code and QR URL); not found, or the lookup
 * fails → transient.
 */
async function lookUpDuplicate(
  dup: { code: string; message: string },
  doc: { uid: string; issueDate?: string | undefined; invoiceType?: string | undefined },
  ctx: SubmitContext,
  deadline: number,
): Promise<AuthorityOutcome> {
  const r = await findTransmitted(doc, ctx, deadline);
  return 'found' in r ? foundDuplicateOutcome(dup, doc.uid, r.found, r.pages) : duplicateNotFoundOutcome(dup, r.why, r.pages);
}

/**
 * No answer at all (timeout, connection cut or refused): transient, as the spec's Greek
 * `error.category` says; the core retries it like the TransportError it was. The stub
 * (sandbox.ts) answers a rehearsed timeout with the same outcome.
 */
export const transportFaultOutcome = (err: TransportError): AuthorityOutcome =>
  ({ kind: 'retry_later', code: err.code, message: err.message, response: { category: 'transient' }, error: errorOf('transient') });

/** Sends the record to AADE and reads its answer. */
export async function submitToAade(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  try {
    return await send(record, ctx);
  } catch (err) {
    if (err instanceof TransportError) return transportFaultOutcome(err);
    throw err;
  }
}

async function send(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  const call = callOf(record);
  if (call.op === 'none') {
    return { kind: 'rejected', code: LOCAL_CODES.notADocument, message: `nothing to send to AADE: ${call.why}`, response: { category: 'permanent', contentType: record.contentType }, error: errorOf('permanent') };
  }
  if (call.op === 'cancel') {
    // CancelInvoice takes the MARK (and, for a caller acting for the issuer, its AFM) in the query, and no body.
    const query = new URLSearchParams({ mark: call.mark, ...(call.entityVatNumber ? { entityVatNumber: call.entityVatNumber } : {}) });
    const url = `${myDataUrl('CancelInvoice', ctx)}?${query.toString()}`;
    const deadline = Date.now() + attemptTimeoutMs(ctx);
    const outcome = cancelOutcome(await post(url, '', ctx), call.mark);
    // Already cancelled (251, typically our own call whose answer was lost): the answer names
    // no cancellation MARK, which the receipt prints; AADE's book has it.
    if (outcome.kind === 'duplicate' && outcome.upstreamId === undefined) {
      return alreadyCancelledOutcome(outcome, await findCancellation(call.mark, ctx, deadline));
    }
    return outcome;
  }
  const deadline = Date.now() + attemptTimeoutMs(ctx);
  const doc = headerOfInvoicesDoc(call.body);
  const answer = await post(myDataUrl('SendInvoices', ctx), call.body, ctx);
  // A duplicate answer without the MARK: ask AADE which MARK it gave this UID.
  const dup = markLessDuplicate(answer, { uid: doc.uid });
  if (dup !== null && doc.uid !== undefined) return lookUpDuplicate(dup, { ...doc, uid: doc.uid }, ctx, deadline);
  const outcome = sendOutcome(answer, { uid: doc.uid });
  // A duplicate naming its MARK still lacks the QR URL the receipt must print: AADE's book has it.
  if (outcome.kind === 'duplicate' && doc.uid !== undefined) {
    return duplicateWithLookup(outcome, await findTransmitted({ ...doc, uid: doc.uid }, ctx, deadline));
  }
  return outcome;
}
