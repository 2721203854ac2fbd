import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { locationBodies, RANDOM_UUID, type SystemKey } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock('2026-03-02T10:00:00.000Z');
  t = await startTestApp({ clock, random: () => 0.5 });
});
afterAll(() => t.close());

async function fresh(system: SystemKey) {
  const { key, accountId } = await t.signup();
  const loc = await createLocation(t, key, system);
  return { key, accountId, loc };
}

const sale = (loc: string, system: SystemKey, over: Record<string, unknown> = {}) =>
  saleBody(loc, { ...saleLines[system], metadata: { ...(saleMetadata[system] ?? {}), ...((over.metadata as object) ?? {}) }, ...Object.fromEntries(Object.entries(over).filter(([k]) => k !== 'metadata')) });

describe('POST /v1/transactions', () => {
  it('France: signed locally, success at once (201), with the record and render hints', async () => {
    const { key, accountId, loc } = await fresh('fr-nf525');
    const res = await createTx(t, key, sale(loc, 'fr-nf525'));
    expect(res.statusCode).toBe(201);
    const tx = res.json();
    expect(tx).toMatchObject({
      account_id: accountId, location_id: loc, type: 'sale', status: 'success', amount: 2040, currency: 'EUR', country: 'FR',
      system: 'fr-nf525', environment: 'test', error_message: null,
    });
    expect(tx.fiscal_id).toBeTruthy();
    expect(tx.completed_at).toBe('2026-03-02T10:00:00.000Z');
    expect(tx.request_payload).toEqual(sale(loc, 'fr-nf525'));
    expect(tx.render_hints.map((h: { key: string }) => h.key)).toContain('signature_extract');
    expect(tx.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);

    const record = await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}/fiscal-record`, key });
    expect(record.statusCode).toBe(200);
    // The NF525 record: signed JSON, no longer a placeholder (test/api/france-records.test.ts checks it in depth).
    expect(record.headers['x-fiscal-record-placeholder']).toBe('false');
    expect(record.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(record.body)).toMatchObject({ format: 'nf525.record', document_number: tx.fiscal_id, transaction_id: tx.id });
  });

  it('Spain VERI*FACTU: 201 pending with a queued submission; the worker reaches success', async () => {
    const { key, loc } = await fresh('es-verifactu');
    const res = await createTx(t, key, sale(loc, 'es-verifactu'));
    expect(res.statusCode).toBe(201);
    expect(res.json().status).toBe('pending');
    const id = res.json().id;

    const queue = await t.request({ method: 'GET', url: '/v1/retry-queue', key });
    expect(queue.json().data).toHaveLength(1);
    expect(queue.json().data[0]).toMatchObject({ transaction_id: id, status: 'pending', attempt: 0, max_attempts: 50 });

    await t.worker.drain();
    const done = await getTx(t, key, id);
    expect(done.status).toBe('success');
    expect(done.fiscal_id).toMatch(/^[A-Z0-9]{16}$/); // the sandbox CSV
    expect(done.submitted_at).toBeTruthy();
    expect((await t.request({ method: 'GET', url: '/v1/retry-queue?status=completed', key })).json().total).toBe(1);
    const stats = await t.request({ method: 'GET', url: '/v1/retry-queue/stats', key });
    expect(stats.json()).toEqual({ pending: 0, processing: 0, completed: 1, failed: 0, dead: 0, total: 1 });
  });

  it('X-Fiscalization-Timeout waits inline for the authority', async () => {
    const { key, loc } = await fresh('es-verifactu');
    const res = await createTx(t, key, sale(loc, 'es-verifactu'), { 'x-fiscalization-timeout': '5' });
    expect(res.statusCode).toBe(201);
    expect(res.json().status).toBe('success');
  });

  it.each([
    ['es-ticketbai', 'pending', 'success'],
    ['es-sii', 'pending', 'success'],
    ['it-sdi', 'pending', 'delivered'],
    ['it-dc', 'pending', 'success'],
    ['pt-saft', 'success', 'success'],
    ['gr-mydata', 'success', 'success'], // Greece answers within its 5 s inline window
  ] as const)('%s reaches its expected status through the sandbox', async (system, atCreate, final) => {
    const { key, loc } = await fresh(system);
    const res = await createTx(t, key, sale(loc, system));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().status).toBe(atCreate);
    await t.worker.drain();
    if (system === 'it-dc') {
      // Documento Commerciale: AdE takes the document, its result is polled (the stub: a second later).
      const sent = await getTx(t, key, res.json().id);
      expect(sent).toMatchObject({ status: 'pending', response_payload: { awaiting_result: true } });
      clock.advance(1000);
      await t.worker.drain();
    }
    expect((await getTx(t, key, res.json().id)).status).toBe(final);
  });

  it('Bizkaia TicketBAI waits for the LROE batch (pending_batch, no submission job)', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai', { country_config: { ...locationBodies['es-ticketbai'].country_config, territory: 'bizkaia' } });
    const res = await createTx(t, key, sale(loc, 'es-ticketbai'));
    expect(res.json().status).toBe('pending_batch');
    expect((await t.request({ method: 'GET', url: '/v1/retry-queue', key })).json().total).toBe(0);
  });

  it('Greece: MARK and authority render hints once accepted', async () => {
    const { key, loc } = await fresh('gr-mydata');
    const tx = (await createTx(t, key, sale(loc, 'gr-mydata'))).json();
    expect(tx.status).toBe('success');
    expect(tx.fiscal_id_upstream).toMatch(/^\d{15}$/);
    expect(tx.render_hints.map((h: { key: string }) => h.key)).toEqual(expect.arrayContaining(['mark', 'uid', 'auth_code', 'qr']));
  });

  it('the guide form is accepted and stored as sent', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const body = { location_id: loc, type: 'sale', amount: 1200, line_items: [{ description: 'Pizza', quantity: 1, unit_price: 1000, vat_rate: 2000 }] };
    const res = await createTx(t, key, body);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ amount: 1200, request_payload: body });
  });
});

describe('validation', () => {
  it('answers the spec\'s messages', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const cases: [object, string][] = [
      [{ ...sale(loc, 'fr-nf525'), location_id: undefined }, "Key: 'CreateRequest.LocationID' Error:Field validation for 'LocationID' failed on the 'required' tag"],
      [{ ...sale(loc, 'fr-nf525'), location_id: null }, "Key: 'CreateRequest.LocationID' Error:Field validation for 'LocationID' failed on the 'required' tag"],
      // Every missing required field of the request in the same form (decisions: Errors).
      [{ ...sale(loc, 'fr-nf525'), currency: undefined }, "Key: 'CreateRequest.Currency' Error:Field validation for 'Currency' failed on the 'required' tag"],
      [{ ...sale(loc, 'fr-nf525'), payment_method: null }, "Key: 'CreateRequest.PaymentMethod' Error:Field validation for 'PaymentMethod' failed on the 'required' tag"],
      [{ ...sale(loc, 'fr-nf525'), total_amount: undefined }, "Key: 'CreateRequest.TotalAmount' Error:Field validation for 'TotalAmount' failed on the 'required' tag"],
      [sale(loc, 'fr-nf525', { items: [] }), 'items must be a non-empty array'],
      [sale(loc, 'fr-nf525', { total_amount: 2000 }), 'pretax_amount + tax_amount must equal total_amount'],
      [sale(RANDOM_UUID, 'fr-nf525'), 'location not found'],
      [sale('not-a-uuid', 'fr-nf525'), "Key: 'CreateRequest.LocationID' Error:Field validation for 'LocationID' failed on the 'uuid' tag"],
    ];
    for (const [body, error] of cases) {
      const res = await createTx(t, key, body);
      expect(res.statusCode, error).toBe(400);
      expect(res.json()).toEqual({ error });
    }
  });

  it('another account\'s location is "location not found"; an inactive one "location is not active"', async () => {
    const a = await fresh('fr-nf525');
    const b = await t.signup();
    expect((await createTx(t, b.key, sale(a.loc, 'fr-nf525'))).json()).toEqual({ error: 'location not found' });
    await t.request({ method: 'PATCH', url: `/v1/locations/${a.loc}`, key: a.key, payload: { status: 'inactive' } });
    expect((await createTx(t, a.key, sale(a.loc, 'fr-nf525'))).json()).toEqual({ error: 'location is not active' });
  });

  it('a location whose stored config fails its country\'s checks (spec "Versioning": backfilled with an empty config) fails them at the next transaction, until PATCHed', async () => {
    const { key } = await t.signup();
    const emptied = async (system: SystemKey, unresolved: boolean) => {
      const loc = await createLocation(t, key, system);
      await t.db.query(`UPDATE locations SET country_config = '{}'::jsonb${unresolved ? ', system = NULL, certificate_ref = NULL' : ''} WHERE id = $1`, [loc]);
      return loc;
    };
    // The message is the one a PATCH with the stored config gets.
    const patchMessage = async (loc: string) => (await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: {} } })).json().error;
    for (const [system, unresolved] of [['fr-nf525', false], ['es-ticketbai', false], ['es-verifactu', true], ['it-sdi', true]] as const) {
      const loc = await emptied(system, unresolved);
      const expected = await patchMessage(loc);
      expect(expected, system).toMatch(/country_config|locations require/);
      // Before: France and SDI issued records from an empty config (201), TicketBAI answered 500,
      // a location whose system was never resolved `location not found` (GET shows it).
      const res = await createTx(t, key, sale(loc, system));
      expect([res.statusCode, res.json()], system).toEqual([400, { error: expected }]);
      const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: sale(loc, system) });
      expect([preview.statusCode, preview.json()], system).toEqual([400, { error: expected }]);
      // PATCHed with a valid config: the next transaction goes through.
      const fixed = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: locationBodies[system].country_config } });
      expect(fixed.statusCode, fixed.body).toBe(200);
      expect((await createTx(t, key, sale(loc, system))).statusCode, system).toBe(201);
    }
    // A cancel builds its annulment from the same config: the same check (TicketBAI answered 500).
    const loc = await createLocation(t, key, 'es-ticketbai');
    const original = (await createTx(t, key, sale(loc, 'es-ticketbai'))).json();
    await t.worker.drain();
    await t.db.query(`UPDATE locations SET country_config = '{}'::jsonb WHERE id = $1`, [loc]);
    await t.rt.changes.sync(); // the location cache (which the sale filled) has heard of it
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key });
    expect([cancel.statusCode, cancel.json()]).toEqual([400, { error: await patchMessage(loc) }]);
    expect((await getTx(t, key, original.id)).cancellation_transaction_id).toBeNull();
  });

  it('Italy SDI needs metadata.invoice_number', async () => {
    const { key, loc } = await fresh('it-sdi');
    const res = await createTx(t, key, saleBody(loc));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invoice_number is required in metadata for Italian transactions' });
  });

  it('Italy: a line\'s natura is read as the Italian plug-ins declare it (trimmed, upper case), stored on the line, validated by the system', async () => {
    const { key, loc } = await fresh('it-sdi');
    const body = (natura: unknown) => sale(loc, 'it-sdi', {
      items: [{ description: 'Libro', quantity: 1, unit_price: 1000, tax_rate: 0, tax_amount: 0, total_amount: 1000, natura }],
      pretax_amount: 1000, tax_amount: 0, total_amount: 1000,
    });
    expect((await createTx(t, key, body(5))).json()).toEqual({ error: 'items[0].natura must be a string' });
    expect((await createTx(t, key, body('  '))).json()).toEqual({ error: 'items[0].natura is required when tax_rate is 0 (N1-N6)' });
    expect((await createTx(t, key, body('N9'))).json()).toEqual({ error: 'items[0].natura must be a valid Natura code (N1-N6 and subcodes)' });
    const res = await createTx(t, key, body(' n2.1 '));
    expect(res.statusCode).toBe(201);
    const stored = await t.db.query<{ normalized: string | { items: unknown[] } }>('SELECT normalized FROM transactions WHERE id = $1', [res.json().id]);
    const normalized = stored.rows[0]!.normalized;
    const items = (typeof normalized === 'string' ? JSON.parse(normalized) : normalized).items;
    expect(JSON.stringify(items[0])).toBe(
      '{"description":"Libro","quantity":1,"unit_price":1000,"tax_rate":0,"tax_amount":0,"total_amount":1000,"natura":"N2.1"}',
    );
  });

  it('headers: bad timeout, sandbox header rules', async () => {
    const { key, loc } = await fresh('fr-nf525');
    expect((await createTx(t, key, sale(loc, 'fr-nf525'), { 'x-fiscalization-timeout': '11' })).json())
      .toEqual({ error: 'X-Fiscalization-Timeout must be a number of seconds from 0 to 10' });
    expect((await createTx(t, key, sale(loc, 'fr-nf525'), { 'x-svc-sandbox': 'yes' })).json()).toEqual({ error: 'X-Svc-Sandbox must be "authority"' });
    expect((await createTx(t, key, sale(loc, 'fr-nf525'), { 'idempotency-key': 'k'.repeat(256) })).json()).toEqual({ error: 'Idempotency-Key must be 1-255 characters' });
  });

  it('a client key in the cancellations\' form is refused: it would make that transaction impossible to cancel', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const original = (await createTx(t, key, sale(loc, 'fr-nf525'))).json();
    const squat = await createTx(t, key, sale(loc, 'fr-nf525'), { 'idempotency-key': `cancel:${original.id}` });
    expect([squat.statusCode, squat.json()]).toEqual([400, { error: 'Idempotency-Key may not start with "cancel:": the service keys cancellations so' }]);
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key });
    expect(cancel.statusCode).toBe(201);
    expect(cancel.json()).toMatchObject({ type: 'cancellation', cancels_transaction_id: original.id });
  });

  it('a cancellation that was refused (or ran out of retries) did not cancel: the next cancel issues a new one; one in flight or accepted is answered again', async () => {
    const { key, loc } = await fresh('es-verifactu');
    const original = (await createTx(t, key, sale(loc, 'es-verifactu'))).json();
    await t.worker.drain();
    const cancel = () => t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key });
    const first = await cancel();
    expect(first.statusCode, first.body).toBe(201);
    // Its retries ran out before it was sent (as if AEAT had been down for days).
    await t.db.query("UPDATE jobs SET status = 'dead' WHERE transaction_id = $1", [first.json().id]);
    await t.db.query("UPDATE transactions SET status = 'failed_permanent' WHERE id = $1", [first.json().id]);
    expect((await getTx(t, key, original.id)).status).toBe('success');
    const second = await cancel();
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json().id).not.toBe(first.json().id);
    expect(second.json().idempotency_key).toBe(`cancel:${original.id}:2`);
    expect((await getTx(t, key, original.id)).cancellation_transaction_id).toBe(second.json().id);
    // In flight: answered again, nothing new.
    const again = await cancel();
    expect([again.statusCode, again.json().id]).toEqual([200, second.json().id]);
    await t.worker.drain();
    expect((await getTx(t, key, second.json().id)).status).toBe('success');
    expect((await getTx(t, key, original.id)).status).toBe('cancelled');
    const done = await cancel();
    expect([done.statusCode, done.json().id]).toEqual([200, second.json().id]);
  });

  it('the sandbox outcome of a cancellation is the cancel body\'s own, not inherited from the original: a refused one is rehearsed, then cancelled for real', async () => {
    const { key, loc } = await fresh('es-verifactu');
    const original = (await createTx(t, key, sale(loc, 'es-verifactu'))).json();
    await t.worker.drain();
    const cancel = (payload: Record<string, unknown>) => t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key, payload });
    const bad = await cancel({ sandbox_outcome: 'reject' });
    expect([bad.statusCode, bad.json()]).toEqual([400, { error: 'metadata.sandbox_outcome must be accept, reject:<code>, timeout or error:<code>' }]);
    const refused = await cancel({ sandbox_outcome: 'reject:4102' });
    expect(refused.statusCode, refused.body).toBe(201);
    expect(refused.json().request_payload).toEqual({ reason: null, sandbox_outcome: 'reject:4102' });
    // In flight, it stands: the original names it.
    expect((await getTx(t, key, original.id)).cancellation_transaction_id).toBe(refused.json().id);
    await t.worker.drain();
    expect((await getTx(t, key, refused.json().id)).status).toBe('failed_permanent');
    // Refused, it annulled nothing: the original names no cancellation (read alone, listed,
    // replayed), as stored: every reader reads the column (the engine, the cancel route).
    expect(await getTx(t, key, original.id)).toMatchObject({ status: 'success', cancellation_transaction_id: null });
    expect((await t.db.query('SELECT cancelled_by_id FROM transactions WHERE id = $1', [original.id])).rows).toEqual([{ cancelled_by_id: null }]);
    const listed = await t.request({ method: 'GET', url: '/v1/transactions?limit=100', key });
    expect(listed.json().data.find((x: { id: string }) => x.id === original.id).cancellation_transaction_id).toBeNull();
    const replayed = await createTx(t, key, sale(loc, 'es-verifactu'), { 'idempotency-key': original.idempotency_key });
    expect([replayed.statusCode, replayed.json().cancellation_transaction_id]).toEqual([200, null]);
    // The refused one still says what it tried to cancel.
    expect((await getTx(t, key, refused.json().id)).cancels_transaction_id).toBe(original.id);
    const accepted = await cancel({});
    expect(accepted.statusCode, accepted.body).toBe(201);
    expect(accepted.json().request_payload).toEqual({ reason: null });
    expect(accepted.json().idempotency_key).toBe(`cancel:${original.id}:2`);
    expect((await getTx(t, key, original.id)).cancellation_transaction_id).toBe(accepted.json().id);
    await t.worker.drain();
    expect((await getTx(t, key, accepted.json().id)).status).toBe('success');
    expect(await getTx(t, key, original.id)).toMatchObject({ status: 'cancelled', cancellation_transaction_id: accepted.json().id });
    const again = await cancel({});
    expect([again.statusCode, again.json().id]).toEqual([200, accepted.json().id]);
  });

  it('migration 0051: an original still naming a refused cancellation names the one that stands, or none; one that stands is left alone', async () => {
    const { key, loc } = await fresh('es-verifactu');
    const sold = async () => {
      const o = (await createTx(t, key, sale(loc, 'es-verifactu'))).json();
      await t.worker.drain();
      return o as { id: string };
    };
    const cancel = async (id: string, payload: Record<string, unknown> = {}) => {
      const res = await t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key, payload });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: string };
    };
    const linked = async (id: string) => (await t.db.query<{ cancelled_by_id: string | null; updated_at: Date }>(
      'SELECT cancelled_by_id, updated_at FROM transactions WHERE id = $1', [id])).rows[0]!;
    // As the column was before: the latest cancellation issued, refused or not.
    const asBefore = (original: string, cancellation: string) => t.db.query('UPDATE transactions SET cancelled_by_id = $2 WHERE id = $1', [original, cancellation]);
    // Refused, nothing since.
    const alone = await sold();
    const refused = await cancel(alone.id, { sandbox_outcome: 'reject:4102' });
    await t.worker.drain();
    await asBefore(alone.id, refused.id);
    expect((await getTx(t, key, alone.id)).cancellation_transaction_id).toBe(refused.id); // read as stored
    // Refused, then another one accepted: it stands.
    const redone = await sold();
    await cancel(redone.id, { sandbox_outcome: 'reject:4102' });
    await t.worker.drain();
    const accepted = await cancel(redone.id);
    await t.worker.drain();
    // Refused, another one in flight, but the column names the refused one.
    const stale = await sold();
    const first = await cancel(stale.id, { sandbox_outcome: 'reject:4102' });
    await t.worker.drain();
    const inFlight = await cancel(stale.id);
    await asBefore(stale.id, first.id);
    const before = await Promise.all([alone.id, redone.id, stale.id].map(linked));

    const sql = (await import('node:fs')).readFileSync(new URL('../../src/store/migrations/0051_standing_cancellation.sql', import.meta.url), 'utf8');
    await t.db.transaction((tx) => tx.exec(sql));
    const after = await Promise.all([alone.id, redone.id, stale.id].map(linked));
    expect(after.map((r) => r.cancelled_by_id)).toEqual([null, accepted.id, inFlight.id]);
    expect(after.map((r) => r.updated_at)).toEqual(before.map((r) => r.updated_at));
    expect(await getTx(t, key, alone.id)).toMatchObject({ status: 'success', cancellation_transaction_id: null });
    expect(await getTx(t, key, redone.id)).toMatchObject({ status: 'cancelled', cancellation_transaction_id: accepted.id });
    // Again: nothing to change.
    await t.db.transaction((tx) => tx.exec(sql));
    expect((await Promise.all([alone.id, redone.id, stale.id].map(linked))).map((r) => r.cancelled_by_id)).toEqual([null, accepted.id, inFlight.id]);
    // The next cancel of the one that names none issues attempt 2.
    expect((await cancel(alone.id)) as unknown).toMatchObject({ idempotency_key: `cancel:${alone.id}:2` });
    await t.worker.drain();
  });

  it('a cancel reads its location as create does: cached, with its config\'s check (not run again per cancel)', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const sales = [(await createTx(t, key, sale(loc, 'fr-nf525'))).json(), (await createTx(t, key, sale(loc, 'fr-nf525'))).json()];
    const checks = vi.spyOn(t.rt.locations, 'configErrorOf');
    try {
      for (const s of sales) {
        const res = await t.request({ method: 'POST', url: `/v1/transactions/${s.id}/cancel`, key });
        expect(res.statusCode, res.body).toBe(201);
        expect(await getTx(t, key, s.id)).toMatchObject({ status: 'cancelled', cancellation_transaction_id: res.json().id });
      }
      expect(checks).not.toHaveBeenCalled();
    } finally {
      checks.mockRestore();
    }
  });

  it('a cancellation does not inherit the original\'s sandbox outcome: a Greek sale offline after a timeout is reversed, and the reversal waits for it (never sent before its original)', async () => {
    const { key, loc } = await fresh('gr-mydata');
    const original = (await createTx(t, key, sale(loc, 'gr-mydata', { metadata: { sandbox_outcome: 'timeout' } }))).json();
    expect(original.status).toBe('offline_pending');
    const c = await t.request({ method: 'POST', url: `/v1/transactions/${original.id}/cancel`, key });
    expect(c.statusCode, c.body).toBe(201);
    expect(c.json().request_payload).toEqual({ reason: null });
    await t.worker.runOnce();
    // Not sent while its original is not at AADE (docs/decisions.md F7): it did not time out
    // (inherited, it would have), it waits, offline with its original.
    const reversal = await getTx(t, key, c.json().id);
    expect(reversal).toMatchObject({ status: 'offline_pending', submitted_at: null, response_payload: { awaiting_original: { transaction_id: original.id, status: 'offline_pending' } } });
    expect(reversal.response_payload.submit_error).toBeUndefined();
    expect((await getTx(t, key, original.id)).status).toBe('offline_pending');
  });

  it('a key scoped to other countries gets 403', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const scoped = (await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { permissions: ['transactions:write', 'country:ES'] } })).json().key;
    const res = await createTx(t, scoped, sale(loc, 'fr-nf525'));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'API key is not allowed to act in country FR' });
  });
});

describe('idempotency', () => {
  it('same key + same body → the same transaction (200); different body → 409', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const first = await createTx(t, key, sale(loc, 'fr-nf525'), { 'idempotency-key': 'order-1' });
    expect(first.statusCode).toBe(201);
    const again = await createTx(t, key, sale(loc, 'fr-nf525'), { 'idempotency-key': 'order-1' });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    const other = await createTx(t, key, sale(loc, 'fr-nf525', { payment_method: 'cash' }), { 'idempotency-key': 'order-1' });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({ error: 'idempotency key already used with a different request' });
    expect((await t.request({ method: 'GET', url: '/v1/transactions', key })).json().total).toBe(1);
  });

  it('the same JSON in other words (keys reordered, spaces) is the same request; another sandbox header is not', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const body = sale(loc, 'fr-nf525') as Record<string, unknown>;
    const first = await createTx(t, key, body, { 'idempotency-key': 'order-words' });
    expect(first.statusCode).toBe(201);
    const stored = await t.db.query<{ request_hash: string }>('SELECT request_hash FROM transactions WHERE id = $1', [first.json().id]);
    expect(stored.rows[0]!.request_hash).toMatch(/^r1::[0-9a-f]{64}$/);
    // The same value written otherwise: keys in reverse order, indented.
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(body).reverse()), null, 2);
    const again = await t.request({
      method: 'POST', url: '/v1/transactions', key, payload: reordered, headers: { 'content-type': 'application/json', 'idempotency-key': 'order-words' },
    });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    // The same body asking for the authority sandbox is another request.
    const sandboxed = await createTx(t, key, body, { 'idempotency-key': 'order-words', 'x-svc-sandbox': 'authority' });
    expect(sandboxed.statusCode).toBe(409);
    expect(sandboxed.json()).toEqual({ error: 'idempotency key already used with a different request' });
  });

  it('a transaction stored with the older hash (stable JSON of body and sandbox) still answers its retries', async () => {
    const { stableHash } = await import('../../src/core/stable-json.ts');
    const { key, loc } = await fresh('fr-nf525');
    const body = sale(loc, 'fr-nf525');
    const first = await createTx(t, key, body, { 'idempotency-key': 'order-legacy' });
    expect(first.statusCode).toBe(201);
    await t.db.query('UPDATE transactions SET request_hash = $2 WHERE id = $1', [first.json().id, stableHash({ body, sandbox: null })]);
    const again = await createTx(t, key, body, { 'idempotency-key': 'order-legacy' });
    expect(again.statusCode).toBe(200);
    expect(again.json().id).toBe(first.json().id);
    const other = await createTx(t, key, sale(loc, 'fr-nf525', { payment_method: 'cash' }), { 'idempotency-key': 'order-legacy' });
    expect(other.statusCode).toBe(409);
  });

  it('50 concurrent identical requests → one row, every answer the same id', async () => {
    const { key, loc } = await fresh('es-verifactu');
    const answers = await Promise.all(Array.from({ length: 50 }, () => createTx(t, key, sale(loc, 'es-verifactu'), { 'idempotency-key': 'burst-1' })));
    const ids = new Set(answers.map((r) => r.json().id));
    expect(ids.size).toBe(1);
    expect(answers.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(49);
    const rows = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE idempotency_key = $1', ['burst-1']);
    expect(rows.rows[0]!.n).toBe(1);
    const jobs = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE transaction_id = $1', [[...ids][0]]);
    expect(jobs.rows[0]!.n).toBe(1);
  });

  it('keys are scoped per account', async () => {
    const a = await fresh('fr-nf525');
    const b = await fresh('fr-nf525');
    const ra = await createTx(t, a.key, sale(a.loc, 'fr-nf525'), { 'idempotency-key': 'shared' });
    const rb = await createTx(t, b.key, sale(b.loc, 'fr-nf525'), { 'idempotency-key': 'shared' });
    expect(rb.statusCode).toBe(201);
    expect(rb.json().id).not.toBe(ra.json().id);
  });
});

describe('GET', () => {
  it('lists newest first with filters; other accounts see 404', async () => {
    const { key, loc } = await fresh('fr-nf525');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      ids.push((await createTx(t, key, sale(loc, 'fr-nf525'))).json().id);
    }
    const list = (await t.request({ method: 'GET', url: '/v1/transactions?limit=2', key })).json();
    expect(list).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(list.data.map((x: { id: string }) => x.id)).toEqual([ids[2], ids[1]]);
    expect((await t.request({ method: 'GET', url: '/v1/transactions?status=pending', key })).json().total).toBe(0);
    expect((await t.request({ method: 'GET', url: '/v1/transactions?status=nope', key })).statusCode).toBe(400);

    const other = await t.signup();
    for (const url of [`/v1/transactions/${ids[0]}`, `/v1/transactions/${ids[0]}/fiscal-record`]) {
      const res = await t.request({ method: 'GET', url, key: other.key });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'transaction not found' });
    }
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${ids[0]}/cancel`, key: other.key });
    expect(cancel.statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: '/v1/transactions', key: other.key })).json().total).toBe(0);
  });
});

describe('inline budget with a running worker', () => {
  it('when the background worker claims the job first, the request still waits for its outcome', async () => {
    const s = await startTestApp({ worker: { idleMs: 1 } });
    try {
      s.worker.start(); // races the inline path for every job
      const { key } = await s.signup();
      const loc = await createLocation(s, key, 'es-verifactu');
      for (let i = 0; i < 20; i++) {
        const res = await createTx(s, key, saleBody(loc), { 'x-fiscalization-timeout': '5' });
        expect(res.statusCode).toBe(201);
        expect(res.json().status).toBe('success');
      }
    } finally {
      await s.close();
    }
  });
});
