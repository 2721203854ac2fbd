import type { StatusContribution } from '../../core/status.ts';

/**
 * SDI's own statuses (spec "Transaction statuses": "Italy SDI adds `delivered`,
 * `rejected`, `delivery_error`"): an invoice sent to SdI stays `pending` until SdI's
 * notification says what became of it: RC (ricevuta di consegna) → `delivered`, NS
 * (notifica di scarto) → `rejected`, MC (mancata consegna) → `delivery_error`.
 *
 * - `delivery_error` is an issued invoice like `delivered` (FORMATS §4.4: after an MC the
 *   invoice is valid and available in the recipient's reserved area): accepted (its
 *   completion time is set, a credit note in it cancels its original) and cancellable
 *   (by a credit note), and a later RC for it (SdI kept trying: a PA file) delivers it.
 * - A notification is about a file SdI holds, whatever our side made of the attempt that
 *   sent it: it applies while the transaction is `processing` (the attempt's answer not
 *   yet stored), `failed` (the answer lost, a retry due) or `failed_permanent` (the
 *   retries ran out although SdI had the file), not only `pending`. The status settles,
 *   so the retry due finds nothing open to send (jobs/tasks/submit.ts).
 */
export const SDI_STATUSES: StatusContribution = {
  statuses: [
    { name: 'delivered', cancellable: true, accepted: true },
    // Final, not accepted: a credit note SdI rejected did not cancel its original (core/status.ts `refused`).
    { name: 'rejected', refused: true },
    { name: 'delivery_error', cancellable: true, accepted: true },
  ],
  transitions: [
    { by: 'authority', from: ['pending', 'processing', 'failed', 'failed_permanent'], to: ['delivered', 'rejected', 'delivery_error'] },
    // An RC after an MC: SdI delivered the file after all.
    { by: 'authority', from: ['delivery_error'], to: ['delivered'] },
    // An answer that carries the outcome at once (the sandbox stub, a synchronous scarto).
    { by: 'submission', from: ['pending', 'processing', 'failed'], to: ['delivered', 'rejected'] },
  ],
};
