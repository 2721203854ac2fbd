/**
 * Stub AADE (test keys, `stub` mode). It answers what AADE would, as AADE's own
 * `ResponseDoc` XML (response.ts `responseDocXml`), read by the same parser as real
 * answers (response.ts `sendOutcome` / `cancelOutcome`): an accepted document gets its
 * MARK (`invoiceMark`, 15 digits here), `invoiceUid` (40 uppercase hex),
 * `authenticationCode` (32 hex) and `qrUrl`, which the receipt must print (spec, Greek
 * render_hints); a cancellation gets a `cancellationMark` (its receipt's `mark`). With
 * `metadata.sandbox_outcome` (a cancellation's: the cancel body's):
 *
 * - accept (default) → Success;
 * - reject:<code> → ValidationError with that code (`regulatory_reject`); reject:233 (or
 *   any code codes.ts marks `duplicate`) → AADE's "already sent" answer naming the
 *   original MARK: success with that MARK (`duplicate_as_success`), and the QR URL and
 *   authentication code from the stub's book, as the real client reads them from
 *   RequestTransmittedDocs; a cancellation's reject:251 ("already cancelled") is a success
 *   with the cancellation MARK an accept would give, as the real client reads it from AADE's book;
 * - error:<code> → TechnicalError with that code, error:5xx → that HTTP status: retried
 *   (Greece: `offline_pending` meanwhile);
 * - timeout → no answer (the shared stub's transport fault), which the stub answers as the
 *   real client answers one: `retry_later`, `error.category` `transient` → `offline_pending`.
 *
 * Everything is derived from the transaction id, so a retried job gets the same MARK.
 */
import { TransportError, type AuthorityOutcome, type StoredRecord, type SubmitContext } from '../types.ts';
import { derivedDigits, derivedHex, outcomeOf, runSandbox, type SandboxSpec } from '../shared/sandbox.ts';
import { MYDATA_CODES } from './codes.ts';
import { alreadyCancelledOutcome, cancelOutcome, duplicateWithLookup, responseDocXml, sendOutcome, type AadeAnswer, type MyDataResponse, type TransmittedLookup } from './response.ts';
import { callOf, transportFaultOutcome } from './client.ts';
import { uidOfDocument } from './uid.ts';

const QR_BASE = {
  test: 'https://mydataapidev.aade.gr/TimologioQR/QRInfo?q=',
  live: 'https://mydatapi.aade.gr/myDATA/TimologioQR/QRInfo?q=',
} as const;

/** The QR URL AADE returns: an opaque base64 token, URL-encoded. */
function qrUrl(seed: string, ctx: SubmitContext): string {
  const token = Buffer.from(derivedHex(seed, 'mydata-qr', 96), 'hex').toString('base64');
  return `${QR_BASE[ctx.environment]}${encodeURIComponent(token)}`;
}

const spec: SandboxSpec = {
  system: 'gr-mydata',
  authority: 'AADE',
  codes: MYDATA_CODES,
  accept: () => ({ response: {} }),
};

const stubMark = (record: StoredRecord) => derivedDigits(record.transactionId, 'mydata-mark', 15);
// The UID AADE computes from the document (uid.ts, FORMATS.md §6), so that what a sandbox
// receipt prints is what AADE would answer; derived from the id only for a body that is no
// InvoicesDoc (the stub is never asked for one).
const stubUid = (record: StoredRecord) => uidOfDocument(record.body) ?? derivedHex(record.transactionId, 'mydata-uid', 40);

/** A cancellation record that is the CancelInvoice call (not a reversing document sent with SendInvoices). */
const isCancelInvoice = (record: StoredRecord): boolean => record.kind === 'cancellation' && callOf(record).op !== 'send';

/** What the stub AADE answers over HTTP for this record. */
export function stubAnswer(record: StoredRecord, ctx: SubmitContext): AadeAnswer {
  const outcome = outcomeOf(record);
  // A CancelInvoice call; a cancellation that issued a reversing document is sent (and
  // answered) as the document it is (build.ts).
  const cancel = isCancelInvoice(record);
  const ok = (r: Omit<MyDataResponse, 'errors' | 'statusCode' | 'index'>): AadeAnswer => ({
    status: 200, body: responseDocXml([{ index: '1', ...r, errors: [], statusCode: 'Success' }]),
  });
  const failed = (statusCode: string, code: string, message: string): AadeAnswer => ({
    status: 200, body: responseDocXml([{ index: '1', errors: [{ code, message }], statusCode }]),
  });
  switch (outcome.kind) {
    case 'reject': {
      const known = MYDATA_CODES[outcome.code];
      if (known?.duplicate === true && !cancel) {
        // AADE's own wording names the UID and the MARK it registered first.
        return failed('ValidationError', outcome.code,
          `The UID: ${stubUid(record)} is invalid . It has already been sent for another invoice (MARK:${stubMark(record)} , AUTHENTICATION_CODE:${derivedHex(record.transactionId, 'mydata-auth', 32)})`);
      }
      return failed('ValidationError', outcome.code, known?.message ?? `Validation error ${outcome.code} (sandbox)`);
    }
    case 'error':
      if (/^5\d\d$/.test(outcome.code)) return { status: Number(outcome.code), body: '<html><body>Service Unavailable</body></html>' };
      return failed('TechnicalError', outcome.code, MYDATA_CODES[outcome.code]?.message ?? `Technical error ${outcome.code} (sandbox)`);
    default:
      if (cancel) return ok({ cancellationMark: stubMark(record) });
      return ok({
        invoiceUid: stubUid(record),
        invoiceMark: stubMark(record),
        qrUrl: qrUrl(record.transactionId, ctx),
        authenticationCode: derivedHex(record.transactionId, 'mydata-auth', 32),
      });
  }
}

const sandboxMarked = (o: AuthorityOutcome): AuthorityOutcome => ({ ...o, response: { ...o.response, sandbox: true } }) as AuthorityOutcome;

/** The stub's own book, as RequestTransmittedDocs would list the document (the accept's MARK, UID, code and QR URL). */
function stubBook(record: StoredRecord, ctx: SubmitContext): TransmittedLookup {
  return {
    found: {
      mark: stubMark(record), uid: stubUid(record), qrCodeUrl: qrUrl(record.transactionId, ctx),
      authenticationCode: derivedHex(record.transactionId, 'mydata-auth', 32),
    },
    pages: 1,
  };
}

export async function myDataStubSubmit(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  if (outcomeOf(record).kind === 'timeout') {
    // A rehearsed timeout is the shared stub's transport fault, answered as the real
    // client answers one (client.ts `transportFaultOutcome`: `transient`).
    try {
      return sandboxMarked(await runSandbox(record, ctx, spec));
    } catch (err) {
      if (err instanceof TransportError) return sandboxMarked(transportFaultOutcome(err));
      throw err;
    }
  }
  const answer = stubAnswer(record, ctx);
  const call = callOf(record);
  if (isCancelInvoice(record)) {
    const outcome = cancelOutcome(answer, call.op === 'cancel' ? call.mark : (record.upstreamId ?? ''));
    // As the real client does: the MARK of a cancellation answered "already cancelled" (251)
    // comes from AADE's book: here the one an accept gives.
    if (outcome.kind === 'duplicate' && outcome.upstreamId === undefined) {
      return sandboxMarked(alreadyCancelledOutcome(outcome, { cancellationMark: stubMark(record), pages: 1 }));
    }
    return sandboxMarked(outcome);
  }
  const outcome = sendOutcome(answer);
  // As the real client does: a duplicate's QR URL (and code) come from AADE's book.
  if (outcome.kind === 'duplicate') return sandboxMarked(duplicateWithLookup(outcome, stubBook(record, ctx)));
  return sandboxMarked(outcome);
}
