import { describe, expect, it } from 'vitest';
import { TransportError } from '../types.ts';
import { documentoCommerciale as dc } from './index.ts';
import { STUB_POLL_AFTER_SECONDS, stubOperationId } from './sandbox.ts';
import { TX_ID, draft, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';

const loc = location('it-dc');
const run = async (sandbox_outcome?: string) => {
  const { tx, record } = validatedBuild(dc, loc, draft({ metadata: sandbox_outcome ? { sandbox_outcome } : {} }));
  const rec = stored(record, tx);
  const sent = await dc.submit(rec, submitCtx(loc));
  const result = sent.kind === 'sent' ? await dc.poll!({ ...rec, upstreamId: sent.upstreamId ?? null }, submitCtx(loc)) : null;
  return { sent, result };
};

describe('it-dc sandbox stub: AdE\'s answers through the same reader', () => {
  it('accept: sent with the operation id, polled a second later, then success', async () => {
    const { sent, result } = await run();
    expect(sent).toMatchObject({ kind: 'sent', upstreamId: stubOperationId(TX_ID), pollAfterSeconds: STUB_POLL_AFTER_SECONDS, response: { sandbox: true } });
    expect(result).toMatchObject({ kind: 'accepted', upstreamId: stubOperationId(TX_ID), response: { Esito: 'AC', sandbox: true } });
  });

  it.each([
    ['reject:0100', { kind: 'rejected', code: '0100' }, null],
    ['reject:0403', { kind: 'rejected', code: '0403' }, null],
    ['error:0429', { kind: 'retry_later', code: '0429' }, null],
    ['error:0500', { kind: 'retry_later', code: '0500' }, null],
    ['reject:0200', { kind: 'sent' }, { kind: 'rejected', code: '0200', response: { ade_errors: [{ codice: '00308' }] } }],
    ['reject:00307', { kind: 'sent' }, { kind: 'rejected', code: '0200', response: { ade_errors: [{ codice: '00307' }] } }],
    ['reject:00306', { kind: 'sent' }, { kind: 'duplicate' }],
  ])('%s', async (outcome, sent, result) => {
    const r = await run(outcome);
    expect(r.sent).toMatchObject(sent);
    if (result === null) expect(r.result).toBeNull();
    else expect(r.result).toMatchObject(result);
  });

  it('timeout: a transport fault', async () => {
    await expect(run('timeout')).rejects.toBeInstanceOf(TransportError);
  });

  it('the spec\'s codes: 0100, 0200, 0403 not retried; 0429, 0500 retried', () => {
    expect(Object.fromEntries(Object.entries(dc.codes).map(([k, v]) => [k, v.retriable]))).toEqual({
      '0100': false, '0200': false, '0403': false, '0429': true, '0500': true,
    });
  });
});
