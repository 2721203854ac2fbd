import { describe, expect, it } from 'vitest';
import { alertTriggered, failureRate, toBatchResult } from './result.ts';
import { emptyTally } from './types.ts';

describe('batch result', () => {
  it('failure rate: rejected and undelivered records over all records; 0 when there were none', () => {
    expect(failureRate({ accepted: 0, rejected: 0, failed: 0 })).toBe(0);
    expect(failureRate({ accepted: 8, rejected: 1, failed: 1 })).toBe(0.2);
    expect(failureRate({ accepted: 0, rejected: 0, failed: 3 })).toBe(1);
  });

  it('the alert fires strictly above the threshold', () => {
    expect(alertTriggered(0.2, 0.2)).toBe(false);
    expect(alertTriggered(0.21, 0.2)).toBe(true);
    expect(alertTriggered(0, 0)).toBe(false);
  });

  it('assembles the spec fields, errors_count and registration numbers', () => {
    const tally = { ...emptyTally(), batches_created: 2, batches_retried: 1, accepted: 3, rejected: 1, failed: 1 };
    tally.errors.push({ code: 'timeout', message: 'no answer', issuer_tax_id: 'B12345674', kind: 'anulacion', records: 1 });
    tally.requests.push(
      { issuer_tax_id: 'B12345674', kind: 'alta', year: 2026, records: 4, registration_number: '2026-1', answer: 'Parcialmente correcto' },
      { issuer_tax_id: 'B12345674', kind: 'anulacion', year: 2026, records: 1, registration_number: null, answer: null },
    );
    expect(toBatchResult('spain/lroe', 'run-1', tally, { durationMs: 12.6, threshold: 0.2, status: 'completed' })).toEqual({
      processor: 'spain/lroe', batches_created: 2, batches_retried: 1, accepted: 3, rejected: 1, failed: 1, errors_count: 1,
      duration_ms: 13, failure_rate: 0.4, alert_triggered: true, run_id: 'run-1', status: 'completed',
      registration_numbers: ['2026-1'], errors: tally.errors,
    });
  });
});
