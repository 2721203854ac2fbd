import { describe, expect, it } from 'vitest';
import type { AuthorityCode } from '../countries/types.ts';
import { verdictOf } from './verdict.ts';

const codes: Record<string, AuthorityCode> = { R1: { message: 'try again', category: 'network', retriable: true } };

describe('batch verdicts', () => {
  it('accepted and duplicate are a success', () => {
    expect(verdictOf({ kind: 'accepted', fiscalId: 'TBAI-1', response: {} }, codes)).toMatchObject({ kind: 'success', outcome: { fiscalId: 'TBAI-1' } });
    expect(verdictOf({ kind: 'duplicate', response: {} }, codes).kind).toBe('success');
  });

  it('a rejection fails the record, unless its code is retriable', () => {
    expect(verdictOf({ kind: 'rejected', code: 'B4_2000004', message: 'no existe', response: { a: 1 } }, codes))
      .toEqual({ kind: 'rejected', code: 'B4_2000004', message: 'no existe', response: { a: 1 } });
    expect(verdictOf({ kind: 'rejected', code: 'R1', message: 'busy', response: {} }, codes)).toEqual({ kind: 'retry', code: 'R1', message: 'busy' });
  });

  it('retry_later (and an unexpected deferred answer) wait for the next run', () => {
    expect(verdictOf({ kind: 'retry_later', code: 'B4_1000004', message: 'Error técnico', response: {} }, codes))
      .toEqual({ kind: 'retry', code: 'B4_1000004', message: 'Error técnico' });
    expect(verdictOf({ kind: 'sent', reference: 'x', response: {} }, codes).kind).toBe('retry');
  });
});
