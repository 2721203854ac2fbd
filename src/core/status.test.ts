import { describe, expect, it } from 'vitest';
import { statuses } from '../countries/registry.ts';
import { CORE_STATUS_TABLE, StatusMachine } from './status.ts';

describe('the status machine (core table + every system)', () => {
  it("lists every status in the spec's order", () => {
    // spec "Transaction statuses": the shared list, then "Italy SDI adds …", "Greece adds …".
    expect(statuses.names).toEqual([
      'pending', 'processing', 'success', 'failed', 'failed_permanent', 'pending_lroe', 'pending_submission', 'pending_batch',
      'cancelled', 'delivered', 'rejected', 'delivery_error', 'offline_pending', 'failed_offline_grace_expired',
    ]);
  });

  it('groups: cancellable (DECISIONS "Statuses"), open to a submission, kept while submitting, in a batch', () => {
    // Greece's offline_pending too (docs/decisions.md "Greece: cancellation": a reversing document).
    expect([...statuses.cancellable].sort()).toEqual(['delivered', 'delivery_error', 'offline_pending', 'pending_batch', 'pending_lroe', 'pending_submission', 'success']);
    expect([...statuses.open].sort()).toEqual(['failed', 'offline_pending', 'pending', 'pending_submission', 'processing']);
    expect(statuses.keptWhileSubmitting).toEqual(['pending_submission', 'offline_pending']);
    expect(statuses.inBatch).toEqual(['pending_lroe']);
    expect(statuses.isAccepted('success')).toBe(true);
    expect(statuses.isAccepted('delivered')).toBe(true);
    expect(statuses.isAccepted('pending')).toBe(false);
  });

  it('says who may cause each transition, and from where', () => {
    expect([...statuses.sources('success', 'submission')].sort()).toEqual(['failed', 'offline_pending', 'pending', 'pending_submission', 'processing']);
    // Not offline_pending nor pending_submission: cancelled once their own submission is accepted (cancelledOnceAccepted).
    expect([...statuses.sources('cancelled', 'cancellation')].sort()).toEqual(['delivered', 'delivery_error', 'pending_batch', 'pending_lroe', 'success']);
    // pending_submission moves as pending does (asPending), and stays itself between retries.
    expect(statuses.allows('submission', 'pending_submission', 'pending_submission')).toBe(true);
    expect(statuses.allows('create', 'new', 'pending_submission')).toBe(true);
    expect(statuses.sources('pending_lroe', 'batch')).toEqual(['pending_batch']);
    // An SdI notification applies to a file SdI holds whatever our attempt made of it; an RC after an MC delivers.
    expect(statuses.sources('delivered', 'authority')).toEqual(['pending', 'processing', 'failed', 'failed_permanent', 'pending_submission', 'delivery_error']);
    expect(statuses.allows('create', 'new', 'pending_batch')).toBe(true);
    expect(statuses.allows('create', 'new', 'cancelled')).toBe(false);
    expect(statuses.allows('submission', 'cancelled', 'success')).toBe(false);
    expect(() => statuses.sources('cancelled', 'submission')).toThrow('no transition to cancelled by submission');
  });

  it('refused: final and not accepted (a cancellation in it did not cancel, the original may be cancelled again)', () => {
    expect(statuses.names.filter((n) => statuses.isRefused(n))).toEqual(['failed_permanent', 'rejected', 'failed_offline_grace_expired']);
    expect(statuses.names.filter((n) => statuses.isRefused(n) && (statuses.isAccepted(n) || statuses.open.includes(n)))).toEqual([]);
  });

  it('refuses a table that names an undeclared status, or declares one twice', () => {
    expect(() => new StatusMachine([CORE_STATUS_TABLE, { statuses: [], transitions: [{ by: 'batch', from: ['pending'], to: ['nowhere'] }] }]))
      .toThrow('undeclared status nowhere');
    expect(() => new StatusMachine([CORE_STATUS_TABLE, { statuses: [{ name: 'pending' }], transitions: [] }])).toThrow('declared twice');
  });
});
