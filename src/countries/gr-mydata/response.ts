/**
 * AADE's answers to SendInvoices and CancelInvoice (FORMATS.md §6, response-v1.0.12.xsd):
 * a `ResponseDoc` with one `response` per invoice: `index`, then either the MARK and its
 * companions (`invoiceUid`, `invoiceMark`, `qrUrl`, `cancellationMark`,
 * `authenticationCode`) or `errors/error{message, code}`, then `statusCode` (Success,
 * ValidationError, TechnicalError, XMLSyntaxError).
 *
 * Categories (spec, Errors: Greece `error.category`), kept in the answer we store
 * (`response_payload.authority.category`, with `authority_code` for a rejection) and, for
 * a failure, as the outcome's `error` (the core's `response_payload.error`, `errorOf`):
 * - `transient`: TechnicalError, HTTP 5xx/429, an unreadable answer: retried (Greece's
 *   offline window: the transaction is `offline_pending` meanwhile);
 * - `regulatory_reject`: ValidationError / XMLSyntaxError with AADE's code: not retried;
 * - `permanent`: the channel refuses us (HTTP 401/403: wrong user id or subscription key),
 *   or we have nothing AADE can read: not retried;
 * - `duplicate_as_success`: AADE already holds this document (see `duplicateOf`): the
 *   original MARK stands.
 */
import { XMLParser } from 'fast-xml-parser';
import type { AuthorityOutcome, OutcomeError, RenderHint } from '../types.ts';
import { qrUrlHint, textHint } from '../shared/render-hints.ts';
import { MYDATA_CODES } from './codes.ts';
import type { TransmittedInvoice } from './transmitted.ts';

export type MyDataCategory = 'transient' | 'regulatory_reject' | 'permanent' | 'duplicate_as_success';

/** An HTTP answer from AADE. */
export interface AadeAnswer {
  status: number;
  body: string;
  /** `Retry-After`, when AADE's gateway sends one (429). */
  retryAfter?: string | undefined;
}

export interface MyDataError {
  code: string;
  message: string;
}

/** One `response` of a ResponseDoc. */
export interface MyDataResponse {
  index?: string | undefined;
  invoiceUid?: string | undefined;
  invoiceMark?: string | undefined;
  qrUrl?: string | undefined;
  cancellationMark?: string | undefined;
  authenticationCode?: string | undefined;
  errors: MyDataError[];
  statusCode: string;
}

/** Our own codes, for answers that carry no AADE code (HTTP level, unreadable). */
export const LOCAL_CODES = {
  unauthorized: 'unauthorized',
  unavailable: 'unavailable',
  unreadable: 'unreadable_answer',
  notADocument: 'not_a_mydata_document',
  /** AADE holds the document (a duplicate answer without a MARK) but RequestTransmittedDocs did not list it (yet). */
  duplicateNotFound: 'duplicate_not_found',
} as const;

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  // MARKs are 15-digit longs and codes like "101" must stay strings.
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name === 'response' || name === 'error',
});

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

/** Reads a ResponseDoc; null when the body is not one (an HTML error page, JSON, nothing). */
export function parseResponseDoc(xml: string): MyDataResponse[] | null {
  if (!/<(\w+:)?ResponseDoc[\s>]/.test(xml)) return null;
  let doc: Record<string, any>;
  try {
    doc = parser.parse(xml) as Record<string, any>;
  } catch {
    return null;
  }
  const responses = doc.ResponseDoc?.response;
  if (!Array.isArray(responses) || responses.length === 0) return null;
  return responses.map((r: Record<string, any>) => ({
    index: str(r.index),
    invoiceUid: str(r.invoiceUid),
    invoiceMark: str(r.invoiceMark),
    qrUrl: str(r.qrUrl),
    cancellationMark: str(r.cancellationMark),
    authenticationCode: str(r.authenticationCode),
    errors: ((r.errors?.error ?? []) as Record<string, unknown>[]).map((e) => ({ code: str(e.code) ?? '', message: str(e.message) ?? '' })),
    statusCode: str(r.statusCode) ?? '',
  }));
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const el = (name: string, v: string | undefined) => (v === undefined ? '' : `<${name}>${esc(v)}</${name}>`);

/** A ResponseDoc as AADE writes it (the sandbox answers with one). */
export function responseDocXml(responses: readonly MyDataResponse[]): string {
  const body = responses
    .map((r) => {
      const inner = r.errors.length > 0
        ? `<errors>${r.errors.map((e) => `<error>${el('message', e.message)}${el('code', e.code)}</error>`).join('')}</errors>`
        : el('invoiceUid', r.invoiceUid) + el('invoiceMark', r.invoiceMark) + el('qrUrl', r.qrUrl) +
          el('cancellationMark', r.cancellationMark) + el('authenticationCode', r.authenticationCode);
      return `<response>${el('index', r.index)}${inner}${el('statusCode', r.statusCode)}</response>`;
    })
    .join('');
  return `<?xml version="1.0" encoding="utf-8"?>\n<ResponseDoc xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">${body}</ResponseDoc>`;
}

/**
 * AADE's "already sent" answer, and the original MARK it names. Two forms are known:
 * - 233 "This UID has already been sent" (the ERP channel; codes.ts marks it `duplicate`);
 * - 228 "{Field} is invalid" naming the UID: "The UID: <UID> is invalid . It has already
 *   been sent for another invoice (MARK:<MARK> , AUTHENTICATION_CODE:<code>)" (the provider
 *   channel, observed in production [secondary: fiskaltrust/middleware PR #742]). 228 also
 *   covers a wrong invoice type or a malformed UID: those stay rejections.
 * The MARK, UID and authentication code are read from the message when it gives them.
 */
export function duplicateOf(errors: readonly MyDataError[]): { code: string; mark?: string; uid?: string; authenticationCode?: string } | null {
  for (const e of errors) {
    const known = MYDATA_CODES[e.code]?.duplicate === true;
    const uid228 = e.code === '228' && /\bUID\b/i.test(e.message) && /already been sent/i.test(e.message);
    if (!known && !uid228) continue;
    return {
      code: e.code,
      mark: /MARK\s*:\s*(\d+)/i.exec(e.message)?.[1],
      uid: /UID\s*:?\s*([0-9A-F]{40})\b/i.exec(e.message)?.[1]?.toUpperCase(),
      authenticationCode: /AUTHENTICATION_CODE\s*:\s*([0-9A-Za-z]+)/i.exec(e.message)?.[1],
    };
  }
  return null;
}

/** The receipt items of an accepted document (spec, Greek render_hints). */
export function myDataHints(r: { mark?: string | undefined; uid?: string | undefined; authenticationCode?: string | undefined; qrUrl?: string | undefined }): RenderHint[] {
  const hints: RenderHint[] = [];
  if (r.mark) hints.push(textHint('mark', 'footer_bottom', r.mark));
  if (r.uid) hints.push(textHint('uid', 'footer_bottom', r.uid));
  if (r.authenticationCode) hints.push(textHint('auth_code', 'footer_bottom', r.authenticationCode));
  if (r.qrUrl) hints.push(qrUrlHint('qr', 'footer_right', r.qrUrl));
  return hints;
}

/**
 * The spec's `error` of a failed transaction (Errors, Greece: "`error.category`: transient,
 * regulatory_reject (with `error.authority_code`), permanent, duplicate_as_success"): the
 * core writes it as `response_payload.error`. Only a rejection names AADE's code.
 */
export const errorOf = (category: Exclude<MyDataCategory, 'duplicate_as_success'>, authorityCode?: string): OutcomeError =>
  category === 'regulatory_reject' && authorityCode !== undefined ? { category, authority_code: authorityCode } : { category };

const messageOf = (e: MyDataError) => MYDATA_CODES[e.code]?.message ?? (e.message || `AADE rejected the document with code ${e.code}`);

/** HTTP-level answers (no ResponseDoc): the gateway's refusals and outages. */
function httpOutcome(a: AadeAnswer, what: string): AuthorityOutcome {
  const response = { http_status: a.status, body: a.body.slice(0, 500) };
  if (a.status === 401 || a.status === 403) {
    return {
      kind: 'rejected', code: LOCAL_CODES.unauthorized,
      message: `AADE refused the credentials (HTTP ${a.status}): check country_config.aade_user_id and subscription_key`,
      response: { ...response, category: 'permanent' satisfies MyDataCategory },
      error: errorOf('permanent'),
    };
  }
  const retryAfter = a.retryAfter !== undefined && /^\d+$/.test(a.retryAfter) ? Number(a.retryAfter) : undefined;
  return {
    kind: 'retry_later',
    code: a.status >= 500 || a.status === 429 ? LOCAL_CODES.unavailable : LOCAL_CODES.unreadable,
    message: a.status >= 500 || a.status === 429 ? `AADE is unavailable (HTTP ${a.status})` : `AADE's answer to ${what} is not a ResponseDoc (HTTP ${a.status})`,
    response: { ...response, category: 'transient' satisfies MyDataCategory },
    error: errorOf('transient'),
    retryAfterSeconds: retryAfter,
  };
}

/**
 * The outcome of a SendInvoices call for one document (the record sends one invoice).
 * `uid`: the UID we computed for the document (FiscalRecord.fingerprint), when known: a
 * duplicate answer naming another UID is not about this document and stays a rejection.
 */
export function sendOutcome(a: AadeAnswer, expected: { uid?: string | undefined } = {}): AuthorityOutcome {
  const responses = parseResponseDoc(a.body);
  if (responses === null) return httpOutcome(a, 'SendInvoices');
  const r = responses[0]!;
  const answer = { statusCode: r.statusCode, index: r.index, invoiceUid: r.invoiceUid, invoiceMark: r.invoiceMark, qrUrl: r.qrUrl, authenticationCode: r.authenticationCode, errors: r.errors };

  if (r.statusCode === 'Success' && r.invoiceMark) {
    // The schema gives a MARK or errors, never both; were AADE to add remarks to an
    // accepted document (quarantine), the document is registered: success, with warnings.
    const warnings = r.errors.map((e) => e.code).filter(Boolean);
    return {
      kind: 'accepted',
      upstreamId: r.invoiceMark,
      response: { ...answer, category: 'success' },
      renderHints: myDataHints({ mark: r.invoiceMark, uid: r.invoiceUid, authenticationCode: r.authenticationCode, qrUrl: r.qrUrl }),
      ...(warnings.length > 0 ? { warnings } : {}),
    };
  }
  const dup = duplicateOf(r.errors);
  const sameDocument = dup !== null && (dup.uid === undefined || expected.uid === undefined || dup.uid === expected.uid.toUpperCase());
  if (dup !== null && dup.mark !== undefined && sameDocument) {
    return {
      kind: 'duplicate',
      upstreamId: dup.mark,
      response: { ...answer, category: 'duplicate_as_success' satisfies MyDataCategory, authority_code: dup.code, invoiceMark: dup.mark, invoiceUid: dup.uid ?? expected.uid },
      renderHints: myDataHints({ mark: dup.mark, uid: dup.uid ?? expected.uid, authenticationCode: dup.authenticationCode }),
    };
  }
  if (r.statusCode === 'TechnicalError') {
    const e = r.errors[0];
    return {
      kind: 'retry_later', code: e?.code || 'TechnicalError', message: e ? messageOf(e) : 'AADE reported a technical error',
      response: { ...answer, category: 'transient' satisfies MyDataCategory },
      error: errorOf('transient'),
    };
  }
  const e = r.errors[0] ?? { code: r.statusCode || 'unknown', message: `AADE answered ${r.statusCode || 'without a status'} and no MARK` };
  return {
    kind: 'rejected', code: e.code, message: messageOf(e),
    response: { ...answer, category: 'regulatory_reject' satisfies MyDataCategory, authority_code: e.code },
    error: errorOf('regulatory_reject', e.code),
  };
}

/**
 * The outcome of a CancelInvoice call: the cancellation's own MARK (`cancellationMark`),
 * its `fiscal_id_upstream` and the `mark` item of its receipt (the spec's Greek `mark`: the
 * MARK AADE gave this transaction; the receipt names the cancelled document's MARK beside
 * it, receipt.ts). CancelInvoice answers no UID, authentication code or QR URL: a
 * cancellation issues no document.
 */
export function cancelOutcome(a: AadeAnswer, mark: string): AuthorityOutcome {
  const responses = parseResponseDoc(a.body);
  if (responses === null) return httpOutcome(a, 'CancelInvoice');
  const r = responses[0]!;
  const answer = { statusCode: r.statusCode, cancelledMark: mark, cancellationMark: r.cancellationMark, errors: r.errors };
  if (r.statusCode === 'Success') {
    return { kind: 'accepted', upstreamId: r.cancellationMark, response: { ...answer, category: 'success' }, renderHints: myDataHints({ mark: r.cancellationMark }) };
  }
  // 251: already cancelled: AADE holds the cancellation we asked for (its MARK is not in
  // the answer: the client reads it from AADE's book, `alreadyCancelledOutcome`).
  const already = r.errors.find((e) => e.code === '251');
  if (already) {
    return { kind: 'duplicate', response: { ...answer, category: 'duplicate_as_success' satisfies MyDataCategory, authority_code: '251' } };
  }
  if (r.statusCode === 'TechnicalError') {
    const e = r.errors[0];
    return { kind: 'retry_later', code: e?.code || 'TechnicalError', message: e ? messageOf(e) : 'AADE reported a technical error', response: { ...answer, category: 'transient' }, error: errorOf('transient') };
  }
  const e = r.errors[0] ?? { code: r.statusCode || 'unknown', message: `AADE answered ${r.statusCode || 'without a status'}` };
  return { kind: 'rejected', code: e.code, message: messageOf(e), response: { ...answer, category: 'regulatory_reject', authority_code: e.code }, error: errorOf('regulatory_reject', e.code) };
}

/**
 * AADE's "already sent" answer about this document that names no MARK (233 in the ERP
 * wording, or a 228 without the MARK): the MARK has to be looked up (transmitted.ts).
 * Null for any other answer, for a duplicate that names its MARK (`sendOutcome` takes it),
 * for one naming another UID, and when we do not know the document's UID (nothing to
 * look for: `sendOutcome` keeps it a rejection).
 */
export function markLessDuplicate(a: AadeAnswer, expected: { uid?: string | undefined }): { code: string; message: string } | null {
  if (expected.uid === undefined) return null;
  const responses = parseResponseDoc(a.body);
  const r = responses?.[0];
  if (r === undefined || (r.statusCode === 'Success' && r.invoiceMark)) return null;
  const dup = duplicateOf(r.errors);
  if (dup === null || dup.mark !== undefined) return null;
  if (dup.uid !== undefined && dup.uid !== expected.uid.toUpperCase()) return null;
  return { code: dup.code, message: r.errors.find((e) => e.code === dup.code)?.message ?? '' };
}

/** The lookup found the document: the original MARK stands (`duplicate_as_success`). */
export function foundDuplicateOutcome(dup: { code: string; message: string }, uid: string, inv: TransmittedInvoice & { mark: string }, pages: number): AuthorityOutcome {
  return {
    kind: 'duplicate',
    upstreamId: inv.mark,
    response: {
      statusCode: 'ValidationError', errors: [dup],
      category: 'duplicate_as_success' satisfies MyDataCategory, authority_code: dup.code,
      invoiceMark: inv.mark, invoiceUid: uid, authenticationCode: inv.authenticationCode, qrUrl: inv.qrCodeUrl,
      ...(inv.cancelledByMark ? { cancelledByMark: inv.cancelledByMark } : {}),
      lookup: { service: 'RequestTransmittedDocs', pages },
    },
    renderHints: myDataHints({ mark: inv.mark, uid, authenticationCode: inv.authenticationCode, qrUrl: inv.qrCodeUrl }),
  };
}

/**
 * The lookup did not find the document (not listed in the pages read, or the lookup itself
 * failed): AADE said it holds it, so this is not a rejection but a transient failure,
 * retried like an outage (Greece: `offline_pending` meanwhile).
 */
export function duplicateNotFoundOutcome(dup: { code: string; message: string }, why: string, pages: number): AuthorityOutcome {
  return {
    kind: 'retry_later',
    code: LOCAL_CODES.duplicateNotFound,
    message: `AADE already holds this document (code ${dup.code}) without naming its MARK, and RequestTransmittedDocs ${why}`,
    response: { statusCode: 'ValidationError', errors: [dup], category: 'transient' satisfies MyDataCategory, authority_code: dup.code, lookup: { service: 'RequestTransmittedDocs', pages, found: false } },
    error: errorOf('transient'),
  };
}

/** What a RequestTransmittedDocs lookup gave: the document's entry, or why none. */
export type TransmittedLookup =
  | { found: TransmittedInvoice & { mark: string }; pages: number }
  | { why: string; pages: number };

/**
 * A duplicate answer that names the original MARK (AADE's "already sent" message) carries
 * no QR URL, which the receipt must print (spec, Greek render_hints: `qr` mandatory), and
 * often no authentication code: the items come from AADE's book (RequestTransmittedDocs,
 * the stub's own book in the sandbox) and are added as the normal success path adds them.
 * The lookup is trusted only for the MARK the answer named. Not found (or another MARK):
 * the document is registered all the same (AADE named its MARK), so it stays
 * `duplicate_as_success`, without the items the lookup would have given, and
 * `response.lookup.found` says so (docs/decisions.md "Greece: a duplicate's receipt items (F10)").
 */
export function duplicateWithLookup(outcome: Extract<AuthorityOutcome, { kind: 'duplicate' }>, lookup: TransmittedLookup): AuthorityOutcome {
  const uid = typeof outcome.response.invoiceUid === 'string' ? outcome.response.invoiceUid : undefined;
  const hintValue = (key: string) => outcome.renderHints?.find((h) => h.key === key)?.value;
  if (!('found' in lookup) || lookup.found.mark !== outcome.upstreamId) {
    const why = 'found' in lookup ? `lists the UID under another MARK (${lookup.found.mark})` : lookup.why;
    return { ...outcome, response: { ...outcome.response, lookup: { service: 'RequestTransmittedDocs', pages: lookup.pages, found: false, why } } };
  }
  const inv = lookup.found;
  const authenticationCode = hintValue('auth_code') ?? inv.authenticationCode;
  return {
    ...outcome,
    response: {
      ...outcome.response,
      ...(authenticationCode !== undefined ? { authenticationCode } : {}),
      ...(inv.qrCodeUrl !== undefined ? { qrUrl: inv.qrCodeUrl } : {}),
      ...(inv.cancelledByMark ? { cancelledByMark: inv.cancelledByMark } : {}),
      lookup: { service: 'RequestTransmittedDocs', pages: lookup.pages },
    },
    renderHints: myDataHints({ mark: outcome.upstreamId, uid: uid ?? inv.uid, authenticationCode, qrUrl: inv.qrCodeUrl }),
  };
}

/** What a lookup of a cancelled document gave: its cancellation's MARK, or why none. */
export type CancellationLookup = { cancellationMark: string; pages: number } | { why: string; pages: number };

/**
 * AADE answered 251 ("already cancelled"): the document is cancelled, by our earlier call
 * whose answer was lost (a timeout, the usual case) or otherwise. The answer names no
 * cancellation MARK, which the cancellation's receipt prints and its `fiscal_id_upstream`
 * holds: it is read from AADE's book (RequestTransmittedDocs, the document's
 * `cancelledByMark`). Not found: still `duplicate_as_success` (AADE says the document is
 * cancelled), without the MARK, and `response.lookup.found: false` says why (as a
 * duplicate's missing receipt items, docs/decisions.md "Greece: a duplicate's receipt items").
 */
export function alreadyCancelledOutcome(outcome: Extract<AuthorityOutcome, { kind: 'duplicate' }>, lookup: CancellationLookup): AuthorityOutcome {
  if (!('cancellationMark' in lookup)) {
    return { ...outcome, response: { ...outcome.response, lookup: { service: 'RequestTransmittedDocs', pages: lookup.pages, found: false, why: lookup.why } } };
  }
  return {
    ...outcome,
    upstreamId: lookup.cancellationMark,
    response: { ...outcome.response, cancellationMark: lookup.cancellationMark, lookup: { service: 'RequestTransmittedDocs', pages: lookup.pages } },
    renderHints: myDataHints({ mark: lookup.cancellationMark }),
  };
}
