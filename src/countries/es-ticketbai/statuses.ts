import type { StatusContribution } from '../../core/status.ts';

/**
 * TicketBAI's own status (spec "Transaction statuses", DECISIONS "Statuses"): a Bizkaia
 * record inside an LROE batch that was sent, awaiting Batuz's answer. The batch processor
 * claims `pending_batch` records into it, and settles them to `success` or `failed`, or
 * sends them back to wait for the next run.
 */
export const PENDING_LROE = 'pending_lroe';

export const TICKETBAI_STATUSES: StatusContribution = {
  // The spec lists it right after `failed_permanent`.
  statuses: [{ name: PENDING_LROE, cancellable: true, inBatch: true, listedAfter: 'failed_permanent' }],
  transitions: [
    { by: 'batch', from: ['pending_batch'], to: [PENDING_LROE] },
    { by: 'batch', from: [PENDING_LROE], to: ['success', 'failed_permanent', 'pending_batch'] },
  ],
};
