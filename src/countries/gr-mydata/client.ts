/**
 * The myDATA transport (`submit` in `authority` mode): SendInvoices with the record's
 * InvoicesDoc, or CancelInvoice?mark=<MARK> for a cancellation, over HTTPS with the two
 * headers AADE authenticates a caller by (FORMATS.md §6): `aade-user-id` (the location's
 * `aade_user_id`) and `Ocp-Apim-Subscription-Key` (its sealed `subscription_key`,
 * unsealed by the core for `submit`). No TLS client certificate.
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
import { createHash } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { authorityPost } from '../shared/authority-http.ts';
import { configString } from '../shared/config-fields.ts';
import type { AuthorityOutcome, StoredRecord, SubmitContext } from '../types.ts';
import { cancelOutcome, LOCAL_CODES, sendOutcome, type AadeAnswer } from './response.ts';

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
export function myDataUrl(service: 'SendInvoices' | 'CancelInvoice', ctx: Pick<SubmitContext, 'location' | 'authorityBaseUrl' | 'environment'>): string {
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
  let doc: Record<string, any>;
  try {
    doc = docParser.parse(xml) as Record<string, any>;
  } catch {
    return undefined;
  }
  const inv = doc.InvoicesDoc?.invoice;
  const first = Array.isArray(inv) ? inv[0] : inv;
  const h = first?.invoiceHeader;
  const parts = [first?.issuer?.vatNumber, h?.issueDate, first?.issuer?.branch, h?.invoiceType, h?.series, h?.aa];
  if (parts.some((p) => typeof p !== 'string' || p === '')) return undefined;
  return createHash('sha1').update(parts.join('-'), 'utf8').digest('hex').toUpperCase();
}

/** Sends the record to AADE and reads its answer. */
export async function submitToAade(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  const call = callOf(record);
  if (call.op === 'none') {
    return { kind: 'rejected', code: LOCAL_CODES.notADocument, message: `nothing to send to AADE: ${call.why}`, response: { category: 'permanent', contentType: record.contentType } };
  }
  if (call.op === 'cancel') {
    // CancelInvoice takes the MARK (and, for a caller acting for the issuer, its AFM) in the query, and no body.
    const query = new URLSearchParams({ mark: call.mark, ...(call.entityVatNumber ? { entityVatNumber: call.entityVatNumber } : {}) });
    const url = `${myDataUrl('CancelInvoice', ctx)}?${query.toString()}`;
    return cancelOutcome(await post(url, '', ctx), call.mark);
  }
  return sendOutcome(await post(myDataUrl('SendInvoices', ctx), call.body, ctx), { uid: uidOfInvoicesDoc(call.body) });
}
