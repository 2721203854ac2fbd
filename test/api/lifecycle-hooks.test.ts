import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { badRequest } from '../../src/core/errors.ts';
import { getSystem } from '../../src/countries/registry.ts';
import type { AuthorityOutcome, FiscalSystem, InboundMessage } from '../../src/countries/types.ts';
import { POLL_JOB } from '../../src/services/transaction-view.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, saleBody, saleMetadata } from '../support/transactions.ts';

/*
 * The plug-in lifecycle hooks the next countries need, driven through the core with
 * wrapped systems (a toy SDI channel here; the real one is tested in
 * sdi-notifications.test.ts; DC is still a placeholder: the Italy issue gives it real polling):
 * - `inbound`: an authority's later message, POST /v1/inbound/<channel>, matched to its
 *   record, moving the transaction as the status machine lets the authority;
 * - `poll`: a record sent without a verdict is asked about by a job of its own.
 */

const SECRET = 'sdi-inbound-secret-for-tests';
const clock = new ManualClock('2026-11-20T10:00:00.000Z');

/** A tiny notification the wrapped channel reads: `<Notifica tipo="RC|NS|MC|NE" file="…" id="…"/>`. */
const notice = (tipo: string, file: string, id = '4242424242') => `<Notifica tipo="${tipo}" file="${file}" id="${id}"/>`;
const STATUS: Record<string, string | undefined> = { RC: 'delivered', NS: 'rejected', MC: 'delivery_error', NE: undefined };

const sdi = getSystem('it-sdi');
const wrappedSdi: FiscalSystem = {
  ...sdi,
  // Sent, the verdict comes later as a notification.
  submit: async (record): Promise<AuthorityOutcome> => ({ kind: 'sent', reference: record.fiscalId ?? record.transactionId, response: { sent: true } }),
  inbound: {
    name: 'sdi',
    secretHeader: 'X-SDI-Secret',
    read({ body }): InboundMessage {
      const m = /^<Notifica tipo="([A-Z]{2})" file="([^"]+)" id="(\d+)"\/>$/.exec(body.trim());
      if (!m || !(m[1]! in STATUS)) throw badRequest('not an SDI notification');
      return {
        match: { upstreamId: m[3], fiscalId: m[2] }, upstreamId: m[3], status: STATUS[m[1]!],
        response: { notification: m[1], IdentificativoSdI: m[3] }, event: 'transaction.sdi_status_changed',
      };
    },
  },
};

/** Documento Commerciale, polled: each record's verdict as the test sets it (`undefined`: not ready yet). */
const verdicts = new Map<string, 'accept' | 'reject' | undefined>();
let polls = 0;
const dc = getSystem('it-dc');
const wrappedDc: FiscalSystem = {
  ...dc,
  submit: async (record): Promise<AuthorityOutcome> => ({ kind: 'sent', reference: record.transactionId, response: { queued: true }, pollAfterSeconds: 60 }),
  poll: async (record): Promise<AuthorityOutcome> => {
    polls += 1;
    const v = verdicts.get(record.transactionId);
    if (v === 'accept') return { kind: 'accepted', fiscalId: `DC-${record.transactionId.slice(0, 8)}`, response: { esito: 'OK' } };
    if (v === 'reject') return { kind: 'rejected', code: 'DC42', message: 'refused by the test authority', status: 'failed_permanent', response: { esito: 'KO' } };
    return { kind: 'sent', reference: record.transactionId, response: { pronto: false }, pollAfterSeconds: 60 };
  },
};

let t: TestApp;
let key: string;
let accountId: string;
beforeAll(async () => {
  t = await startTestApp({
    clock,
    config: { inboundSecrets: { sdi: SECRET } },
    systems: (k) => (k === 'it-sdi' ? wrappedSdi : k === 'it-dc' ? wrappedDc : getSystem(k)),
  });
  ({ key, accountId } = await t.signup());
});
afterAll(async () => {
  await t.close();
});

const post = (channel: string, body: string, headers: Record<string, string> = { 'x-sdi-secret': SECRET }) =>
  t.request({ method: 'POST', url: `/v1/inbound/${channel}`, payload: body, headers: { 'content-type': 'application/xml', ...headers } });

async function sentInvoice(): Promise<{ id: string; fiscal_id: string }> {
  const loc = await createLocation(t, key, 'it-sdi');
  const res = await createTx(t, key, saleBody(loc, { metadata: saleMetadata['it-sdi'] }));
  expect(res.statusCode).toBe(201);
  await t.worker.drain();
  const tx = await getTx(t, key, res.json().id);
  expect(tx.status).toBe('pending');
  return tx;
}

describe('inbound authority messages (POST /v1/inbound/{channel})', () => {
  it('authenticates by the channel secret, reads the message, and answers what it cannot match', async () => {
    const tx = await sentInvoice();
    expect((await post('sdi', notice('RC', tx.fiscal_id), {})).json()).toEqual({ error: 'missing or invalid X-SDI-Secret' });
    expect((await post('sdi', notice('RC', tx.fiscal_id), { 'x-sdi-secret': 'wrong-secret-of-some-length' })).statusCode).toBe(401);
    expect((await post('pec', notice('RC', tx.fiscal_id))).statusCode).toBe(404);
    const bad = await post('sdi', '<nonsense/>');
    expect([bad.statusCode, bad.json()]).toEqual([400, { error: 'not an SDI notification' }]);
    const unknown = await post('sdi', notice('RC', 'IT00000000000_zzzzz.xml', '1111111111'));
    expect([unknown.statusCode, unknown.json()]).toEqual([404, { error: 'transaction not found' }]);
    // Nothing changed by any of these.
    expect((await getTx(t, key, tx.id)).status).toBe('pending');
  });

  it('RC delivers the invoice (event, authority id, notification kept); the same again changes nothing; NS after it is a 409', async () => {
    const tx = await sentInvoice();
    const rc = await post('sdi', notice('RC', tx.fiscal_id, '5550001111'));
    expect([rc.statusCode, rc.json()]).toEqual([200, { transaction_id: tx.id, status: 'delivered', changed: true }]);
    const after = await getTx(t, key, tx.id);
    expect(after).toMatchObject({ status: 'delivered', fiscal_id_upstream: '5550001111' });
    expect(after.completed_at).not.toBeNull();
    expect(after.response_payload.notifications).toEqual([expect.objectContaining({ notification: 'RC', IdentificativoSdI: '5550001111' })]);
    const events = (await t.db.query<{ type: string; data: { transaction_id: string; status: string } }>(
      `SELECT type, data FROM events WHERE account_id = $1 AND data->>'transaction_id' = $2 ORDER BY created_at`, [accountId, tx.id])).rows;
    // The channel's event, and the fiscalization's (spec Events: "transaction fiscalized → fiscalization.completed").
    expect(events.map((e) => [e.type, e.data.status]).sort()).toEqual([['fiscalization.completed', 'completed'], ['transaction.sdi_status_changed', 'delivered']]);
    // Matched by the authority's id from now on; the same notice twice is a no-op.
    const again = await post('sdi', notice('RC', 'another-file-name.xml', '5550001111'));
    expect(again.statusCode).toBe(409); // the id names another file than the message: not this record's
    expect((await post('sdi', notice('RC', tx.fiscal_id, '5550001111'))).json()).toEqual({ transaction_id: tx.id, status: 'delivered', changed: false });
    // An informational message (no status) is kept, changes nothing.
    expect((await post('sdi', notice('NE', tx.fiscal_id, '5550001111'))).json()).toMatchObject({ status: 'delivered', changed: false });
    expect((await getTx(t, key, tx.id)).response_payload.notifications).toHaveLength(3);
    // A scarto for an invoice already delivered: the status machine does not allow it.
    const ns = await post('sdi', notice('NS', tx.fiscal_id, '5550001111'));
    expect([ns.statusCode, ns.json()]).toEqual([409, { error: 'the notification does not apply to a transaction in status delivered' }]);
    // A delivered invoice may be cancelled (DECISIONS "Statuses").
    expect((await t.request({ method: 'POST', url: `/v1/transactions/${tx.id}/cancel`, key, payload: {} })).statusCode).toBe(201);
  });

  it('NS rejects, MC marks a missed delivery; another account never sees the record', async () => {
    const rejected = await sentInvoice();
    expect((await post('sdi', notice('NS', rejected.fiscal_id, '7770001111'))).json()).toMatchObject({ status: 'rejected', changed: true });
    const missed = await sentInvoice();
    expect((await post('sdi', notice('MC', missed.fiscal_id, '7770002222'))).json()).toMatchObject({ status: 'delivery_error', changed: true });
    const other = await t.signup();
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${missed.id}`, key: other.key })).statusCode).toBe(404);
  });
});

describe('polled results (FiscalSystem.poll)', () => {
  async function sentReceipt(): Promise<string> {
    const loc = await createLocation(t, key, 'it-dc');
    const res = await createTx(t, key, saleBody(loc, { metadata: saleMetadata['it-dc'] ?? {} }));
    expect(res.statusCode).toBe(201);
    await t.worker.drain();
    return res.json().id;
  }
  const pollJob = async (id: string) => (await t.db.query<{ status: string; attempt: number; run_at: Date }>(
    'SELECT status, attempt, run_at FROM jobs WHERE kind = $1 AND transaction_id = $2', [POLL_JOB, id])).rows;

  it('a record sent without a verdict is polled by a job of its own until the authority answers', async () => {
    const id = await sentReceipt();
    expect(await getTx(t, key, id)).toMatchObject({ status: 'pending', response_payload: { awaiting_result: true } });
    const [job] = await pollJob(id);
    expect(job).toMatchObject({ status: 'pending', attempt: 0 });
    expect(job!.run_at.getTime()).toBe(clock.now().getTime() + 60_000);
    // Not due yet: nothing asked.
    const before = polls;
    await t.worker.drain();
    expect(polls).toBe(before);
    // Due, not ready: asked, still pending, asked again later (no failure recorded).
    clock.advance(60_000);
    await t.worker.drain();
    expect(polls).toBe(before + 1);
    expect(await getTx(t, key, id)).toMatchObject({ status: 'pending', error_message: null });
    expect((await pollJob(id))[0]).toMatchObject({ status: 'failed', attempt: 1 });
    // Ready and accepted: success, with the authority's id and the completion event.
    verdicts.set(id, 'accept');
    clock.advance(60_000);
    await t.worker.drain();
    expect(await getTx(t, key, id)).toMatchObject({ status: 'success', fiscal_id: `DC-${id.slice(0, 8)}` });
    expect((await pollJob(id))[0]).toMatchObject({ status: 'completed', attempt: 2 });
    const completed = (await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE type = 'fiscalization.completed' AND data->>'transaction_id' = $1`, [id])).rows[0]!.n;
    expect(completed).toBe(1);
  });

  it('a polled rejection fails the record as a submission would', async () => {
    const id = await sentReceipt();
    verdicts.set(id, 'reject');
    clock.advance(60_000);
    await t.worker.drain();
    const tx = await getTx(t, key, id);
    expect(tx).toMatchObject({ status: 'failed_permanent', response_payload: { submit_error: { error_code: 'DC42' } } });
    expect((await pollJob(id))[0]).toMatchObject({ status: 'dead' });
  });
});
