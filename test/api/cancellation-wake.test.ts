import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { settleRecord } from '../../src/batch/settle.ts';
import { getSystem, statuses } from '../../src/countries/registry.ts';
import type { AuthorityOutcome, FiscalSystem } from '../../src/countries/types.ts';
import { transactionsRepo } from '../../src/store/repos/transactions-repo.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { createLocation, createTx, getTx, locationBody, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';

/*
 * A cancellation that waits for its original (`capabilities.cancellationAwaitsOriginal`,
 * jobs/tasks/submit.ts `awaitOriginal`) goes as soon as its original settles, whatever settles
 * it: a notification (services/inbound.ts) or a batch (batch/settle.ts), not only the original's
 * own submit job. Before,
 * only the submit job woke it; an original settled otherwise left its cancellation to its
 * next look, an hour later.
 *
 * The system: it-sdi, whose invoices are settled by SdI's notifications, given the capability
 * Greece declares (only its `capabilities` and `submit` wrapped: the file goes to "SdI", which
 * answers by notification). SdI itself never cancels an invoice it has not delivered (the
 * cancel route refuses a `pending` one), so the invoice is made `delivered` for the cancel
 * only, then `pending` again: the state a system with the capability reaches when a sale
 * still on its way is cancelled (Greece's `offline_pending`). Both stores.
 */

const SECRET = 'cancellation-wake-secret-for-tests';
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const sdi = getSystem('it-sdi');
/** Every record handed to `submit`, by transaction id. */
const submits: string[] = [];
const waitingSdi: FiscalSystem = {
  ...sdi,
  capabilities: { ...sdi.capabilities, cancellationAwaitsOriginal: { authority: 'SdI', error: { category: 'permanent' } } },
  submit: async (record): Promise<AuthorityOutcome> => {
    submits.push(record.transactionId);
    return { kind: 'sent', reference: record.fiscalId ?? record.transactionId, response: { sent: true } };
  },
};

const FIXTURES = new URL('../../src/countries/it-sdi/fixtures/notifications/', import.meta.url);
/** A fixture notification (unsigned) about the given file. */
const notice = (kind: 'RC' | 'NS', file: string, id: string): string =>
  fs.readFileSync(new URL(`${kind}.xml`, FIXTURES), 'utf8')
    .replace(/\s*<ds:Signature[\s\S]*<\/ds:Signature>/, '')
    .replaceAll(/<IdentificativoSdI>\d+<\/IdentificativoSdI>/g, `<IdentificativoSdI>${id}</IdentificativoSdI>`)
    .replace(/<NomeFile>[^<]+<\/NomeFile>/, `<NomeFile>${file}</NomeFile>`);
let nextId = 300_000_000 + (Date.now() % 100_000_000);

const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;
const PASSWORD = 'password-del-certificato';

let t: TestApp;
let key: string;
let location: string;
beforeAll(async () => {
  t = await startTestApp({ clock, config: { inboundSecrets: { sdi: SECRET } }, systems: (k) => (k === 'it-sdi' ? waitingSdi : getSystem(k)) });
  ({ key } = await t.signup());
  const certificateId = `cert-wake-${Date.now() % 100_000}`;
  const cert = generateCert({ subject: '/C=IT/serialNumber=TINIT-01234567897/CN=Trasmittente Test', days: 3650 });
  const up = await t.request({ method: 'POST', url: '/v1/certificates', key, ...uploadForm({ certificateId, password: PASSWORD, file: exportP12(cert, PASSWORD) }) });
  expect(up.statusCode, up.body).toBe(201);
  const body = locationBody('it-sdi') as { country_config: Record<string, unknown> };
  const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...body, country_config: { ...body.country_config, certificate_id: certificateId } } });
  expect(res.statusCode, res.body).toBe(201);
  location = res.json().id;
});
afterAll(async () => {
  await t?.close();
});

const post = (body: string) => t.request({ method: 'POST', url: '/v1/inbound/sdi', payload: body, headers: { 'content-type': 'application/xml', 'x-sdi-secret': SECRET } });
const setStatus = (id: string, status: string) => t.db.query('UPDATE transactions SET status = $2 WHERE id = $1', [id, status]);
const submitJob = async (id: string) =>
  (await t.db.query<{ status: string; attempt: number; run_at: Date }>(`SELECT status, attempt, run_at FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [id])).rows[0]!;

/**
 * An invoice sent to SdI (awaiting its notification) and its cancellation, which waited: its
 * attempt found the original unsettled, with no attempt of its own to come (a notification
 * will settle it), and looks again only after the longest wait.
 */
async function waitingCancellation(): Promise<{ original: { id: string; fiscal_id: string }; cancellation: { id: string } }> {
  const created = await createTx(t, key, saleBody(location, { metadata: saleMetadata['it-sdi'], customer_context: { codice_fiscale: 'RSSMRA85T10A562S' } }), AUTHORITY);
  expect(created.statusCode, created.body).toBe(201);
  await t.worker.drain();
  const original = await getTx(t, key, created.json().id);
  expect(original.status).toBe('pending');
  await setStatus(original.id, 'delivered');
  const res = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key, payload: { reason: 'reso' }, headers: AUTHORITY });
  expect(res.statusCode, res.body).toBe(201);
  await setStatus(original.id, 'pending');
  const cancellation = res.json() as { id: string };

  await t.worker.drain();
  expect(submits).not.toContain(cancellation.id);
  expect((await getTx(t, key, cancellation.id)).response_payload).toMatchObject({ awaiting_original: { transaction_id: original.id, status: 'pending' } });
  // The longest wait: nothing of the original's own is due to settle it.
  expect(await submitJob(cancellation.id)).toMatchObject({ status: 'pending', attempt: 0, run_at: new Date(clock.now().getTime() + 3_600_000) });
  return { original, cancellation };
}

describe('a waiting cancellation goes when its original is settled by a notification', () => {
  it('delivered (RC): the cancellation is due at once and sent by the next run, not an hour later', async () => {
    const { original, cancellation } = await waitingCancellation();
    clock.advance(2_000);
    const rc = await post(notice('RC', original.fiscal_id, String(++nextId)));
    expect([rc.statusCode, rc.json()]).toEqual([200, { transaction_id: original.id, status: 'delivered', changed: true }]);
    expect((await submitJob(cancellation.id)).run_at).toEqual(clock.now());

    await t.worker.drain();
    expect(submits.filter((id) => id === cancellation.id)).toHaveLength(1);
    const sent = await getTx(t, key, cancellation.id);
    expect(sent).toMatchObject({ status: 'pending', response_payload: { awaiting_notification: true } });
    expect(sent.response_payload.awaiting_original).toBeUndefined();
  });

  it('refused (NS): the cancellation ends at once, never sent (its original never reached the authority)', async () => {
    const { original, cancellation } = await waitingCancellation();
    clock.advance(2_000);
    const ns = await post(notice('NS', original.fiscal_id, String(++nextId)));
    expect([ns.statusCode, ns.json()]).toEqual([200, { transaction_id: original.id, status: 'rejected', changed: true }]);

    await t.worker.drain();
    expect(submits).not.toContain(cancellation.id);
    const ended = await getTx(t, key, cancellation.id);
    expect(ended.status).toBe('failed_permanent');
    expect(ended.response_payload.submit_error).toMatchObject({ error_code: 'original_never_accepted', raw_message: expect.stringContaining('never reached SdI (it ended rejected)') });
    expect(await submitJob(cancellation.id)).toMatchObject({ status: 'dead' });
  });
});

describe('a waiting cancellation goes when its original is settled by a batch', () => {
  it('a batch\'s verdict accepts the original: its reversal is due at once, sent by the next run naming the MARK, and the original is cancelled', async () => {
    // Greece (the registry's plug-in, with the capability): a sale offline after a stub timeout, reversed.
    const loc = await createLocation(t, key, 'gr-mydata');
    const original = (await createTx(t, key, { ...saleBody(loc), ...saleLines['gr-mydata'], metadata: { sandbox_outcome: 'timeout' } })).json();
    expect(original.status).toBe('offline_pending');
    const res = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key, payload: {} });
    expect(res.statusCode, res.body).toBe(201);
    const cancellation = res.json() as { id: string };
    // Its fate is now a batch's (no Greek batch exists: the generic path is what is tested): the
    // original sent in one, no attempt of its own to come; the reversal's look finds that and
    // waits the longest wait.
    const inBatch = statuses.inBatch[0]!;
    await t.db.query(`UPDATE jobs SET status = 'completed' WHERE transaction_id = $1 AND kind = 'submit'`, [original.id]);
    await setStatus(original.id, inBatch);
    await t.db.query(`UPDATE jobs SET run_at = $2 WHERE transaction_id = $1 AND kind = 'submit'`, [cancellation.id, clock.now()]);
    await t.worker.drain();
    expect(await submitJob(cancellation.id)).toMatchObject({ status: 'pending', run_at: new Date(clock.now().getTime() + 3_600_000) });
    expect((await getTx(t, key, cancellation.id)).response_payload).toMatchObject({ awaiting_original: { transaction_id: original.id, status: inBatch } });

    clock.advance(2_000);
    const row = (await transactionsRepo.getById(t.db, original.id))!;
    const moved = await t.db.transaction((tx) => settleRecord(tx, {
      t: row,
      verdict: { kind: 'success', outcome: { kind: 'accepted', upstreamId: '400001999999999', response: { batch: true } } },
      batch: { processor: 'test/batch', run_id: 'run-1', registration_number: null },
    }, t.rt.events, t.rt.translator, clock.now()));
    expect(moved).toEqual(['success']);
    expect((await submitJob(cancellation.id)).run_at).toEqual(clock.now());

    await t.worker.drain();
    const reversal = await getTx(t, key, cancellation.id);
    expect(reversal.status).toBe('success');
    expect(reversal.response_payload.awaiting_original).toBeUndefined();
    expect((await getTx(t, key, original.id)).status).toBe('cancelled');
    const record = await t.request({ method: 'GET', url: `/v1/transactions/${cancellation.id}/fiscal-record`, key });
    expect(record.statusCode, record.body).toBe(200);
    expect(record.body).toContain('<correlatedInvoices>400001999999999</correlatedInvoices>');
  });
});
