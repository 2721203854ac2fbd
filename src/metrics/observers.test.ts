import { describe, expect, it } from 'vitest';
import { statusRecorder, type SubmissionObserver } from './observers.ts';
import { outcomeOf } from '../jobs/tasks/submit.ts';

function recording() {
  const changes: string[] = [];
  const observer: SubmissionObserver = { call() {}, outcome() {}, statusChanged: (system, status) => void changes.push(`${system}:${status}`) };
  return { observer, changes };
}

describe('statusRecorder', () => {
  it('counts a change once, even when the commit runs again (group rolled back, then alone)', () => {
    const { observer, changes } = recording();
    const note = statusRecorder(observer, 'es-sii');
    note({ id: 'a', status: 'success' });
    note({ id: 'a', status: 'success' });
    expect(changes).toEqual(['es-sii:success']);
  });
  it('counts nothing for a write that changed no row', () => {
    const { observer, changes } = recording();
    const note = statusRecorder(observer, 'es-sii');
    note(undefined);
    note(null);
    expect(changes).toEqual([]);
  });
  it('another transaction or status is another change', () => {
    const { observer, changes } = recording();
    const note = statusRecorder(observer, 'it-sdi');
    note({ id: 'a', status: 'failed' });
    note({ id: 'b', status: 'failed' });
    note({ id: 'a', status: 'pending' });
    expect(changes).toEqual(['it-sdi:failed', 'it-sdi:failed', 'it-sdi:pending']);
  });
});

describe('outcomeOf (the submit task)', () => {
  it('maps every authority answer, and a failure without one to error', () => {
    expect(outcomeOf({ kind: 'accepted' } as never)).toBe('accepted');
    expect(outcomeOf({ kind: 'duplicate' } as never)).toBe('duplicate');
    expect(outcomeOf({ kind: 'rejected', code: '4102', message: 'x' } as never)).toBe('rejected');
    expect(outcomeOf({ kind: 'retry_later', code: '0500', message: 'x' } as never)).toBe('retry');
    expect(outcomeOf({ kind: 'sent' } as never)).toBe('sent');
    expect(outcomeOf({ code: 'timeout' })).toBe('error');
  });
});
