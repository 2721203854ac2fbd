import crypto from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { jobsRepo } from '../../src/store/repos/jobs-repo.ts';
import { createWorker } from '../../src/jobs/runner.ts';
import { createTranslateErrorHandler } from '../../src/jobs/tasks/translate-error.ts';
import type { Db } from '../../src/store/db.ts';
import { GENERIC_USER_MESSAGE, createTranslator, messageHash } from '../../src/translations/service.ts';
import { defaultAnswer, startFakeOpenAi, type FakeOpenAi } from '../support/fake-openai.ts';
import { locationBodies } from '../support/fixtures.ts';
import { createLocation, createdTx, getTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';
import { ManualClock, openTestDb, startTestApp, type TestApp } from '../support/harness.ts';

/*
 * POST /v1/translations/errors and the translate_error job, end to end, against a real
 * HTTP server speaking the OpenAI Chat Completions shape (test/support/fake-openai.ts).
 * Three apps share one store: one without AI, two with it (two nodes: two in-process
 * single-flight maps, one cache table).
 *
 * On the postgres project every test file shares one database, so messages carry a
 * random part (no cache row of another test is ever hit), and cache rows are counted by
 * that message's hash.
 */
const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
let db: Db;
let fake: FakeOpenAi;
let plain: TestApp;
let withAi: TestApp;
let otherNode: TestApp;
let key: string;
let accountId: string;

const aiConfig = () => ({ url: fake.url, key: fake.key, model: fake.model, timeoutMs: 1000 });

beforeAll(async () => {
  db = await openTestDb();
  fake = await startFakeOpenAi();
  plain = await startTestApp({ db });
  withAi = await startTestApp({ db, config: { translationAi: aiConfig() } });
  otherNode = await startTestApp({ db, config: { translationAi: aiConfig() } });
  ({ key, accountId } = await plain.signup());
});
afterAll(async () => {
  await otherNode?.close();
  await withAi?.close();
  await plain?.close();
  await fake?.close();
  await db?.close();
});
beforeEach(() => fake.reset());

const uniq = () => crypto.randomUUID().slice(0, 8);
const translate = (app: TestApp, payload: unknown, k = key) =>
  app.request({ method: 'POST', url: '/v1/translations/errors', key: k, payload: payload as object });

async function cacheRows(message: string | null): Promise<Array<Record<string, unknown>>> {
  return (await db.query('SELECT * FROM error_translations WHERE message_hash = $1', [messageHash(message)])).rows;
}

describe('POST /v1/translations/errors: the static catalog', () => {
  it.each([
    [
      'VERI*FACTU', { error_code: '1100', country: 'ES', system: 'verifactu', error_message: 'Valor o tipo incorrecto del campo.: NombreRazon' },
      { system: 'verifactu', category: 'validation', severity: 'error', retriable: false, translation: 'Invalid value or type in a field.' },
    ],
    [
      'SII, no system (one entry serves VERI*FACTU and SII)', { error_code: '3000', country: 'ES', error_message: 'Factura duplicada' },
      { system: null, category: 'submission', severity: 'warning', retriable: false },
    ],
    [
      'TicketBAI Bizkaia, no system', { error_code: 'B4_2000003', country: 'es' },
      { system: 'ticketbai', category: 'submission', severity: 'warning', original_message: null },
    ],
    [
      'SDI scarto', { error_code: '00404', country: 'IT', system: 'sdi', error_message: 'Fattura duplicata' },
      { system: 'sdi', category: 'submission', severity: 'warning', retriable: false },
    ],
    [
      'SDI, no system', { error_code: '00423', country: 'IT', error_message: '2.2.1.11 <PrezzoTotale> non calcolato secondo le regole definite nelle specifiche tecniche' },
      { system: 'sdi', category: 'validation', retriable: false },
    ],
    [
      'Italy DC (retried automatically)', { error_code: '0429', country: 'IT', system: 'dc' },
      { system: 'dc', category: 'submission', retriable: true },
    ],
    [
      'Greece myDATA duplicate UID, no system', { error_code: '233', country: 'GR' },
      { system: 'mydata', category: 'submission', severity: 'warning', retriable: false },
    ],
    [
      'Greece myDATA totals', { error_code: '203', country: 'gr', system: 'mydata', error_message: "Gross value doesn't match" },
      { system: 'mydata', category: 'validation', severity: 'error', retriable: false },
    ],
  ])('%s', async (_name, body, expected) => {
    const res = await translate(withAi, body);
    expect(res.statusCode).toBe(200);
    const r = res.json();
    expect(Object.keys(r).sort()).toEqual(
      ['category', 'country', 'error_code', 'original_message', 'retriable', 'severity', 'source', 'system', 'translation', 'user_message'],
    );
    expect(r).toMatchObject({ error_code: body.error_code, country: body.country.toUpperCase(), source: 'static', ...expected });
    expect(r.original_message).toBe((body as { error_message?: string }).error_message ?? null);
    expect(r.translation).not.toBe('');
    expect(r.user_message).not.toBe('');
    expect(fake.requests).toBe(0); // a catalog hit never asks the AI
  });

  it('answers a catalog hit the same without AI configured', async () => {
    const res = await translate(plain, { error_code: '4112', country: 'ES', system: 'verifactu' });
    expect(res.json()).toMatchObject({ category: 'auth', source: 'static', retriable: false });
  });

  it('does not guess between systems when a code means different things', async () => {
    const msg = `Valor del campo ${uniq()}`;
    const r = (await translate(plain, { error_code: '1104', country: 'ES', error_message: msg })).json();
    expect(r).toMatchObject({ category: 'unknown', source: 'static', translation: msg, system: null });
    expect((await translate(plain, { error_code: '1104', country: 'ES', system: 'sii' })).json()).toMatchObject({ source: 'static', category: 'validation', system: 'sii' });
  });
});

describe('POST /v1/translations/errors: input and permissions', () => {
  it.each([
    [{ country: 'ES' }, 'error_code is required'],
    [{ error_code: '   ', country: 'ES' }, 'error_code is required'],
    [{ error_code: '1100' }, 'country is required'],
    [{ error_code: null, country: 'ES' }, 'error_code is required'],
    [{ error_code: '1100', country: null }, 'country is required'],
    [{ error_code: '1100', country: '' }, 'country is required'],
    [{ error_code: '1100', country: 'PT' }, 'country must be ES, IT, FR or GR'],
    [{ error_code: '1100', country: 7 }, 'country must be ES, IT, FR or GR'],
    [{ error_code: 1100, country: 'ES' }, 'error_code must be a string of at most 100 characters'],
    [{ error_code: 'x'.repeat(101), country: 'ES' }, 'error_code must be a string of at most 100 characters'],
    [{ error_code: '1100', country: 'ES', system: 'lroe' }, 'system must be one of ticketbai, verifactu, sii, sdi, dc, nf525, mydata'],
    [{ error_code: '1100', country: 'ES', system: 'sdi' }, 'system must be one of ticketbai, verifactu, sii for country ES'],
    [{ error_code: '1100', country: 'FR', system: 'verifactu' }, 'system must be one of nf525 for country FR'],
    [{ error_code: '1100', country: 'ES', error_message: 5 }, 'error_message must be a string of at most 4000 characters'],
  ])('400 for %o', async (body, message) => {
    const res = await translate(plain, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: message });
  });

  it('needs translations:write: 403 for a restricted key without it, 200 with it, 401 without a key', async () => {
    const reader = (await plain.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'reader', permissions: ['transactions:read'] } })).json().key;
    const denied = await translate(plain, { error_code: '1100', country: 'ES' }, reader);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({ error: 'insufficient permission: translations:write required' });

    const translator = (await plain.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'tr', permissions: ['translations:write'] } })).json().key;
    expect((await translate(plain, { error_code: '1100', country: 'ES' }, translator)).statusCode).toBe(200);

    const anonymous = await plain.request({ method: 'POST', url: '/v1/translations/errors', payload: { error_code: '1100', country: 'ES' } });
    expect(anonymous.statusCode).toBe(401);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await plain.request({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/v1/translations/errors'].post.responses).toHaveProperty('200');
  });
});

describe('POST /v1/translations/errors: unknown codes without AI', () => {
  it('passes the raw message through: category unknown, severity error, not retriable, a generic user message, source static', async () => {
    const msg = `Errore sconosciuto ${uniq()}`;
    const res = await translate(plain, { error_code: '00999', country: 'IT', system: 'sdi', error_message: msg });
    expect(res.json()).toEqual({
      error_code: '00999', country: 'IT', system: 'sdi', original_message: msg,
      translation: msg, category: 'unknown', severity: 'error', retriable: false, user_message: GENERIC_USER_MESSAGE, source: 'static',
    });
    expect(await cacheRows(msg)).toHaveLength(0);
  });

  it('uses the code as the translation when there is no message', async () => {
    const res = await translate(plain, { error_code: 'NF-42', country: 'FR', system: 'nf525' });
    expect(res.json()).toMatchObject({ translation: 'NF-42', original_message: null, category: 'unknown', source: 'static' });
  });
});

describe('POST /v1/translations/errors: unknown codes with AI', () => {
  it('asks the AI once, then answers from the permanent cache (no second AI request, on any node)', async () => {
    const msg = `El campo Foo ${uniq()} es incorrecto.`;
    const body = { error_code: '1999', country: 'ES', system: 'verifactu', error_message: msg };
    const first = await translate(withAi, body);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({
      error_code: '1999', country: 'ES', system: 'verifactu', original_message: msg,
      translation: `EN: ${msg}`, category: 'validation', severity: 'error', retriable: false,
      user_message: 'Fix the invoice (1999) and send it again.', source: 'ai',
    });
    expect(fake.requests).toBe(1);
    expect(fake.received[0]!.authorization).toBe(`Bearer ${fake.key}`);
    expect(fake.received[0]!.body.model).toBe(fake.model);

    expect((await translate(withAi, body)).json()).toEqual(first.json());
    // The same key however it is spelled: country case, code and message whitespace.
    expect((await translate(withAi, { ...body, country: 'es', error_code: ' 1999 ', error_message: ` ${msg} ` })).json().translation).toBe(`EN: ${msg}`);
    // Another node (its own process memory) reads the same table.
    expect((await translate(otherNode, body)).json()).toEqual(first.json());
    expect(fake.requests).toBe(1);

    const rows = await cacheRows(msg);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ country: 'ES', system: 'verifactu', error_code: '1999', original_message: msg, model: fake.model });

    // Another message, or the same message without a system, is another key.
    await translate(withAi, { ...body, error_message: `${msg} (2)` });
    await translate(withAi, { ...body, system: undefined });
    expect(fake.requests).toBe(3);
  });

  it('concurrent identical first requests: one AI call per node, one cache row, one answer for all', async () => {
    const msg = `Concurrent ${uniq()}`;
    const body = { error_code: '00998', country: 'IT', system: 'sdi', error_message: msg };
    let n = 0;
    fake.answer = (input) => ({ ...defaultAnswer(input), translation: `answer #${++n}` });
    fake.delayMs = 150;
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => translate(withAi, body)),
      ...Array.from({ length: 5 }, () => translate(otherNode, body)),
    ]);
    expect(answers.map((a) => a.statusCode)).toEqual(Array(10).fill(200));
    expect(fake.requests).toBe(2); // one per node: the in-process single flight
    const rows = await cacheRows(msg);
    expect(rows).toHaveLength(1);
    // The node that lost the insert race answers with the stored row, like everyone after.
    expect(new Set(answers.map((a) => a.json().translation))).toEqual(new Set([rows[0]!.translation]));
  });

  it.each([
    ['garbage (prose instead of JSON)', (f: FakeOpenAi) => { f.mode = 'garbage'; }],
    ['an HTTP 500', (f: FakeOpenAi) => { f.mode = 'error'; }],
    ['a timeout', (f: FakeOpenAi) => { f.delayMs = 1500; }],
    ['an answer with an invalid category', (f: FakeOpenAi) => { f.answer = (i) => ({ ...defaultAnswer(i), category: 'catastrophic' }); }],
  ])('an AI failure (%s) answers unknown with the raw message, caches nothing, and asks again next time', async (_name, breakIt) => {
    const msg = `Messaggio ${uniq()}`;
    const body = { error_code: '00997', country: 'IT', system: 'sdi', error_message: msg };
    breakIt(fake);
    const res = await translate(withAi, body);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ translation: msg, category: 'unknown', severity: 'error', retriable: false, user_message: GENERIC_USER_MESSAGE, source: 'static' });
    expect(await cacheRows(msg)).toHaveLength(0);

    fake.reset();
    expect((await translate(withAi, body)).json()).toMatchObject({ translation: `EN: ${msg}`, source: 'ai' });
    expect(fake.requests).toBe(1);
    expect(await cacheRows(msg)).toHaveLength(1);
  });
});

describe('the translate_error job', () => {
  // A kind of our own: on the postgres project other test files' workers claim
  // `translate_error` jobs from the shared database (and ours would claim theirs).
  const KIND = `translate_error:test:${uniq()}`;
  const clock = new ManualClock(new Date());
  let locationId: string;

  beforeAll(async () => {
    const res = await plain.request({ method: 'POST', url: '/v1/locations', key, payload: locationBodies['es-verifactu'] });
    expect(res.statusCode).toBe(201);
    locationId = res.json().id;
  });

  /** A failed transaction as the submit task leaves it when an AI translation is pending: error_message null, submit_error set. */
  async function failedTransaction(code: string, rawMessage: string, errorMessage: string | null = null): Promise<string> {
    const id = crypto.randomUUID();
    const now = clock.now();
    await db.query(
      `INSERT INTO transactions (id, account_id, location_id, environment, type, status, amount, currency, country, system,
         idempotency_key, request_hash, request_payload, normalized, response_payload, error_message, created_at, updated_at)
       VALUES ($1, $2, $3, 'test', 'sale', 'failed', 1210, 'EUR', 'ES', 'es-verifactu', $4, 'hash', '{}', '{}', $5, $6, $7, $7)`,
      [id, accountId, locationId, crypto.randomUUID(), JSON.stringify({ submit_error: { error_code: code, raw_message: rawMessage } }), errorMessage, now],
    );
    return id;
  }

  async function enqueue(transactionId: string, code: string, rawMessage: string, maxAttempts = 5) {
    return jobsRepo.enqueue(db, {
      kind: KIND, accountId, transactionId, maxAttempts, runAt: clock.now(),
      payload: { transaction_id: transactionId, country: 'ES', system: 'es-verifactu', error_code: code, raw_message: rawMessage },
    }, clock.now());
  }

  function worker(withAiTranslator: boolean) {
    const translator = createTranslator({ db, clock, log }, withAiTranslator ? aiConfig() : null);
    const handler = createTranslateErrorHandler({ db, clock, log, translator, random: () => 0.5 });
    return createWorker({ db, clock, log, handlers: { [KIND]: handler } });
  }

  const errorMessage = async (id: string) => (await db.query<{ error_message: string | null; updated_at: Date }>('SELECT error_message, updated_at FROM transactions WHERE id = $1', [id])).rows[0]!;

  it('fills error_message from the static catalog (no AI needed)', async () => {
    const tx = await failedTransaction('1100', 'Valor o tipo incorrecto del campo.: NombreRazon');
    const job = await enqueue(tx, '1100', 'Valor o tipo incorrecto del campo.: NombreRazon');
    clock.advance(1000);
    expect(await worker(false).drain()).toBe(1);
    expect(await errorMessage(tx)).toEqual({ error_message: 'Invalid value or type in a field.', updated_at: clock.now() });
    expect((await jobsRepo.get(db, job.id))!.status).toBe('completed');
  });

  it('without AI, fills error_message with the raw adapter message', async () => {
    const raw = `Error desconocido ${uniq()}`;
    const tx = await failedTransaction('1998', raw);
    await enqueue(tx, '1998', raw);
    await worker(false).drain();
    expect((await errorMessage(tx)).error_message).toBe(raw);
    expect(fake.requests).toBe(0);
  });

  it('with AI, fills error_message with the AI translation (and caches it)', async () => {
    const raw = `Error desconocido ${uniq()}`;
    const tx = await failedTransaction('1997', raw);
    await enqueue(tx, '1997', raw);
    await worker(true).drain();
    expect((await errorMessage(tx)).error_message).toBe(`EN: ${raw}`);
    expect(await cacheRows(raw)).toHaveLength(1);

    // The next transaction with the same error: translated from the cache.
    const tx2 = await failedTransaction('1997', raw);
    await enqueue(tx2, '1997', raw);
    await worker(true).drain();
    expect((await errorMessage(tx2)).error_message).toBe(`EN: ${raw}`);
    expect(fake.requests).toBe(1);
  });

  it('retries an AI failure at +30 s, then falls back to the raw message after the last attempt', async () => {
    const raw = `Errore ${uniq()}`;
    const tx = await failedTransaction('1996', raw);
    const job = await enqueue(tx, '1996', raw, 3);
    fake.mode = 'error';
    const w = worker(true);

    await w.drain();
    let row = (await jobsRepo.get(db, job.id))!;
    expect(row).toMatchObject({ status: 'failed', attempt: 1 });
    expect(row.last_error).toMatch(/^AI translation failed: AI endpoint answered HTTP 500/);
    expect(row.run_at.getTime() - clock.now().getTime()).toBe(30_000); // random 0.5: no jitter
    expect((await errorMessage(tx)).error_message).toBeNull(); // still pending
    expect(await w.drain()).toBe(0); // not due yet

    clock.advance(30_000);
    await w.drain();
    row = (await jobsRepo.get(db, job.id))!;
    expect(row).toMatchObject({ status: 'failed', attempt: 2 });
    expect(row.run_at.getTime() - clock.now().getTime()).toBe(60_000);

    clock.advance(60_000);
    await w.drain();
    row = (await jobsRepo.get(db, job.id))!;
    expect(row).toMatchObject({ status: 'dead', attempt: 3 });
    expect(row.last_error).toMatch(/the raw message was kept$/);
    expect((await errorMessage(tx)).error_message).toBe(raw); // never null for good
    expect(fake.requests).toBe(3);
    expect(await cacheRows(raw)).toHaveLength(0);
  });

  it('uses the AI translation when the AI recovers before the last attempt', async () => {
    const raw = `Errore ${uniq()}`;
    const tx = await failedTransaction('1995', raw);
    const job = await enqueue(tx, '1995', raw, 5);
    fake.mode = 'garbage';
    const w = worker(true);
    await w.drain();
    expect((await jobsRepo.get(db, job.id))!.status).toBe('failed');
    fake.mode = 'ok';
    clock.advance(60_000);
    await w.drain();
    expect((await jobsRepo.get(db, job.id))!.status).toBe('completed');
    expect((await errorMessage(tx)).error_message).toBe(`EN: ${raw}`);
  });

  it('leaves a transaction alone when it no longer waits for this error (newer failure, already filled)', async () => {
    const raw = `Errore ${uniq()}`;
    const newer = await failedTransaction('1994', 'a newer failure');
    const filled = await failedTransaction('1993', raw, 'already translated');
    await enqueue(newer, '1993', raw);
    await enqueue(filled, '1993', raw);
    expect(await worker(true).drain()).toBe(2);
    expect((await errorMessage(newer)).error_message).toBeNull();
    expect((await errorMessage(filled)).error_message).toBe('already translated');
    expect(fake.requests).toBe(0); // nothing to translate, nothing asked
  });

  it('ends a job with a malformed payload as dead', async () => {
    const job = await jobsRepo.enqueue(db, { kind: KIND, payload: { country: 'ES' }, maxAttempts: 5, runAt: clock.now() }, clock.now());
    await worker(false).drain();
    expect((await jobsRepo.get(db, job.id))).toMatchObject({ status: 'dead', last_error: 'payload has no transaction_id' });
  });
});

describe('a failed submission\'s error_message (spec "Failed submissions": null only while an AI translation is pending)', () => {
  /** A VERI*FACTU sale the sandbox refuses with `code`, answered inline (its 201 shows the failure). */
  async function refusedInline(app: TestApp, code: string): Promise<Record<string, any>> {
    const loc = await createLocation(app, key, 'es-verifactu');
    const body = saleBody(loc, { ...saleLines['es-verifactu'], metadata: { ...(saleMetadata['es-verifactu'] ?? {}), sandbox_outcome: `reject:${code}` } });
    const tx = await createdTx(app, key, body, { 'x-fiscalization-timeout': '5' });
    expect(tx.status).toBe('failed_permanent');
    return tx;
  }
  const translateJobs = async (id: string) =>
    (await db.query(`SELECT 1 FROM jobs WHERE transaction_id = $1 AND kind = 'translate_error'`, [id])).rows.length;
  const UNKNOWN = '1990';
  const unknownRaw = `AEAT rejected the record with code ${UNKNOWN} (no description is known for this code)`;

  it('without AI, a catalog code: the 201 already carries the English catalog text, no translation job', async () => {
    const tx = await refusedInline(plain, '4102');
    expect(tx.response_payload.submit_error).toEqual({ error_code: '4102', raw_message: expect.any(String) });
    expect(tx.error_message).toBe('The XML does not match the schema: a mandatory field is missing.');
    expect(await translateJobs(tx.id)).toBe(0);
  });

  it('without AI, an unknown code: the 201 already carries the raw adapter message, no translation job', async () => {
    const tx = await refusedInline(plain, UNKNOWN);
    expect(tx.response_payload.submit_error).toEqual({ error_code: UNKNOWN, raw_message: unknownRaw });
    expect(tx.error_message).toBe(unknownRaw);
    expect((await getTx(plain, key, tx.id)).error_message).toBe(unknownRaw);
    expect(await translateJobs(tx.id)).toBe(0);
  });

  it('with AI, a catalog code: the catalog text at once, the AI never asked', async () => {
    const tx = await refusedInline(withAi, '4102');
    expect(tx.error_message).toBe('The XML does not match the schema: a mandatory field is missing.');
    expect(await translateJobs(tx.id)).toBe(0);
    expect(fake.requests).toBe(0);
  });

  it('with AI, an unknown code: null at first (translation pending), then the AI translation', async () => {
    const tx = await refusedInline(withAi, UNKNOWN);
    expect(tx.error_message).toBeNull();
    expect(await translateJobs(tx.id)).toBe(1);
    expect(fake.requests).toBe(0);
    await withAi.worker.drain(); // the translate_error job
    expect((await getTx(withAi, key, tx.id)).error_message).toBe(`EN: ${unknownRaw}`);
    expect(fake.requests).toBe(1);
  });
});
