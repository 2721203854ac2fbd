import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { getSystem } from '../../src/countries/registry.ts';
import { TransportError, type AuthorityOutcome, type FiscalSystem } from '../../src/countries/types.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { createTx, getTx, locationBody, saleBody, saleMetadata } from '../support/transactions.ts';
import { freshPartitaIva } from '../support/italy.ts';

/*
 * SdI notifications through POST /v1/inbound/sdi with the REAL it-sdi channel
 * (src/countries/it-sdi/notifications.ts), on each store. Only `submit` is wrapped: a
 * real SdI takes the file (`sent`, status `pending`, fiscal id = the file name) and
 * answers later by notification. The invoices are sent "to SdI" (a test key with
 * `X-Svc-Sandbox: authority`, the location's uploaded certificate): a posted notification
 * is SdI's, and only a file sent to SdI is matched by one (never the stub's).
 */

const SECRET = 'sdi-notifications-secret-for-tests';
const clock = new ManualClock('2026-11-20T10:00:00.000Z');

const sdi = getSystem('it-sdi');
/** The FatturaPA file name the record carries as its fiscal id (build.ts): IT + VAT number + _ + 5 characters. */
const FILE_NAME = /^IT\d{11}_[0-9A-Z]{5}\.xml$/;
/** Every file handed to `submit`, by transaction id (a resend shows here twice). */
const submits: string[] = [];
/** When set, what an attempt meets before its answer (an answer lost, an attempt still in flight). */
let attemptHook: ((transactionId: string) => Promise<void>) | undefined;
const sentSdi: FiscalSystem = {
  ...sdi,
  submit: async (record): Promise<AuthorityOutcome> => {
    submits.push(record.transactionId);
    await attemptHook?.(record.transactionId);
    return { kind: 'sent', reference: record.fiscalId ?? record.transactionId, response: { sent: true } };
  },
};
/** SdI took the file, then the connection broke: no answer (a transport fault, retried). */
const answerLost = async () => {
  throw new TransportError('timeout', 'no answer from the authority within 30 s');
};
/** Runs a submit job whose answer is lost (SdI has the file); what runJobNow answers. */
const runWithAnswerLost = async (jobId: string): Promise<boolean> => {
  attemptHook = answerLost;
  try {
    return await t.worker.runJobNow(jobId);
  } finally {
    attemptHook = undefined;
  }
};

type Kind = 'RC' | 'NS' | 'MC' | 'NE-EC01' | 'NE-EC02' | 'DT' | 'AT';
const FIXTURES = new URL('../../src/countries/it-sdi/fixtures/notifications/', import.meta.url);
/**
 * A fixture notification about the given file, with the given IdentificativoSdI; unsigned
 * (the fixtures' signatures are placeholders, which a posted message may not carry: its
 * signature is verified; signed messages: sdi-lifecycle.test.ts).
 */
function notice(kind: Kind, file: string, id: string): string {
  return fs.readFileSync(new URL(`${kind}.xml`, FIXTURES), 'utf8')
    .replace(/\s*<ds:Signature[\s\S]*<\/ds:Signature>/, '')
    .replaceAll(/<IdentificativoSdI>\d+<\/IdentificativoSdI>/g, `<IdentificativoSdI>${id}</IdentificativoSdI>`)
    .replace(/<NomeFile>[^<]+<\/NomeFile>/, `<NomeFile>${file}</NomeFile>`);
}
let nextId = 100_000_000 + (Date.now() % 100_000_000);
const sdiId = () => String(++nextId);

let t: TestApp;
let key: string;
let accountId: string;
let location: string;
beforeAll(async () => {
  t = await startTestApp({
    clock,
    config: { inboundSecrets: { sdi: SECRET } },
    systems: (k) => (k === 'it-sdi' ? sentSdi : getSystem(k)),
  });
  ({ key, accountId } = await t.signup());
  location = await sdiLocation(key);
});

const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;
/** SdI's test service refuses a buyer without an id (00417): the invoices sent there name one. */
const BUYER = { codice_fiscale: 'RSSMRA85T10A562S' };
const PASSWORD = 'password-del-certificato';
let certificates = 0;
/** An it-sdi location (the given partita IVA, else the fixtures') naming a certificate uploaded for it: files may go to SdI. */
async function sdiLocation(apiKey: string, taxId?: string): Promise<string> {
  const certificateId = `cert-it-${++certificates}-${Date.now() % 100_000}`;
  const cert = generateCert({ subject: '/C=IT/serialNumber=TINIT-01234567897/CN=Trasmittente Test', days: 3650 });
  const { payload, headers } = uploadForm({ certificateId, password: PASSWORD, file: exportP12(cert, PASSWORD) });
  const up = await t.request({ method: 'POST', url: '/v1/certificates', key: apiKey, payload, headers });
  expect(up.statusCode, up.body).toBe(201);
  const body = locationBody('it-sdi') as { country_config: Record<string, unknown> };
  const res = await t.request({
    method: 'POST', url: '/v1/locations', key: apiKey,
    payload: { ...body, ...(taxId ? { tax_id: taxId } : {}), country_config: { ...body.country_config, certificate_id: certificateId } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}
afterAll(async () => {
  await t.close();
});

const post = (body: string, headers: Record<string, string> = { 'x-sdi-secret': SECRET }) =>
  t.request({ method: 'POST', url: '/v1/inbound/sdi', payload: body, headers: { 'content-type': 'application/xml', ...headers } });

/** An invoice sent to SdI, awaiting its notification. */
async function sentInvoice(): Promise<{ id: string; fiscal_id: string }> {
  const res = await createTx(t, key, saleBody(location, { metadata: saleMetadata['it-sdi'], customer_context: BUYER }), AUTHORITY);
  expect(res.statusCode).toBe(201);
  await t.worker.drain();
  const tx = await getTx(t, key, res.json().id);
  expect(tx).toMatchObject({ status: 'pending', fiscal_id: expect.stringMatching(FILE_NAME) });
  return tx;
}

const eventsOf = async (transactionId: string) => (await t.db.query<{ type: string; data: { transaction_id: string; status: string } }>(
  `SELECT type, data FROM events WHERE account_id = $1 AND data->>'transaction_id' = $2 AND type LIKE 'transaction.sdi%' ORDER BY created_at`,
  [accountId, transactionId])).rows.map((e) => [e.type, e.data.status]);

describe('SdI notifications (POST /v1/inbound/sdi, the it-sdi channel)', () => {
  it('RC delivers the invoice found by its file name; the same RC again, NE and DT change nothing; NS after it is a 409', async () => {
    const tx = await sentInvoice();
    const id = sdiId();
    const rc = await post(notice('RC', tx.fiscal_id, id));
    expect([rc.statusCode, rc.json()]).toEqual([200, { transaction_id: tx.id, status: 'delivered', changed: true }]);
    const delivered = await getTx(t, key, tx.id);
    expect(delivered).toMatchObject({ status: 'delivered', fiscal_id: tx.fiscal_id, fiscal_id_upstream: id });
    expect(delivered.completed_at).not.toBeNull();
    expect(delivered.response_payload.notifications).toEqual([{
      received_at: clock.now().toISOString(), notification: 'RC', type: 'RicevutaConsegna', IdentificativoSdI: id, NomeFile: tx.fiscal_id,
      MessageId: '7000101', DataOraRicezione: '2026-11-20T10:00:05.000+01:00', DataOraConsegna: '2026-11-20T10:02:31.000+01:00',
      Destinatario: { Codice: 'ABC1234', Descrizione: 'Cliente di prova S.r.l.' },
    }]);
    expect(await eventsOf(tx.id)).toEqual([['transaction.sdi_status_changed', 'delivered']]);

    // The same RC twice: recorded, nothing changes, no second event.
    const again = await post(notice('RC', tx.fiscal_id, id));
    expect([again.statusCode, again.json()]).toEqual([200, { transaction_id: tx.id, status: 'delivered', changed: false }]);
    // The PA's acceptance, refusal, and the lapse of its term: recorded, no status change.
    for (const kind of ['NE-EC01', 'NE-EC02', 'DT'] as const) {
      expect((await post(notice(kind, tx.fiscal_id, id))).json()).toEqual({ transaction_id: tx.id, status: 'delivered', changed: false });
    }
    const after = await getTx(t, key, tx.id);
    expect(after.status).toBe('delivered');
    expect((after.response_payload.notifications as { notification: string; esito?: string }[]).map((n) => [n.notification, n.esito]))
      .toEqual([['RC', undefined], ['RC', undefined], ['NE', 'EC01'], ['NE', 'EC02'], ['DT', undefined]]);

    // A scarto for an invoice already delivered: out of order, the status machine refuses it.
    const ns = await post(notice('NS', tx.fiscal_id, id));
    expect([ns.statusCode, ns.json()]).toEqual([409, { error: 'the notification does not apply to a transaction in status delivered' }]);
    expect((await getTx(t, key, tx.id)).status).toBe('delivered');
    expect(await eventsOf(tx.id)).toEqual([['transaction.sdi_status_changed', 'delivered']]);
  });

  it('NS rejects the invoice and keeps every error of ListaErrori', async () => {
    const tx = await sentInvoice();
    const id = sdiId();
    const ns = await post(notice('NS', tx.fiscal_id, id), { 'x-sdi-secret': SECRET, 'content-type': 'text/xml; charset=utf-8' });
    expect([ns.statusCode, ns.json()]).toEqual([200, { transaction_id: tx.id, status: 'rejected', changed: true }]);
    const rejected = await getTx(t, key, tx.id);
    expect(rejected).toMatchObject({ status: 'rejected', fiscal_id_upstream: id });
    expect(rejected.response_payload.notifications).toEqual([expect.objectContaining({
      notification: 'NS', IdentificativoSdI: id, NomeFile: tx.fiscal_id,
      ListaErrori: [
        { Codice: '00305', Descrizione: '1.4.1.1.2 <IdCodice> non valido : 00000000000', message: expect.any(String) },
        { Codice: '00423', Descrizione: expect.stringContaining('<PrezzoTotale>'), message: expect.any(String) },
      ],
    })]);
    expect(await eventsOf(tx.id)).toEqual([['transaction.sdi_status_changed', 'rejected']]);
    // Twice: 200, unchanged; an RC after a scarto does not apply.
    expect((await post(notice('NS', tx.fiscal_id, id))).json()).toEqual({ transaction_id: tx.id, status: 'rejected', changed: false });
    expect((await post(notice('RC', tx.fiscal_id, id))).statusCode).toBe(409);
    expect(await eventsOf(tx.id)).toHaveLength(1);
  });

  it('MC marks the missed delivery; the AT that follows changes nothing; an AT alone marks it too', async () => {
    const tx = await sentInvoice();
    const id = sdiId();
    expect((await post(notice('MC', tx.fiscal_id, id))).json()).toEqual({ transaction_id: tx.id, status: 'delivery_error', changed: true });
    expect((await post(notice('AT', tx.fiscal_id, id))).json()).toEqual({ transaction_id: tx.id, status: 'delivery_error', changed: false });
    const missed = await getTx(t, key, tx.id);
    expect((missed.response_payload.notifications as { notification: string }[]).map((n) => n.notification)).toEqual(['MC', 'AT']);
    expect(await eventsOf(tx.id)).toEqual([['transaction.sdi_status_changed', 'delivery_error']]);

    const alone = await sentInvoice();
    expect((await post(notice('AT', alone.fiscal_id, sdiId()))).json()).toEqual({ transaction_id: alone.id, status: 'delivery_error', changed: true });
    expect(await eventsOf(alone.id)).toEqual([['transaction.sdi_status_changed', 'delivery_error']]);
  });

  it('an NE or DT on a pending invoice is recorded and gives it its IdentificativoSdI; another file under that id is refused (409), the RC that follows is matched by it', async () => {
    const tx = await sentInvoice();
    const id = sdiId();
    expect((await post(notice('DT', tx.fiscal_id, id))).json()).toEqual({ transaction_id: tx.id, status: 'pending', changed: false });
    expect(await getTx(t, key, tx.id)).toMatchObject({ status: 'pending', fiscal_id_upstream: id });
    expect(await eventsOf(tx.id)).toEqual([]);
    // Another file name, the same IdentificativoSdI: not this invoice's notification; neither recorded nor applied.
    const other = await post(notice('RC', 'IT01234567890_ZZZZZ.xml', id));
    expect([other.statusCode, other.json()]).toEqual([409, {
      error: `the message names IT01234567890_ZZZZZ.xml, but the authority's id ${id} is the one of ${tx.fiscal_id}: not recorded`,
    }]);
    const still = await getTx(t, key, tx.id);
    expect(still.status).toBe('pending');
    expect((still.response_payload.notifications as unknown[]).length).toBe(1);
    expect((await post(notice('RC', tx.fiscal_id, id))).json()).toEqual({ transaction_id: tx.id, status: 'delivered', changed: true });
  });

  it('answers 401 without the secret, 400 for what it cannot read, 404 for an unknown invoice; none changes anything', async () => {
    const tx = await sentInvoice();
    const rc = notice('RC', tx.fiscal_id, sdiId());
    const missing = await post(rc, {});
    expect([missing.statusCode, missing.json()]).toEqual([401, { error: 'missing or invalid X-SDI-Secret' }]);
    expect((await post(rc, { 'x-sdi-secret': 'not-the-secret-of-this-channel' })).statusCode).toBe(401);

    const malformed = await post('<types:RicevutaConsegna xmlns:types="http://www.fatturapa.gov.it/sdi/messaggi/v1.0"><IdentificativoSdI>1');
    expect([malformed.statusCode, malformed.json()]).toEqual([400, { error: 'the SDI notification is not well-formed XML' }]);
    const other = await post('<FatturaElettronica versione="FPR12"/>');
    expect(other.statusCode).toBe(400);
    expect(other.json().error).toMatch(/^not an SDI notification/);
    const incomplete = await post(rc.replace(/<MessageId>\d+<\/MessageId>/, ''));
    expect([incomplete.statusCode, incomplete.json()]).toEqual([400, { error: 'RicevutaConsegna (RC) is missing its MessageId' }]);
    const empty = await post('');
    expect(empty.statusCode).toBe(400);
    // A placeholder (or forged) signature does not verify: 400, never a 500.
    const forged = fs.readFileSync(new URL('RC.xml', FIXTURES), 'utf8').replace(/<NomeFile>[^<]+<\/NomeFile>/, `<NomeFile>${tx.fiscal_id}</NomeFile>`);
    const bad = await post(forged);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^the SDI notification signature does not verify: Reference 1 \(URI=""\): the digest does not match/);

    const unknown = await post(notice('RC', 'IT01234567890_NOONE.xml', sdiId()));
    expect([unknown.statusCode, unknown.json()]).toEqual([404, { error: 'transaction not found' }]);

    const still = await getTx(t, key, tx.id);
    expect(still).toMatchObject({ status: 'pending', fiscal_id_upstream: null });
    expect(still.response_payload.notifications).toBeUndefined();
    expect(await eventsOf(tx.id)).toEqual([]);
  });
});

/** Every event about the transaction (both vocabularies are delivered from one row: core/events.ts). */
const allEventsOf = async (transactionId: string) => (await t.db.query<{ type: string; data: { status: string; last_error: string | null } }>(
  `SELECT type, data FROM events WHERE data->>'transaction_id' = $1 ORDER BY created_at, type`, [transactionId])).rows
  .map((e) => [e.type, e.data.status]);

/** An invoice created and its submit job's id, not yet run. */
async function createdInvoice(apiKey = key, loc = location, headers: Record<string, string> = AUTHORITY): Promise<{ id: string; fiscal_id: string; job: string }> {
  const res = await createTx(t, apiKey, saleBody(loc, { metadata: saleMetadata['it-sdi'], customer_context: BUYER }), headers);
  expect(res.statusCode, res.body).toBe(201);
  const { rows } = await t.db.query<{ id: string }>(`SELECT id FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [res.json().id]);
  return { id: res.json().id, fiscal_id: res.json().fiscal_id, job: rows[0]!.id };
}

/** The submit job's retry, due: the clock moved to it and the queue drained. */
async function runRetry(id: string) {
  const { rows } = await t.db.query<{ run_at: Date }>(`SELECT run_at FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [id]);
  if (rows[0]!.run_at.getTime() > clock.now().getTime()) clock.set(rows[0]!.run_at);
  await t.worker.drain();
}


describe('a notification while the attempt that sent the file failed or is in flight (F1)', () => {
  it('failed (the answer lost, a retry due): the RC delivers it, once announced; the retry sends nothing again', async () => {
    const tx = await createdInvoice();
    expect(await runWithAnswerLost(tx.job)).toBe(true);
    const failed = await getTx(t, key, tx.id);
    expect(failed).toMatchObject({ status: 'failed', fiscal_id_upstream: null });
    const id = sdiId();
    const rc = await post(notice('RC', tx.fiscal_id, id));
    expect([rc.statusCode, rc.json()]).toEqual([200, { transaction_id: tx.id, status: 'delivered', changed: true }]);
    const delivered = await getTx(t, key, tx.id);
    expect(delivered).toMatchObject({ status: 'delivered', fiscal_id_upstream: id, error_message: null });
    expect(delivered.completed_at).not.toBeNull();
    expect(delivered.response_payload.submit_error).toBeUndefined();
    expect(delivered.response_payload.awaiting_notification).toBeUndefined();

    await runRetry(tx.id);
    expect(submits.filter((x) => x === tx.id)).toHaveLength(1);
    expect((await getTx(t, key, tx.id)).status).toBe('delivered');
    const { rows } = await t.db.query<{ status: string }>(`SELECT status FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [tx.id]);
    expect(rows).toEqual([{ status: 'completed' }]);
    expect(await allEventsOf(tx.id)).toEqual([['fiscalization.completed', 'completed'], ['transaction.sdi_status_changed', 'delivered']]);
  });

  it('processing (the resend in flight when the RC comes): delivered; the resend\'s answer and its NS 00002 change nothing', async () => {
    const tx = await createdInvoice();
    let entered!: () => void;
    const inFlight = new Promise<void>((resolve) => { entered = resolve; });
    let release!: () => void;
    attemptHook = () => {
      entered();
      return new Promise<void>((resolve) => { release = resolve; });
    };
    const running = t.worker.runJobNow(tx.job);
    try {
      await inFlight;
      expect((await getTx(t, key, tx.id)).status).toBe('processing');
      const id = sdiId();
      expect((await post(notice('RC', tx.fiscal_id, id))).json()).toEqual({ transaction_id: tx.id, status: 'delivered', changed: true });
    } finally {
      attemptHook = undefined;
      release();
      await running;
    }
    const after = await getTx(t, key, tx.id);
    expect(after.status).toBe('delivered');
    // SdI refuses the copy that was in flight (same file name): recorded, nothing moves.
    const dup = notice('NS', tx.fiscal_id, sdiId()).replace(/<ListaErrori>[\s\S]*<\/ListaErrori>/,
      '<ListaErrori><Errore><Codice>00002</Codice><Descrizione>Nome file duplicato</Descrizione></Errore></ListaErrori>');
    expect((await post(dup)).json()).toEqual({ transaction_id: tx.id, status: 'delivered', changed: false });
    const final = await getTx(t, key, tx.id);
    expect(final.status).toBe('delivered');
    expect((final.response_payload.notifications as { notification: string; duplicate?: boolean }[]).map((n) => [n.notification, n.duplicate]))
      .toEqual([['RC', undefined], ['NS', true]]);
  });

  it('failed_permanent (the retries ran out although SdI had the file): the RC still delivers it', async () => {
    const tx = await createdInvoice();
    await t.db.query(`UPDATE jobs SET max_attempts = 1 WHERE id = $1`, [tx.job]);
    expect(await runWithAnswerLost(tx.job)).toBe(true);
    expect((await getTx(t, key, tx.id)).status).toBe('failed_permanent');
    const rc = await post(notice('RC', tx.fiscal_id, sdiId()));
    expect([rc.statusCode, rc.json()]).toEqual([200, { transaction_id: tx.id, status: 'delivered', changed: true }]);
    // The clock stands still: listed by type.
    expect(await allEventsOf(tx.id)).toEqual([
      ['fiscalization.completed', 'completed'], ['fiscalization.dead_letter', 'dead'], ['transaction.sdi_status_changed', 'delivered'],
    ]);
  });

  it('an NS for a file whose answer was lost rejects it, with its error', async () => {
    const tx = await createdInvoice();
    await runWithAnswerLost(tx.job);
    expect((await post(notice('NS', tx.fiscal_id, sdiId()))).json()).toEqual({ transaction_id: tx.id, status: 'rejected', changed: true });
    await runRetry(tx.id);
    expect(submits.filter((x) => x === tx.id)).toHaveLength(1);
    expect(await getTx(t, key, tx.id)).toMatchObject({ status: 'rejected', response_payload: { submit_error: { error_code: '00305' } } });
  });

  it('a credit note whose retries ran out annulled nothing until SdI delivers it: the original names the credit note that stands, stored, whichever is refused last', async () => {
    const linked = async (id: string) => (await t.db.query<{ cancelled_by_id: string | null }>('SELECT cancelled_by_id FROM transactions WHERE id = $1', [id])).rows[0]!.cancelled_by_id;
    const cancel = (id: string) => t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key, payload: { reason: 'reso' }, headers: AUTHORITY });
    /** A credit note of the invoice, its answer lost until its retries ran out: `failed_permanent`, although SdI has the file. */
    const lostNote = async (id: string) => {
      const res = await cancel(id);
      expect(res.statusCode, res.body).toBe(201);
      const job = (await t.db.query<{ id: string }>(`SELECT id FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [res.json().id])).rows[0]!.id;
      await t.db.query('UPDATE jobs SET max_attempts = 1 WHERE id = $1', [job]);
      expect(await runWithAnswerLost(job)).toBe(true);
      expect((await getTx(t, key, res.json().id)).status).toBe('failed_permanent');
      return res.json() as { id: string; fiscal_id: string };
    };

    // Alone: out of retries, it names none (stored so); SdI delivers it: cancelled, named again.
    const first = await sentInvoice();
    await post(notice('RC', first.fiscal_id, sdiId()));
    const lost = await lostNote(first.id);
    expect(await linked(first.id)).toBeNull();
    expect(await getTx(t, key, first.id)).toMatchObject({ status: 'delivered', cancellation_transaction_id: null });
    expect((await post(notice('RC', lost.fiscal_id, sdiId()))).json()).toEqual({ transaction_id: lost.id, status: 'delivered', changed: true });
    expect(await getTx(t, key, first.id)).toMatchObject({ status: 'cancelled', cancellation_transaction_id: lost.id });

    // A second credit note issued meanwhile (the first one refused, as far as we knew): SdI
    // delivers the first one, then rejects the second. The first one stands: the original,
    // cancelled by it, names it (it named none: the second one, refused last, hid it).
    const second = await sentInvoice();
    await post(notice('RC', second.fiscal_id, sdiId()));
    const early = await lostNote(second.id);
    const late = await cancel(second.id);
    expect(late.statusCode, late.body).toBe(201);
    expect(late.json().idempotency_key).toBe(`cancel:${second.id}:2`);
    await t.worker.drain();
    expect(await getTx(t, key, second.id)).toMatchObject({ status: 'delivered', cancellation_transaction_id: late.json().id });
    expect((await post(notice('RC', early.fiscal_id, sdiId()))).json()).toEqual({ transaction_id: early.id, status: 'delivered', changed: true });
    expect(await getTx(t, key, second.id)).toMatchObject({ status: 'cancelled', cancellation_transaction_id: late.json().id });
    expect((await post(notice('NS', late.json().fiscal_id, sdiId()))).json()).toEqual({ transaction_id: late.json().id, status: 'rejected', changed: true });
    expect(await getTx(t, key, second.id)).toMatchObject({ status: 'cancelled', cancellation_transaction_id: early.id });
    expect(await linked(second.id)).toBe(early.id);
    // The cancel route answers the one that stands.
    const again = await cancel(second.id);
    expect([again.statusCode, again.json().id]).toEqual([200, early.id]);
  });
});

describe('only a file sent is matched, the one sent to SdI first, in its own account when it can be told (F2)', () => {
  it('an invoice never sent is not "delivered"; of two accounts with one partita IVA, the one that sent the file to SdI, not the stub\'s', async () => {
    const piva = freshPartitaIva();
    const a = await t.signup();
    const b = await t.signup();
    const c = await t.signup();
    const [locA, locB, locC] = [await sdiLocation(a.key, piva), await sdiLocation(b.key, piva), await sdiLocation(c.key, piva)];
    const txA = await createdInvoice(a.key, locA);
    const txB = await createdInvoice(b.key, locB);
    // C is a test key on the stub (no X-Svc-Sandbox): its file never reaches SdI.
    const txC = await createdInvoice(c.key, locC, {});
    expect(new Set([txA.fiscal_id, txB.fiscal_id, txC.fiscal_id])).toEqual(new Set([`IT${piva}_00001.xml`]));

    // Nothing of that name was sent yet: no record for the notification.
    const id = sdiId();
    const early = await post(notice('RC', txA.fiscal_id, id));
    expect([early.statusCode, early.json()]).toEqual([404, { error: 'transaction not found' }]);

    // The stub's file is sent first, B's to SdI after it: SdI's notification is B's.
    expect(await t.worker.runJobNow(txC.job)).toBe(true);
    expect(await t.worker.runJobNow(txB.job)).toBe(true);
    expect((await post(notice('RC', txA.fiscal_id, id))).json()).toEqual({ transaction_id: txB.id, status: 'delivered', changed: true });
    const notSent = await getTx(t, a.key, txA.id);
    expect(notSent).toMatchObject({ status: 'pending', fiscal_id_upstream: null, submitted_at: null });
    expect(notSent.response_payload.notifications).toBeUndefined();
    expect((await getTx(t, c.key, txC.id)).response_payload.notifications).toBeUndefined();

    // A's file, once sent, gets its own notification under its own IdentificativoSdI; B's id still finds B.
    expect(await t.worker.runJobNow(txA.job)).toBe(true);
    const idA = sdiId();
    expect((await post(notice('MC', txA.fiscal_id, idA))).json()).toEqual({ transaction_id: txA.id, status: 'delivery_error', changed: true });
    expect((await post(notice('RC', txA.fiscal_id, id))).json()).toEqual({ transaction_id: txB.id, status: 'delivered', changed: false });
    expect((await post(notice('RC', txA.fiscal_id, idA))).json()).toEqual({ transaction_id: txA.id, status: 'delivered', changed: true });
    expect((await getTx(t, c.key, txC.id)).response_payload.notifications).toBeUndefined();
  });
});

describe('outcome events and failure fields (F5), delivery_error (F6), the receiver\'s content type (F12)', () => {
  it('RC: fiscalization.completed beside transaction.sdi_status_changed; NS: the dead letter, submit_error, the translated error_message, completed_at', async () => {
    const ok = await sentInvoice();
    await post(notice('RC', ok.fiscal_id, sdiId()));
    expect(await allEventsOf(ok.id)).toEqual([['fiscalization.completed', 'completed'], ['transaction.sdi_status_changed', 'delivered']]);

    const ko = await sentInvoice();
    await post(notice('NS', ko.fiscal_id, sdiId()));
    expect(await allEventsOf(ko.id)).toEqual([['fiscalization.dead_letter', 'dead'], ['transaction.sdi_status_changed', 'rejected']]);
    const { rows } = await t.db.query<{ data: { last_error: string } }>(
      `SELECT data FROM events WHERE type = 'fiscalization.dead_letter' AND data->>'transaction_id' = $1`, [ko.id]);
    expect(rows[0]!.data.last_error).toMatch(/^00305: /);
    await t.worker.drain(); // the translation
    const rejected = await getTx(t, key, ko.id);
    expect(rejected).toMatchObject({ status: 'rejected', response_payload: { submit_error: { error_code: '00305', raw_message: expect.stringContaining('00423') } } });
    expect(rejected.error_message).toEqual(expect.any(String));
    expect(rejected.error_message).not.toBe('');
    expect(rejected.completed_at).not.toBeNull();
    expect(rejected.response_payload.awaiting_notification).toBeUndefined();
    expect(rejected.response_payload.notifications).toHaveLength(1);
  });

  it('delivery_error (MC: the invoice is issued): completed, cancellable by a credit note; an RC after the MC delivers it', async () => {
    const later = await sentInvoice();
    const id = sdiId();
    expect((await post(notice('MC', later.fiscal_id, id))).json()).toEqual({ transaction_id: later.id, status: 'delivery_error', changed: true });
    const missed = await getTx(t, key, later.id);
    expect(missed.completed_at).not.toBeNull();
    expect((await post(notice('RC', later.fiscal_id, id))).json()).toEqual({ transaction_id: later.id, status: 'delivered', changed: true });
    const delivered = await getTx(t, key, later.id);
    expect(delivered.completed_at).toBe(missed.completed_at);
    expect(await allEventsOf(later.id)).toEqual([
      ['fiscalization.completed', 'completed'], ['transaction.sdi_status_changed', 'delivery_error'], ['transaction.sdi_status_changed', 'delivered'],
    ]);

    const kept = await sentInvoice();
    await post(notice('MC', kept.fiscal_id, sdiId()));
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${kept.id}/cancel`, key, payload: { reason: 'reso' }, headers: AUTHORITY });
    expect(cancel.statusCode, cancel.body).toBe(201);
    const note = cancel.json() as { id: string; fiscal_id: string };
    await t.worker.drain();
    expect((await post(notice('RC', note.fiscal_id, sdiId()))).json()).toEqual({ transaction_id: note.id, status: 'delivered', changed: true });
    expect((await getTx(t, key, kept.id)).status).toBe('cancelled');
  });

  it('the receiver reads XML only: JSON, another type or none is a 415 that says what to send', async () => {
    const expected = { error: 'unsupported content type: send the message as application/xml, text/xml or application/soap+xml' };
    for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'text/plain' }, {}]) {
      const res = await t.request({ method: 'POST', url: '/v1/inbound/sdi', payload: '{"a":1}', headers: { 'x-sdi-secret': SECRET, ...headers } });
      expect([res.statusCode, res.json()], JSON.stringify(headers)).toEqual([415, expected]);
    }
  });
});

describe('the retry-queue entry once SdI has decided (NS, or an RC after the retries ran out)', () => {
  /** The transaction's retry-queue entries as GET /v1/retry-queue shows them. */
  const entriesOf = async (id: string) => ((await t.request({ method: 'GET', url: '/v1/retry-queue?limit=100', key })).json().data as {
    id: string; transaction_id: string; status: string; attempt: number; max_attempts: number; next_retry_at: string | null; last_error: string | null;
  }[]).filter((e) => e.transaction_id === id);
  // The clock stands still: dead letters of one instant are ordered by their ids (UUIDv7, monotonic in the process).
  const deadLetters = async (id: string) => (await t.db.query<{ data: { entry_id: string | null; status: string; attempt: number; max_attempts: number; last_error: string } }>(
    `SELECT data FROM events WHERE type = 'fiscalization.dead_letter' AND data->>'transaction_id' = $1 ORDER BY created_at, id`, [id])).rows.map((r) => r.data);
  const SCARTO = /^00305: /;

  it('an NS for a file sent: its entry is dead with the scarto, as the dead letter that names it says; listed among the dead', async () => {
    const tx = await sentInvoice();
    const [sent] = await entriesOf(tx.id);
    expect(sent).toMatchObject({ status: 'completed', attempt: 1 });
    await post(notice('NS', tx.fiscal_id, sdiId()));
    const [entry] = await entriesOf(tx.id);
    expect(entry).toMatchObject({ id: sent!.id, status: 'dead', attempt: 1, max_attempts: sent!.max_attempts, next_retry_at: null, last_error: expect.stringMatching(SCARTO) });
    expect(await deadLetters(tx.id)).toEqual([expect.objectContaining({
      entry_id: sent!.id, status: 'dead', attempt: 1, max_attempts: sent!.max_attempts, last_error: entry!.last_error,
    })]);
    const dead = (await t.request({ method: 'GET', url: '/v1/retry-queue?status=dead&limit=100', key })).json().data as { id: string }[];
    expect(dead.map((e) => e.id)).toContain(sent!.id);
  });

  it('an NS while a retry is due (the answer lost): the entry dies at once, its retry never runs and the discarded file is not sent again', async () => {
    const tx = await createdInvoice();
    await runWithAnswerLost(tx.job);
    expect(await entriesOf(tx.id)).toEqual([expect.objectContaining({ status: 'failed', next_retry_at: expect.any(String) })]);
    expect((await post(notice('NS', tx.fiscal_id, sdiId()))).json()).toEqual({ transaction_id: tx.id, status: 'rejected', changed: true });
    const dead = { id: tx.job, status: 'dead', attempt: 1, next_retry_at: null, last_error: expect.stringMatching(SCARTO) };
    expect(await entriesOf(tx.id)).toEqual([expect.objectContaining(dead)]);
    // Past the time the retry was due: nothing runs, nothing is sent, the entry stays as it is.
    clock.advance(24 * 3600_000);
    await t.worker.drain();
    expect(submits.filter((x) => x === tx.id)).toHaveLength(1);
    expect(await entriesOf(tx.id)).toEqual([expect.objectContaining(dead)]);
    expect(await getTx(t, key, tx.id)).toMatchObject({ status: 'rejected' });
    expect((await deadLetters(tx.id)).map((d) => d.entry_id)).toEqual([tx.job]);
  });

  it('retries ran out although SdI had the file: an NS gives the entry its real error, an RC completes it (no dead entry for a delivered invoice)', async () => {
    const outOfRetries = async () => {
      const tx = await createdInvoice();
      await t.db.query(`UPDATE jobs SET max_attempts = 1 WHERE id = $1`, [tx.job]);
      await runWithAnswerLost(tx.job);
      expect(await entriesOf(tx.id)).toEqual([expect.objectContaining({ status: 'dead', last_error: expect.stringMatching(/^timeout: /) })]);
      return tx;
    };
    const refused = await outOfRetries();
    await post(notice('NS', refused.fiscal_id, sdiId()));
    expect(await entriesOf(refused.id)).toEqual([expect.objectContaining({ id: refused.job, status: 'dead', last_error: expect.stringMatching(SCARTO) })]);
    expect((await deadLetters(refused.id)).map((d) => [d.entry_id, d.last_error.slice(0, 7)])).toEqual([[refused.job, 'timeout'], [refused.job, '00305: ']]);

    const delivered = await outOfRetries();
    await post(notice('RC', delivered.fiscal_id, sdiId()));
    expect(await getTx(t, key, delivered.id)).toMatchObject({ status: 'delivered' });
    expect(await entriesOf(delivered.id)).toEqual([expect.objectContaining({ id: delivered.job, status: 'completed', next_retry_at: null })]);
    const dead = (await t.request({ method: 'GET', url: '/v1/retry-queue?status=dead&limit=100', key })).json().data as { transaction_id: string }[];
    expect(dead.map((e) => e.transaction_id)).not.toContain(delivered.id);
  });

  /**
   * The resend (attempt 2, the first answer lost) is held inside `submit` until the test lets
   * it answer; the notification is posted meanwhile, then the resend answers as `answer` says
   * (SdI took it: `sent`; or its answer lost too). No sleeps: the interleaving is the test's.
   */
  async function notifiedDuringResend(kind: 'NS' | 'RC', answer: 'sent' | 'lost') {
    const tx = await createdInvoice();
    await runWithAnswerLost(tx.job);
    const { rows } = await t.db.query<{ run_at: Date }>(`SELECT run_at FROM jobs WHERE id = $1`, [tx.job]);
    clock.set(rows[0]!.run_at);
    let entered!: () => void;
    const inFlight = new Promise<void>((resolve) => { entered = resolve; });
    let release!: () => void;
    attemptHook = async () => {
      entered();
      await new Promise<void>((resolve) => { release = resolve; });
      if (answer === 'lost') await answerLost();
    };
    const running = t.worker.runJobNow(tx.job);
    let posted: { statusCode: number; json: () => unknown };
    try {
      await inFlight;
      expect(await entriesOf(tx.id)).toEqual([expect.objectContaining({ status: 'processing', attempt: 2 })]);
      posted = await post(notice(kind, tx.fiscal_id, sdiId()));
    } finally {
      attemptHook = undefined;
      release();
    }
    expect(await running).toBe(true);
    expect([posted.statusCode, posted.json()]).toEqual([200, { transaction_id: tx.id, status: kind === 'NS' ? 'rejected' : 'delivered', changed: true }]);
    return tx;
  }

  it.each(['sent', 'lost'] as const)('an NS while the resend is in flight (its answer %s afterwards): the entry ends dead with the scarto, named by the one dead letter, and nothing runs again', async (answer) => {
    const tx = await notifiedDuringResend('NS', answer);
    const dead = { id: tx.job, status: 'dead', attempt: 2, next_retry_at: null, last_error: expect.stringMatching(SCARTO) };
    expect(await entriesOf(tx.id)).toEqual([expect.objectContaining(dead)]);
    expect(await getTx(t, key, tx.id)).toMatchObject({ status: 'rejected', response_payload: { submit_error: { error_code: '00305' } } });
    const letters = await deadLetters(tx.id);
    expect(letters).toEqual([expect.objectContaining({ entry_id: tx.job, status: 'dead', attempt: 2, last_error: (await entriesOf(tx.id))[0]!.last_error })]);
    // A day later: no retry of the discarded file, the entry as it was.
    clock.advance(24 * 3600_000);
    await t.worker.drain();
    expect(submits.filter((x) => x === tx.id)).toHaveLength(2);
    expect(await entriesOf(tx.id)).toEqual([expect.objectContaining(dead)]);
  });

  it('an RC while the resend is in flight whose answer is then lost: the entry completes (no retry due for a delivered invoice)', async () => {
    const tx = await notifiedDuringResend('RC', 'lost');
    expect(await entriesOf(tx.id)).toEqual([expect.objectContaining({ id: tx.job, status: 'completed', attempt: 2, next_retry_at: null })]);
    expect(await getTx(t, key, tx.id)).toMatchObject({ status: 'delivered' });
    clock.advance(24 * 3600_000);
    await t.worker.drain();
    expect(submits.filter((x) => x === tx.id)).toHaveLength(2);
    expect(await entriesOf(tx.id)).toEqual([expect.objectContaining({ id: tx.job, status: 'completed', attempt: 2 })]);
  });
});
