import type { StatusContribution } from '../../core/status.ts';

/**
 * SDI's own statuses (spec "Transaction statuses": "Italy SDI adds `delivered`,
 * `rejected`, `delivery_error`"): an invoice sent to SdI stays `pending` until SdI's
 * notification says what became of it: RC (ricevuta di consegna) → `delivered`, NS
 * (notifica di scarto) → `rejected`, MC (mancata consegna, the invoice is still valid)
 * → `delivery_error`. A delivered invoice may be cancelled (by a TD04 credit note).
 */
export const SDI_STATUSES: StatusContribution = {
  statuses: [
    { name: 'delivered', cancellable: true, accepted: true },
    { name: 'rejected' },
    { name: 'delivery_error' },
  ],
  transitions: [
    { by: 'authority', from: ['pending'], to: ['delivered', 'rejected', 'delivery_error'] },
    // An answer that carries the outcome at once (the sandbox stub, a synchronous scarto).
    { by: 'submission', from: ['pending', 'processing', 'failed'], to: ['delivered', 'rejected'] },
  ],
};
