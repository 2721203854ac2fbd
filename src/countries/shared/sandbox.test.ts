import { describe, it, expect } from 'vitest';
import { TransportError } from '../types.ts';
import {
  SANDBOX_OUTCOME_INVALID,
  derivedAlnum,
  derivedDigits,
  derivedHex,
  parseSandboxOutcome,
  readSandboxOutcome,
  runSandbox,
  runSandboxMany,
  stubOnlySubmit,
  type SandboxSpec,
} from './sandbox.ts';
import { expect400 } from './test-helpers.ts';
import { draft, location, stored, submitCtx } from './test-fixtures.ts';

describe('sandbox_outcome', () => {
  it.each([
    ['accept', { kind: 'accept' }],
    ['timeout', { kind: 'timeout' }],
    ['reject:3000', { kind: 'reject', code: '3000' }],
    ['error:0500', { kind: 'error', code: '0500' }],
    [' reject:B4_2000003 ', { kind: 'reject', code: 'B4_2000003' }],
  ])('parses %j', (value, parsed) => expect(parseSandboxOutcome(value)).toEqual(parsed));

  it.each([['reject'], ['reject:'], ['error: 1'], ['ACCEPT'], ['fail:1'], ['accept:1']])('refuses %j', (value) => {
    expect(parseSandboxOutcome(value)).toBeNull();
    expect400(() => readSandboxOutcome({ sandbox_outcome: value }), SANDBOX_OUTCOME_INVALID);
  });

  it('must be a string when given', () => {
    expect(readSandboxOutcome({})).toBeUndefined();
    expect400(() => readSandboxOutcome({ sandbox_outcome: 1 }), SANDBOX_OUTCOME_INVALID);
    expect(SANDBOX_OUTCOME_INVALID).toBe('metadata.sandbox_outcome must be accept, reject:<code>, timeout or error:<code>');
  });
});

describe('derived ids', () => {
  it('are deterministic, shaped and label-dependent', () => {
    expect(derivedDigits('t1', 'x', 15)).toMatch(/^[1-9]\d{14}$/);
    expect(derivedDigits('t1', 'x', 15)).toBe(derivedDigits('t1', 'x', 15));
    expect(derivedDigits('t1', 'x', 15)).not.toBe(derivedDigits('t2', 'x', 15));
    expect(derivedAlnum('t1', 'x', 16)).toMatch(/^[A-Z0-9]{16}$/);
    expect(derivedHex('t1', 'x', 40)).toMatch(/^[0-9A-F]{40}$/);
    expect(derivedHex('t1', 'x', 40)).not.toBe(derivedHex('t1', 'y', 40));
    expect(derivedDigits('t1', 'x', 70)).toMatch(/^\d{70}$/); // longer than one digest
  });
});

describe('runSandbox', () => {
  const spec: SandboxSpec = {
    system: 'es-sii',
    authority: 'AEAT',
    codes: {
      '1100': { message: 'Bad field.', category: 'validation', retriable: false },
      '3000': { message: 'Duplicate.', category: 'submission', retriable: false, duplicate: true },
    },
    accept: () => ({ fiscalId: 'F', response: { ok: true } }),
  };
  const loc = location('es-sii');
  const rec = (outcome?: string) =>
    stored(
      { body: '{}', contentType: 'application/json', fiscalId: null, fingerprint: null, qrData: null, placeholder: true, renderHints: [] },
      draft({ metadata: outcome === undefined ? {} : { sandbox_outcome: outcome } }),
    );
  const run = (outcome?: string) => runSandbox(rec(outcome), submitCtx(loc), spec);

  it('accepts by default and on accept', () => {
    for (const o of [undefined, 'accept']) {
      const out = run(o);
      expect(out.kind).toBe('accepted');
      expect(out).toMatchObject({ fiscalId: 'F', response: { sandbox: true, outcome: 'accept', ok: true } });
    }
  });
  it('rejects with the code table message, or a generic one', () => {
    expect(run('reject:1100')).toMatchObject({ kind: 'rejected', code: '1100', message: 'Bad field.' });
    expect(run('reject:9999')).toMatchObject({
      kind: 'rejected',
      code: '9999',
      message: 'AEAT rejected the record with code 9999 (no description is known for this code)',
    });
  });
  it('answers a duplicate code as duplicate (the authority holds the record)', () => {
    expect(run('reject:3000')).toMatchObject({ kind: 'duplicate', fiscalId: 'F' });
  });
  it('a correction rehearsing a duplicate code is refused: the authority keeps the document uncorrected', () => {
    const correction = { ...rec('reject:3000'), correction: true };
    expect(runSandbox(correction, submitCtx(loc), spec)).toMatchObject({ kind: 'rejected', code: '3000', message: 'Duplicate.', response: { outcome: 'reject', code: '3000' } });
  });
  it('error:<code> is retry_later', () => {
    expect(run('error:0500')).toMatchObject({ kind: 'retry_later', code: '0500' });
  });
  it('timeout throws a TransportError', () => {
    expect(() => run('timeout')).toThrow(TransportError);
    try {
      run('timeout');
    } catch (e) {
      expect((e as TransportError).code).toBe('timeout');
    }
  });
  it('runSandboxMany: each record answered as alone, in order; a rehearsed timeout is that record\'s own retriable failure', () => {
    const outcomes = ['accept', 'reject:1100', 'timeout', 'error:0500', undefined];
    const single = outcomes.filter((o) => o !== 'timeout').map((o) => run(o));
    const many = runSandboxMany(outcomes.map((o) => rec(o)), submitCtx(loc), spec);
    expect(many.kind).toBe('records');
    if (many.kind !== 'records') return;
    expect(many.outcomes.map((o) => o.kind)).toEqual(['accepted', 'rejected', 'retry_later', 'retry_later', 'accepted']);
    expect(many.outcomes.filter((_, i) => i !== 2)).toEqual(single);
    expect(many.outcomes[2]).toMatchObject({ kind: 'retry_later', code: 'timeout', message: expect.stringContaining('did not answer in time') });
  });
  it('stubOnlySubmit: stub answers; authority mode is not implemented yet', async () => {
    const submit = stubOnlySubmit(spec);
    await expect(submit(rec(), submitCtx(loc))).resolves.toMatchObject({ kind: 'accepted' });
    await expect(submit(rec(), submitCtx(loc, 'authority'))).rejects.toMatchObject({ name: 'TransportError', code: 'not_implemented' });
  });
});
