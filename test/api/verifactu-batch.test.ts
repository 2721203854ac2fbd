import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { createWorker } from '../../src/jobs/runner.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import type { RateLimiter } from '../../src/ratelimit/limiter.ts';
import { startFakeAeatVerifactu, soapBodyContent, type FakeAeatVerifactu } from '../support/fake-aeat-verifactu.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { freshNif, uploadSpainCertificate } from '../support/spain.ts';
import { createTx, getTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, xsdValidate } from '../support/xml-tools.ts';

/*
 * VERI*FACTU sends a chain's queued records in one request (jobs/tasks/submit.ts,
 * store/repos/jobs-repo.ts adoptFollowers): the first runnable submit job of an issuer's chain takes
 * the waiting ones after it along, up to 1,000 records per RegFactuSistemaFacturacion.
 * Against the fake AEAT (mutual TLS, every request validated against SuministroLR.xsd, the
 * issuer's chain checked record by record, one RespuestaLinea per record).
 *
 * Each scenario has its own account and issuer NIF (the fake keeps books per NIF).
 */

let t: TestApp;
let clock: ManualClock;
let aeat: FakeAeatVerifactu;

beforeAll(async () => {
  aeat = await startFakeAeatVerifactu();
  clock = new ManualClock(new Date());
  // Hundreds of creates per test key: beyond the sandbox bucket (burst 200).
  const inner = createMemoryLimiter();
  const unlimited: RateLimiter = { take: (k, _spec, now) => inner.take(k, { requestsPerMinute: 1e9, burst: 1e9 }, now), close: () => inner.close() };
  t = await startTestApp({
    clock,
    limiter: unlimited,
    random: () => 0.5, // no jitter: retry times are exact
    config: { authorityBaseUrls: { 'es-verifactu:test': aeat.url }, authorityCa: aeat.caPem },
  });
});
afterAll(async () => {
  await t?.close();
  await aeat?.close();
});
beforeEach(() => {
  aeat.waitSeconds = 0;
  aeat.behave({ kind: 'normal' });
  aeat.refuseRecord = undefined;
  aeat.faultRequest = undefined;
});

const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;

interface Scenario {
  key: string;
  nif: string;
  loc: string;
}

async function scenario(): Promise<Scenario> {
  const { key } = await t.signup();
  const nif = freshNif();
  const cert = await uploadSpainCertificate(t, key, nif);
  const res = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: {
      name: `Tienda ${nif}`, country: 'ES', address: 'Calle Mayor 1', tax_id: nif,
      country_config: { system: 'verifactu', legal_name: 'Ejemplo Madrid SL', software_nif: 'B12345674', certificate_id: cert.certificateId },
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { key, nif, loc: res.json().id };
}

/** Creates `n` sales one after the other (chain order = creation order); returns their ids. */
async function createSales(s: Scenario, n: number, headers: Record<string, string> = AUTHORITY): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await createTx(t, s.key, saleBody(s.loc, { timestamp: clock.now().toISOString() }), headers);
    expect(res.statusCode, res.body).toBe(201);
    ids.push(res.json().id);
  }
  return ids;
}

interface JobState {
  status: string;
  attempt: number;
  run_at: Date;
}

/** The submit jobs of these transactions, in the same order. */
async function jobsOf(ids: readonly string[]): Promise<JobState[]> {
  const { rows } = await t.db.query<JobState & { transaction_id: string }>(
    `SELECT transaction_id, status, attempt, run_at FROM jobs WHERE kind = 'submit' AND transaction_id = ANY($1::uuid[])`, [ids]);
  const by = new Map(rows.map((r) => [r.transaction_id, r]));
  return ids.map((id) => {
    const r = by.get(id)!;
    return { status: r.status, attempt: r.attempt, run_at: r.run_at };
  });
}

const statuses = async (s: Scenario, ids: readonly string[]) => Promise.all(ids.map(async (id) => (await getTx(t, s.key, id)).status as string));

/** Runs the queue; returns the requests AEAT processed meanwhile (records per request). */
async function drain(): Promise<string[][]> {
  const before = aeat.submissions.length;
  await t.worker.drain();
  return aeat.submissions.slice(before).map((x) => x.records);
}

const altas = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `Alta A-${from + i}`);

describe('VERI*FACTU: a chain\'s queued records travel in one request', () => {
  it('250 records created while AEAT holds the issuer (TiempoEsperaEnvio): after the wait ONE request carries them all, in chain order, each with its CSV', async () => {
    const s = await scenario();
    aeat.waitSeconds = 60;
    const [first] = await createSales(s, 1);
    expect(await drain()).toEqual([['Alta A-1']]);
    expect((await getTx(t, s.key, first!)).status).toBe('success');

    const ids = await createSales(s, 250);
    // AEAT asked for 60 s: nothing goes; the batch's head is deferred (not an attempt) and the
    // jobs it had adopted are back in the queue, unjudged.
    expect(await drain()).toEqual([]);
    const held = await jobsOf(ids);
    expect(held[0]).toMatchObject({ status: 'pending', attempt: 0 });
    expect(held.slice(1).every((j) => j.status === 'waiting' && j.attempt === 0)).toBe(true);
    expect(new Set(await statuses(s, ids))).toEqual(new Set(['pending']));

    clock.set(held[0]!.run_at);
    const requestsBefore = aeat.requests.length;
    expect(await drain()).toEqual([altas(2, 251)]);
    expect(aeat.requests.length - requestsBefore).toBe(1);

    // The request is one RegFactuSistemaFacturacion with 250 RegistroFactura, schema-valid.
    const body = soapBodyContent(aeat.requests.at(-1)!.body.toString('utf8'))!;
    expect(body.match(/<sfLR:RegistroFactura>/g)).toHaveLength(250);
    if (HAVE_SCHEMAS) expect(xsdValidate(body, 'es/verifactu/SuministroLR.xsd').ok).toBe(true);

    const csv = aeat.submissions.at(-1)!.csv!;
    expect(csv).toMatch(/^FAKECSV\d{9}$/);
    for (const id of ids) {
      const tx = await getTx(t, s.key, id);
      expect(tx).toMatchObject({ status: 'success', fiscal_id: csv });
      expect(tx.response_payload.authority).toMatchObject({ EstadoEnvio: 'Correcto', EstadoRegistro: 'Correcto', CSV: csv });
    }
    expect((await jobsOf(ids)).every((j) => j.status === 'completed' && j.attempt === 1)).toBe(true);
    expect(aeat.held(s.nif).map((h) => h.id.NumSerieFactura)).toEqual(Array.from({ length: 251 }, (_, i) => `A-${i + 1}`));
    // Every record reported its completion.
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE type = 'fiscalization.completed' AND data->>'transaction_id' = ANY($1::text[])`, [ids]);
    expect(rows[0]!.n).toBe(250);
  }, 120_000);

  it('one record of a batch refused with a non-retriable code: that one failed_permanent (dead letter), the others success', async () => {
    const s = await scenario();
    const ids = await createSales(s, 5);
    aeat.refuseRecord = (r) => (r.NumSerieFactura === 'A-5' ? { code: '1104', description: 'Valor del campo NumSerieFactura incorrecto.' } : undefined);
    expect(await drain()).toEqual([altas(1, 5)]);
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'success', 'success', 'failed_permanent']);
    const refused = await getTx(t, s.key, ids[4]!);
    expect(refused.response_payload.submit_error).toEqual({ error_code: '1104', raw_message: 'Invalid NumSerieFactura (invoice series and number) value.' });
    expect((await jobsOf(ids)).map((j) => [j.status, j.attempt])).toEqual([['completed', 1], ['completed', 1], ['completed', 1], ['completed', 1], ['dead', 1]]);
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events WHERE type = 'fiscalization.dead_letter' AND data->>'transaction_id' = $1`, [ids[4]]);
    expect(rows[0]!.n).toBe(1);
  });

  it('a record refused in the middle: the records chained after it cannot be registered either (AEAT 1180), as when sent one by one', async () => {
    const s = await scenario();
    const ids = await createSales(s, 4);
    aeat.refuseRecord = (r) => (r.NumSerieFactura === 'A-2' ? { code: '1104' } : undefined);
    expect(await drain()).toEqual([altas(1, 4)]);
    expect(await statuses(s, ids)).toEqual(['success', 'failed_permanent', 'failed_permanent', 'failed_permanent']);
    expect((await getTx(t, s.key, ids[2]!)).response_payload.submit_error.error_code).toBe('1180');
  });

  it('ordering: a record that failed retriably inside a batch is retried before anything after it starts; then they go together', async () => {
    const s = await scenario();
    const ids = await createSales(s, 5);
    // 1129: an AEAT technical error on that record alone (retriable).
    aeat.refuseRecord = (r) => (r.NumSerieFactura === 'A-3' ? { code: '1129' } : undefined);
    expect(await drain()).toEqual([altas(1, 5)]);
    aeat.refuseRecord = undefined;
    // registered; A-3 failed, to be retried; A-4, A-5 (which AEAT refused for the
    // missing A-3) are back in the queue unjudged: no error, attempt not counted.
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'failed', 'pending', 'pending']);
    const jobs = await jobsOf(ids);
    expect(jobs.map((j) => [j.status, j.attempt])).toEqual([['completed', 1], ['completed', 1], ['failed', 1], ['waiting', 0], ['waiting', 0]]);
    for (const id of ids.slice(3)) {
      const tx = await getTx(t, s.key, id);
      expect(tx.response_payload.submit_error).toBeUndefined();
      expect(tx.error_message).toBeNull();
    }
    // Nothing overtakes A-3 while it waits for its retry (2 s).
    clock.advance(1000);
    expect(await drain()).toEqual([]);
    expect(jobs[2]!.run_at.getTime() - clock.now().getTime()).toBe(1000);
    clock.set(jobs[2]!.run_at);
    expect(await drain()).toEqual([altas(3, 5)]);
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'success', 'success', 'success']);
    expect((await jobsOf(ids)).map((j) => [j.status, j.attempt])).toEqual([['completed', 1], ['completed', 1], ['completed', 2], ['completed', 1], ['completed', 1]]);
    expect(aeat.held(s.nif).map((h) => h.id.NumSerieFactura)).toEqual(['A-1', 'A-2', 'A-3', 'A-4', 'A-5']);
  });

  it('a transport failure of a batch (HTTP 503): the head is retried as a lone record would be; the others wait, their attempts not counted', async () => {
    const s = await scenario();
    const ids = await createSales(s, 5);
    aeat.behave({ kind: 'unavailable' });
    const before = aeat.requests.length;
    await t.worker.drain();
    expect(aeat.requests.length - before).toBe(1);
    expect(await statuses(s, ids)).toEqual(['failed', 'pending', 'pending', 'pending', 'pending']);
    expect((await getTx(t, s.key, ids[0]!)).response_payload.submit_error).toMatchObject({ error_code: 'http_5xx' });
    const jobs = await jobsOf(ids);
    expect(jobs.map((j) => [j.status, j.attempt])).toEqual([['failed', 1], ['waiting', 0], ['waiting', 0], ['waiting', 0], ['waiting', 0]]);

    aeat.behave({ kind: 'normal' });
    expect(await drain()).toEqual([]); // not before the retry time
    clock.set(jobs[0]!.run_at);
    expect(await drain()).toEqual([altas(1, 5)]);
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'success', 'success', 'success']);
    expect((await jobsOf(ids)).map((j) => j.attempt)).toEqual([2, 1, 1, 1, 1]);
  });

  it('AEAT limiting the rate (HTTP 429) answers for the whole request: the head waits Retry-After, the others wait for it, unjudged', async () => {
    const s = await scenario();
    const ids = await createSales(s, 3);
    aeat.behave({ kind: 'rateLimited', retryAfterSeconds: 30 });
    await t.worker.drain();
    const jobs = await jobsOf(ids);
    expect(jobs.map((j) => [j.status, j.attempt])).toEqual([['failed', 1], ['waiting', 0], ['waiting', 0]]);
    expect(jobs[0]!.run_at.getTime() - clock.now().getTime()).toBe(30_000);
    expect(await statuses(s, ids)).toEqual(['failed', 'pending', 'pending']);
    aeat.behave({ kind: 'normal' });
    clock.set(jobs[0]!.run_at);
    expect(await drain()).toEqual([altas(1, 3)]);
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'success']);
  });

  it('a whole-request refusal (SOAP Fault) blames no record: the head is sent again alone; the record that breaks the message ends alone, failed_permanent', async () => {
    const s = await scenario();
    const ids = await createSales(s, 3);
    // A-3 makes any request that carries it invalid.
    aeat.faultRequest = (records) => (records.includes('Alta A-3') ? '4102' : undefined);
    const before = aeat.requests.length;
    expect(await drain()).toEqual([['Alta A-1'], ['Alta A-2']]);
    expect(aeat.requests.length - before).toBe(5); // [1,2,3] fault, [1], [2,3] fault, [2], [3] fault
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'failed_permanent']);
    expect((await getTx(t, s.key, ids[2]!)).response_payload.submit_error).toMatchObject({ error_code: '4102' });
    expect((await jobsOf(ids)).map((j) => [j.status, j.attempt])).toEqual([['completed', 1], ['completed', 1], ['dead', 1]]);
  });

  it('a batch never mixes sandbox modes: a stub record in the chain ends the batch before it', async () => {
    const s = await scenario();
    const a = await createSales(s, 2);
    const b = await createSales(s, 1, {});
    const c = await createSales(s, 2);
    const ids = [...a, ...b, ...c];
    await t.worker.runOnce();
    // The first round: the head and the next authority record, in one request; the stub record waits its turn.
    expect(aeat.submissions.at(-1)!.records).toEqual(['Alta A-1', 'Alta A-2']);
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'pending', 'pending', 'pending']);
    await t.worker.drain();
    // The stub record was answered in-process, alone; the last two went together (and AEAT,
    // which never saw A-3, refuses their chain link: one chain should not mix the modes).
    expect((await getTx(t, s.key, b[0]!))).toMatchObject({ status: 'success', response_payload: { authority: { sandbox: true } } });
    expect(aeat.submissions.at(-1)!.records).toEqual(['Alta A-4', 'Alta A-5']);
    expect(aeat.submissions.filter((x) => x.nif === s.nif).map((x) => x.records.length)).toEqual([2, 2]);
  });

  it('inline creates arriving together on one chain: the first one\'s run takes the others along, and each create still answers its own final status', async () => {
    const s = await scenario();
    const before = aeat.submissions.length;
    const answers = await Promise.all(Array.from({ length: 12 }, () =>
      createTx(t, s.key, saleBody(s.loc, { timestamp: clock.now().toISOString() }), { ...AUTHORITY, 'x-fiscalization-timeout': '10' })));
    for (const res of answers) expect(res.statusCode, res.body).toBe(201);
    // Every create waited for its record's outcome, whoever's request carried it.
    expect(answers.map((res) => res.json().status)).toEqual(Array.from({ length: 12 }, () => 'success'));
    const sent = aeat.submissions.slice(before).filter((x) => x.nif === s.nif);
    expect(sent.flatMap((x) => x.records)).toEqual(altas(1, 12)); // chain order, each once
    expect(sent.length).toBeLessThan(12); // at least one request carried several records
    // Each answer carries the CSV of the request that carried its record.
    const perCsv = new Map<string, number>();
    for (const res of answers) perCsv.set(res.json().fiscal_id, (perCsv.get(res.json().fiscal_id) ?? 0) + 1);
    expect([...perCsv.entries()].sort()).toEqual(sent.map((x) => [x.csv!, x.records.length] as [string, number]).sort());
  });

  it('a worker that dies mid-batch: after its lease the next worker takes the head and the adopted jobs over, one request, nothing registered twice', async () => {
    const s = await scenario();
    const ids = await createSales(s, 5);
    aeat.behave({ kind: 'hang' });
    const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
    const doomed = createWorker({ db: t.db, clock, log, handlers: { submit: t.rt.handlers.submit! }, workerId: 'doomed-worker', leaseMs: 60_000 });
    const before = aeat.requests.length;
    const running = doomed.runOnce();
    for (let i = 0; i < 200 && aeat.requests.length === before; i++) await new Promise((r) => setTimeout(r, 25));
    expect(aeat.requests.length - before).toBe(1); // its request is on the wire, unanswered

    const { rows } = await t.db.query<{ status: string; locked_by: string }>(
      `SELECT status, locked_by FROM jobs WHERE kind = 'submit' AND transaction_id = ANY($1::uuid[])`, [ids]);
    expect(rows.every((r) => r.status === 'processing' && r.locked_by === 'doomed-worker')).toBe(true);
    // Within the lease nobody touches the batch (neither its head nor its adopted jobs).
    expect(await t.worker.drain()).toBe(0);

    // The worker is gone: its lease runs out; another worker completes the whole batch.
    aeat.behave({ kind: 'normal' });
    clock.advance(61_000);
    expect(await drain()).toEqual([altas(1, 5)]);
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'success', 'success', 'success']);
    // Taking a job over counts as an attempt (DECISIONS: a reclaimed lease is one), for the adopted jobs too.
    expect((await jobsOf(ids)).map((j) => [j.status, j.attempt])).toEqual(Array.from({ length: 5 }, () => ['completed', 2]));

    // The dead worker's request finally fails; its late result is discarded (lease lost).
    aeat.releaseHung();
    await running;
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'success', 'success', 'success']);
    expect(aeat.held(s.nif).map((h) => h.id.NumSerieFactura)).toEqual(['A-1', 'A-2', 'A-3', 'A-4', 'A-5']);
    expect(aeat.submissions.filter((x) => x.nif === s.nif)).toHaveLength(1);
  });
});

describe('VERI*FACTU stub (sandbox): queued records go in one batch', () => {
  it('five queued records are all settled by the first job\'s run', async () => {
    const { key } = await t.signup();
    const nif = freshNif();
    const res = await t.request({
      method: 'POST', url: '/v1/locations', key,
      payload: { name: 'Stub', country: 'ES', tax_id: nif, country_config: { system: 'verifactu', legal_name: 'Stub SL', software_nif: 'B12345674' } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const s: Scenario = { key, nif, loc: res.json().id };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await createTx(t, key, saleBody(s.loc, { metadata: i === 3 ? { sandbox_outcome: 'reject:1104' } : {} }));
      ids.push(r.json().id);
    }
    expect((await jobsOf(ids)).map((j) => j.status)).toEqual(['pending', 'waiting', 'waiting', 'waiting', 'waiting']);
    // Only the first job is runnable; one run settles the five (one per record would take five rounds).
    await t.worker.runOnce();
    expect(await statuses(s, ids)).toEqual(['success', 'success', 'success', 'failed_permanent', 'success']);
    expect((await jobsOf(ids)).map((j) => [j.status, j.attempt])).toEqual([['completed', 1], ['completed', 1], ['completed', 1], ['dead', 1], ['completed', 1]]);
    // Each record keeps its own deterministic CSV.
    const csvs = await Promise.all(ids.map(async (id) => (await getTx(t, key, id)).fiscal_id));
    expect(new Set(csvs.filter((c) => c !== null)).size).toBe(4);
    expect(aeat.submissions.some((x) => x.nif === nif)).toBe(false);
  });
});
