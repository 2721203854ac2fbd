import type { StatusContribution } from '../../core/status.ts';
import type { OfflineFallback } from '../types.ts';

/**
 * Greece's offline fallback (spec "States and transitions": "Greece create, timeout or
 * outage → `offline_pending`, receipt carries offline label; background retry (default
 * 7-day window)"; "`offline_pending` → grace window expires → `failed_offline_grace_expired`,
 * webhook for triage"; a late success fires `transaction.late_authority_confirmed`).
 */
export const OFFLINE_PENDING = 'offline_pending';
export const GRACE_EXPIRED = 'failed_offline_grace_expired';

export const MYDATA_STATUSES: StatusContribution = {
  statuses: [
    // Still open: retried until the window closes; it keeps its status while a retry runs,
    // because its receipt already says "transmitted later". Cancellable (docs/decisions.md
    // "Greece: cancellation": no MARK yet, so a reversing document is issued), but it stays
    // `offline_pending` and is still sent: AADE must hold what the reversal reverses. The
    // reversal waits for it (index.ts `cancellationAwaitsOriginal`, offline with it meanwhile)
    // and is sent once it has its MARK; it becomes `cancelled` when the reversal is accepted.
    // `cancelledOnceAccepted` stays as the guard of the other order (a reversal issued before
    // the wait existed, accepted first).
    { name: OFFLINE_PENDING, open: true, keptWhileSubmitting: true, cancellable: true, cancelledOnceAccepted: true },
    // Final: never reached AADE within the window (refused: a cancellation in it did not cancel).
    { name: GRACE_EXPIRED, refused: true },
  ],
  transitions: [
    { by: 'submission', from: ['pending', 'processing', 'failed', OFFLINE_PENDING], to: [OFFLINE_PENDING, GRACE_EXPIRED] },
    { by: 'submission', from: [OFFLINE_PENDING], to: ['success', 'processing', 'pending', 'failed', 'failed_permanent'] },
  ],
};

export const MYDATA_OFFLINE: OfflineFallback = {
  status: OFFLINE_PENDING,
  expiredStatus: GRACE_EXPIRED,
  lateEvent: 'transaction.late_authority_confirmed',
  expiredEvent: 'transaction.failed_offline_grace_expired',
  // The receipt label Greece requires for a receipt issued while the authority was unreachable.
  label: {
    key: 'late_transmission_label', placement: 'footer_top', mandatory: true, kind: 'text',
    // Our wording: the legally mandated text is to be confirmed in the Greece issue (not in FORMATS.md).
    value: 'Εκδόθηκε χωρίς σύνδεση με την ΑΑΔΕ / Issued while the tax authority was unreachable: transmitted later',
  },
};
