import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { closeAuthorityConnections } from '../../src/countries/shared/authority-http.ts';
import { corrispettiviRepo } from '../../src/store/repos/corrispettivi-repo.ts';
import { CORRISPETTIVI_XSD, MESSAGGI_XSD, esitoOperazione, startFakeAdeCorrispettivi, type CorrispettiviRoute, type FakeAde } from '../support/fake-ade.ts';
import { IT_PIVA, configs } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm, type GeneratedCert } from '../support/p12.ts';
import { createLocation, createTx } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../support/xml-tools.ts';

/*
 * Italy Documento Commerciale daily takings (`italy/corrispettivi`) through the API: DC
 * sales, a return and a cancellation made on a fixed clock, then POST
 * /v1/admin/process-pending the next day sends the day's signed DatiCorrispettivi to the
 * fake AdE (real HTTPS, client certificate required, XSD and signature checked), and the
 * inspector file GET /v1/locations/{id}/corrispettivi?date= serves it.
 *
 * Authority mode: the day's documents themselves are answered by the stub (this fake
 * serves only the daily file; test/api/dc-authority.test.ts sends single documents), then
 * marked `sandbox_mode = 'authority'` in the store, which is what `X-Svc-Sandbox:
 * authority` leaves on them; a day whose transactions are all stub is answered by the
 * stub without any request.
 */

const DAY = '2026-03-02';
const START = '2026-03-02T08:00:00.000Z'; // 09:00 in Rome
const NEXT_NIGHT = '2026-03-03T01:00:00.000Z'; // 02:00 in Rome: the 2nd is closed
const PASSWORD = 'pw-sigillo';

let t: TestApp;
let clock: ManualClock;
let ade: FakeAde;
let route: CorrispettiviRoute;

beforeAll(async () => {
  ({ ade, corrispettivi: route } = await startFakeAdeCorrispettivi());
  clock = new ManualClock(START);
  t = await startTestApp({ clock, config: { authorityBaseUrls: { 'it-dc:test': ade.url }, authorityCa: ade.caPem } });
});
afterAll(async () => {
  await t?.close();
  await ade?.close();
  await closeAuthorityConnections();
});

interface Scenario {
  key: string;
  accountId: string;
  loc: string;
  cert: GeneratedCert;
  matricola: string;
}

let registers = 0;
async function scenario(o: { upload?: boolean } = {}): Promise<Scenario> {
  const { key, accountId } = await t.signup();
  const cert = generateCert({ subject: `/C=IT/serialNumber=IT${IT_PIVA}/CN=Sigillo Esempio Srl`, days: 3650 });
  const sealId = `seal-${crypto.randomUUID().slice(0, 8)}`;
  if (o.upload !== false) {
    const { payload, headers } = uploadForm({ certificateId: sealId, password: PASSWORD, file: exportP12(cert, PASSWORD) });
    const up = await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
    expect(up.statusCode, up.body).toBe(201);
  }
  const matricola = `${String(++registers).padStart(2, '0')}CD-${crypto.randomInt(100000, 999999)}`;
  const res = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { name: 'Bar Milano', country: 'IT', tax_id: IT_PIVA, country_config: { ...configs.dc, pem_matricola: matricola, seal_certificate_id: sealId } },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { key, accountId, loc: res.json().id, cert, matricola };
}

const line = (description: string, quantity: number, unit: number, rate: number, natura?: string) => {
  const tax = Math.round((quantity * unit * rate) / 100);
  return { description, quantity, unit_price: unit, tax_rate: rate, tax_amount: tax, total_amount: quantity * unit + tax, ...(natura ? { natura } : {}) };
};

async function tx(s: Scenario, type: 'sale' | 'refund', items: ReturnType<typeof line>[], metadata: Record<string, unknown>, payment: 'cash' | 'card' = 'cash') {
  const pretax = items.reduce((n, l) => n + l.quantity * l.unit_price, 0);
  const tax = items.reduce((n, l) => n + l.tax_amount, 0);
  const res = await createTx(t, s.key, {
    type, location_id: s.loc, timestamp: clock.now().toISOString(), currency: 'EUR', payment_method: payment,
    items, pretax_amount: pretax, tax_amount: tax, total_amount: pretax + tax, metadata,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; status: string };
}

/** The day of the golden file, through the API: 22 % and 10 %, an N4 line, a return, a cancellation, vouchers. */
async function makeDay(s: Scenario, o: { authority?: boolean } = {}) {
  clock.set(START);
  await tx(s, 'sale', [line('Pizza', 2, 800, 10), line('Vino', 1, 1500, 22)], {});
  clock.advance(3_600_000);
  await tx(s, 'sale', [line('Libro', 1, 1200, 0, 'N4'), line('Gadget', 1, 1000, 22)], { electronic_amount: 1920, ticket_amount: 500, ticket_count: 2 }, 'card');
  clock.advance(3_600_000);
  await tx(s, 'refund', [line('Vino', 1, 1500, 22)], { is_return: true, original_matricola: s.matricola, original_date: DAY, original_number: '0001-0001' });
  clock.advance(3_600_000);
  const sale = await tx(s, 'sale', [line('Pizza', 1, 800, 10)], {});
  // Sent, then its result polled a second later (the stub): a document is cancellable once AdE holds it.
  await t.worker.drain();
  clock.advance(1000);
  await t.worker.drain();
  const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${sale.id}/cancel`, key: s.key });
  expect(cancel.statusCode, cancel.body).toBe(201);
  await t.worker.drain();
  if (o.authority) await t.db.query(`UPDATE transactions SET sandbox_mode = 'authority' WHERE location_id = $1`, [s.loc]);
}

async function processPending(s: Scenario) {
  const res = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key: s.key });
  const result = (res.json().results as Array<Record<string, any>>).find((r) => r.processor === 'italy/corrispettivi');
  return { status: res.statusCode, result: result! };
}

const stored = (s: Scenario) => corrispettiviRepo.get(t.db, { locationId: s.loc, environment: 'test', matricola: s.matricola, day: DAY });
const sentFor = (s: Scenario) => route.received.filter((r) => r.doc.Trasmissione?.Dispositivo?.IdDispositivo === s.matricola);
const inspect = (s: Scenario, query: string, key = s.key) => t.request({ method: 'GET', url: `/v1/locations/${s.loc}/corrispettivi${query}`, key });

describe('italy/corrispettivi against the fake AdE', () => {
  it('the closed day goes to AdE over mutual TLS: schema-valid, sealed by the location certificate, the right totals; accepted with its IdOperazione', async () => {
    const s = await scenario();
    await makeDay(s, { authority: true });

    // Still the 2nd in Rome: nothing to send yet.
    clock.set('2026-03-02T22:59:00.000Z');
    const early = await processPending(s);
    expect(early.result).toMatchObject({ batches_created: 0, accepted: 0 });
    expect(sentFor(s)).toHaveLength(0);

    clock.set(NEXT_NIGHT);
    const { status, result } = await processPending(s);
    expect(status).toBe(200);
    expect(result).toMatchObject({ processor: 'italy/corrispettivi', batches_created: 1, accepted: 1, rejected: 0, failed: 0 });
    const [got] = sentFor(s);
    expect(got).toBeDefined();
    if (HAVE_SCHEMAS) expect(got!.schemaValid, got!.schemaOutput).toBe(true);
    else console.warn(`corrispettivi: ${SCHEMAS_MISSING_MESSAGE}`);
    expect(got!.signatureValid, got!.signatureOutput).toBe(true);
    expect(got!.signedByCaller).toBe(true);
    const req = ade.requests.find((r) => r.body.toString('utf8') === got!.xml)!;
    expect(req.clientCert.fingerprint256).toBe(new crypto.X509Certificate(s.cert.certPem).fingerprint256);

    const doc = got!.doc;
    expect(doc['@_simulazione']).toBe('true');
    expect(doc.Trasmissione).toEqual({ Progressivo: '1', Formato: 'COR10', Dispositivo: { Tipo: 'MC', IdDispositivo: s.matricola } });
    expect(doc.DataOraRilevazione).toBe('2026-03-02T23:59:59+01:00');
    expect(doc.DatiRT.Riepilogo).toEqual([
      { IVA: { AliquotaIVA: '22.00', Imposta: '5.50' }, Ammontare: '25.00', TotaleAmmontareResi: '18.30' },
      { IVA: { AliquotaIVA: '10.00', Imposta: '2.40' }, Ammontare: '24.00', TotaleAmmontareAnnulli: '8.80' },
      { Natura: 'N4', Ammontare: '12.00' },
    ]);
    expect(doc.DatiRT.Totali).toEqual({
      NumeroDocCommerciali: '5', PagatoContanti: '44.70', PagatoElettronico: '19.20', Ticket: { PagatoTicket: '5.00', NumeroTicket: '2' },
    });

    const row = await stored(s);
    expect(row).toMatchObject({ status: 'accepted', attempts: 1, id_operazione: got!.answer.idOperazione, mode: 'authority', progressivo: 1, documents: 5, code: null });
    expect(row!.xml).toBe(got!.xml);

    // Accepted: a later run sends nothing.
    clock.advance(86_400_000);
    const again = await processPending(s);
    expect(again.result).toMatchObject({ batches_created: 0, accepted: 0 });
    expect(sentFor(s)).toHaveLength(1);

    // The inspector gets the stored file, byte for byte.
    const file = await inspect(s, `?date=${DAY}`);
    expect(file.statusCode, file.body).toBe(200);
    expect(file.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(file.headers['x-corrispettivi-status']).toBe('accepted');
    expect(file.headers['x-corrispettivi-id-operazione']).toBe(row!.id_operazione);
    expect(file.body).toBe(row!.xml);
  });

  it('the fake answers EsitoOperazione as the schema defines it', () => {
    if (!HAVE_SCHEMAS) return console.warn(`corrispettivi: ${SCHEMAS_MISSING_MESSAGE}`);
    for (const x of [esitoOperazione('123'), esitoOperazione('124', { codice: '00200', descrizione: 'Dispositivo non attivo' })]) {
      const r = xsdValidate(x, MESSAGGI_XSD);
      expect(r.ok, r.output).toBe(true);
    }
  });

  it.each([
    ['reject-00200', '0200', '00200'],
    ['reject-00000', '0100', '00000'],
    ['forbidden', '0403', 'HTTP 403'],
  ] as const)('%s: rejected (%s), AdE code kept, not retried', async (mode, code, authorityCode) => {
    const s = await scenario();
    await makeDay(s, { authority: true });
    clock.set(NEXT_NIGHT);
    route.setMode(mode);
    try {
      const { status, result } = await processPending(s);
      expect(status).toBe(200); // 207 is for a processor that failed, not for records AdE refused (as spain/lroe)
      expect(result).toMatchObject({ batches_created: 1, accepted: 0, rejected: 1, failed: 0, status: 'completed' });
      expect(result.errors).toEqual([expect.objectContaining({ code, kind: 'corrispettivi', records: 1 })]);
    } finally {
      route.setMode('normal');
    }
    const row = await stored(s);
    expect(row).toMatchObject({ status: 'rejected', code, authority_code: authorityCode, attempts: 1, next_attempt_at: null });
    clock.advance(2 * 86_400_000);
    expect((await processPending(s)).result).toMatchObject({ batches_created: 0 });
    expect(sentFor(s)).toHaveLength(1);
  });

  it.each([
    ['rate-limit', '0429', 120_000],
    ['server-error', '0500', 60_000],
  ] as const)('%s: retried (%s) with backoff, then accepted once AdE answers', async (mode, code, waitMs) => {
    const s = await scenario();
    await makeDay(s, { authority: true });
    clock.set(NEXT_NIGHT);
    route.setMode(mode);
    try {
      const { status, result } = await processPending(s);
      expect(status).toBe(200); // 207 is for a processor that failed, not for records AdE refused (as spain/lroe)
      expect(result).toMatchObject({ batches_created: 1, batches_retried: 1, accepted: 0, rejected: 0, failed: 1 });
      expect(result.errors[0]).toMatchObject({ code });
    } finally {
      route.setMode('normal');
    }
    const row = await stored(s);
    expect(row).toMatchObject({ status: 'pending', code, attempts: 1 });
    expect(row!.next_attempt_at!.getTime()).toBe(new Date(NEXT_NIGHT).getTime() + waitMs);

    // Before the next attempt is due nothing is sent.
    clock.set(new Date(row!.next_attempt_at!.getTime() - 1000));
    expect((await processPending(s)).result).toMatchObject({ batches_created: 0 });
    clock.set(row!.next_attempt_at!);
    expect((await processPending(s)).result).toMatchObject({ batches_created: 1, accepted: 1 });
    const done = await stored(s);
    expect(done).toMatchObject({ status: 'accepted', attempts: 2, code: null });
    // The same file both times.
    expect(sentFor(s).map((r) => r.xml)).toEqual([row!.xml, row!.xml]);
  });

  it.each(['reset', 'unavailable'] as const)('outage (%s): 0500, retried; recovered on the next due run', async (outage) => {
    const s = await scenario();
    await makeDay(s, { authority: true });
    clock.set(NEXT_NIGHT);
    ade.setOutage(outage);
    try {
      const { result } = await processPending(s);
      expect(result).toMatchObject({ batches_created: 1, failed: 1, accepted: 0 });
    } finally {
      ade.setOutage(null);
    }
    const row = await stored(s);
    expect(row).toMatchObject({ status: 'pending', code: '0500', attempts: 1 });
    expect(row!.authority_code).toMatch(outage === 'reset' ? /connection_error|timeout/ : /HTTP 503/);
    clock.set(row!.next_attempt_at!);
    expect((await processPending(s)).result).toMatchObject({ accepted: 1 });
    expect(await stored(s)).toMatchObject({ status: 'accepted', attempts: 2 });
  });

  it('duplicate: AdE already holds the day (an answer lost on the way): the original IdOperazione, accepted', async () => {
    const s = await scenario();
    await makeDay(s, { authority: true });
    clock.set(NEXT_NIGHT);
    expect((await processPending(s)).result).toMatchObject({ accepted: 1 });
    const first = await stored(s);
    // As if the answer had never come back: the row is sent again.
    await t.db.query(`UPDATE corrispettivi_submissions SET status = 'pending', id_operazione = NULL WHERE id = $1`, [first!.id]);
    expect((await processPending(s)).result).toMatchObject({ accepted: 1 });
    const sent = sentFor(s);
    expect(sent).toHaveLength(2);
    expect(sent[1]!.answer).toMatchObject({ duplicate: true, idOperazione: first!.id_operazione });
    expect(await stored(s)).toMatchObject({ status: 'accepted', id_operazione: first!.id_operazione });
  });

  it('a file altered after signing (the stored row tampered with before a resend): AdE answers 99999, rejected 0200', async () => {
    const s = await scenario();
    await makeDay(s, { authority: true });
    clock.set(NEXT_NIGHT);
    route.setMode('server-error');
    try {
      await processPending(s);
    } finally {
      route.setMode('normal');
    }
    const row = await stored(s);
    await t.db.query(`UPDATE corrispettivi_submissions SET xml = replace(xml, '<Ammontare>25.00</Ammontare>', '<Ammontare>20.00</Ammontare>') WHERE id = $1`, [row!.id]);
    clock.set(row!.next_attempt_at!);
    expect((await processPending(s)).result).toMatchObject({ rejected: 1 });
    const last = sentFor(s).at(-1)!;
    expect(last.schemaValid).toBe(true);
    expect(last.signatureValid).toBe(false);
    expect(await stored(s)).toMatchObject({ status: 'rejected', code: '0200', authority_code: '99999' });
  });

  it('concurrent runs (two nodes on one store) send a day once', async () => {
    const s = await scenario();
    await makeDay(s, { authority: true });
    clock.set(NEXT_NIGHT);
    const other = await startTestApp({ clock, db: t.db, config: { authorityBaseUrls: { 'it-dc:test': ade.url }, authorityCa: ade.caPem } });
    try {
      const results = (await Promise.all([processPending(s), processPending(s), (async () => {
        const res = await other.request({ method: 'POST', url: '/v1/admin/process-pending', key: s.key });
        return { status: res.statusCode, result: (res.json().results as Array<Record<string, any>>).find((r) => r.processor === 'italy/corrispettivi')! };
      })()])).map((r) => r.result);
      expect(results.reduce((n, r) => n + r.accepted, 0)).toBe(1);
      expect(results.reduce((n, r) => n + r.batches_created, 0)).toBe(1);
    } finally {
      await other.close();
    }
    expect(sentFor(s)).toHaveLength(1);
    expect(await stored(s)).toMatchObject({ status: 'accepted', attempts: 1 });
  });

  it('stub mode (test key, no authority transactions): sealed with the sandbox certificate, answered locally, nothing sent', async () => {
    const s = await scenario({ upload: false });
    await makeDay(s);
    clock.set(NEXT_NIGHT);
    const { result } = await processPending(s);
    expect(result).toMatchObject({ batches_created: 1, accepted: 1 });
    expect(sentFor(s)).toHaveLength(0);
    const row = await stored(s);
    expect(row).toMatchObject({ status: 'accepted', mode: 'stub' });
    expect(row!.id_operazione).toMatch(/^SANDBOX-/);
    if (HAVE_SCHEMAS) expect(xsdValidate(row!.xml, CORRISPETTIVI_XSD).ok).toBe(true);
  });

  it('stub mode: each day\'s file gets an IdOperazione of its own (two days sent in one run)', async () => {
    const s = await scenario({ upload: false });
    await makeDay(s);
    clock.set('2026-03-03T09:00:00.000Z');
    await tx(s, 'sale', [line('Pizza', 1, 800, 10)], {});
    clock.set('2026-03-04T01:00:00.000Z');
    const { result } = await processPending(s);
    expect(result).toMatchObject({ batches_created: 2, accepted: 2 });
    expect(new Set(result.registration_numbers).size).toBe(2);
    const rows = (await t.db.query<{ id_operazione: string }>('SELECT id_operazione FROM corrispettivi_submissions WHERE location_id = $1', [s.loc])).rows;
    expect(new Set(rows.map((r) => r.id_operazione)).size).toBe(2);
  });

  it('authority mode without an uploaded seal certificate: nothing built, the day waits (failed, certificate_missing)', async () => {
    const s = await scenario({ upload: false });
    await makeDay(s, { authority: true });
    clock.set(NEXT_NIGHT);
    const { result } = await processPending(s);
    expect(result).toMatchObject({ batches_created: 0, failed: 1, errors: [expect.objectContaining({ code: 'certificate_missing' })] });
    expect(await stored(s)).toBeUndefined();
  });
});

describe('GET /v1/locations/{id}/corrispettivi', () => {
  it('a day not sent yet is built on demand from its transactions (not_sent), signed, schema-valid', async () => {
    const s = await scenario();
    await makeDay(s, { authority: true });
    const res = await inspect(s, `?date=${DAY}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-corrispettivi-status']).toBe('not_sent');
    expect(res.body).toContain('<TotaleAmmontareAnnulli>8.80</TotaleAmmontareAnnulli>');
    if (HAVE_SCHEMAS) expect(xsdValidate(res.body, CORRISPETTIVI_XSD).ok).toBe(true);
    expect(xmlsecVerify(res.body, { trustedCertPem: s.cert.certPem }).ok).toBe(true);
    expect(await stored(s)).toBeUndefined(); // reading builds, never stores
  });

  it('404 for another account\'s location, an unknown one, a day without documents and a location of another system; 400 for a bad or missing date', async () => {
    const s = await scenario();
    await makeDay(s);
    const other = await t.signup();
    const cross = await t.request({ method: 'GET', url: `/v1/locations/${s.loc}/corrispettivi?date=${DAY}`, key: other.key });
    expect(cross.statusCode).toBe(404);
    expect(cross.json()).toEqual({ error: 'location not found' });
    expect((await t.request({ method: 'GET', url: `/v1/locations/${crypto.randomUUID()}/corrispettivi?date=${DAY}`, key: s.key })).statusCode).toBe(404);

    const empty = await inspect(s, '?date=2026-03-05');
    expect(empty.statusCode).toBe(404);
    expect(empty.json().error).toMatch(/no corrispettivi for 2026-03-05/);

    for (const q of ['', '?date=']) {
      const bad = await inspect(s, q);
      expect([bad.statusCode, bad.json()], q).toEqual([400, { error: 'date is required: a date in the form YYYY-MM-DD' }]);
    }
    for (const q of ['?date=2026-02-30', '?date=02-03-2026', '?date=2026-03']) {
      const bad = await inspect(s, q);
      expect([bad.statusCode, bad.json()], q).toEqual([400, { error: 'date must be a date in the form YYYY-MM-DD' }]);
    }

    // An Italian location invoicing through SdI has no daily takings.
    const sdiLoc = await createLocation(t, s.key, 'it-sdi');
    const res = await t.request({ method: 'GET', url: `/v1/locations/${sdiLoc}/corrispettivi?date=${DAY}`, key: s.key });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: "this location's fiscal system (it-sdi) has no corrispettivi file" });
  });

  it('permission locations:read', async () => {
    const s = await scenario();
    await makeDay(s);
    const noRead = await t.request({ method: 'POST', url: '/v1/api-keys', key: s.key, payload: { name: 'tx only', permissions: ['transactions:read'] } });
    expect(noRead.statusCode, noRead.body).toBe(201);
    expect((await inspect(s, `?date=${DAY}`, noRead.json().key)).statusCode).toBe(403);
    const read = await t.request({ method: 'POST', url: '/v1/api-keys', key: s.key, payload: { name: 'read', permissions: ['locations:read'] } });
    expect((await inspect(s, `?date=${DAY}`, read.json().key)).statusCode).toBe(200);
  });
});

describe('schedule and reference', () => {
  it('GET /v1/batch/schedule lists italy/corrispettivi daily at 01:00 UTC', async () => {
    const s = await scenario();
    clock.set(START);
    const res = await t.request({ method: 'GET', url: '/v1/batch/schedule', key: s.key });
    expect(res.json().schedule).toContainEqual({ processor: 'italy/corrispettivi', cron: '0 1 * * *', timezone: 'UTC', next_run_at: '2026-03-03T01:00:00.000Z', runs_on: 'schedule' });
  });

  it('the scheduled run visits only the scopes with a closed day to send', async () => {
    const s = await scenario();
    await makeDay(s);
    clock.set(NEXT_NIGHT);
    const p = t.rt.batch.processors.find((x) => x.name === 'italy/corrispettivi')!;
    expect(await p.scopesWithWork(t.db, clock.now())).toContainEqual({ accountId: s.accountId, environment: 'test' });
    // The daily job's run: every scope with work, this one among them.
    const results = await t.rt.batch.runScheduled('italy/corrispettivi');
    expect(results.reduce((n, r) => n + r.accepted, 0)).toBeGreaterThanOrEqual(1);
    expect(await stored(s)).toMatchObject({ status: 'accepted', mode: 'stub' });
    expect(await p.scopesWithWork(t.db, clock.now())).not.toContainEqual({ accountId: s.accountId, environment: 'test' });
  });

  it('the route is in /openapi.json', async () => {
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/v1/locations/{id}/corrispettivi'].get;
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['id', 'date']));
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '404']));
  });
});

describe('a document of the register is annulled once (metadata annulment or POST cancel, whichever comes second: 409)', () => {
  const DAY2 = '2026-03-05';
  const PIZZA = () => [line('Pizza', 1, 200, 10)];
  /** A sale, sent and its result polled (the stub, a second later): `success`. */
  async function settledSale(s: Scenario) {
    const sale = await tx(s, 'sale', PIZZA(), {});
    await t.worker.drain();
    clock.advance(1000);
    await t.worker.drain();
    return sale;
  }
  const annul = (s: Scenario, number: string, matricola = s.matricola) =>
    createTx(t, s.key, {
      location_id: s.loc, timestamp: clock.now().toISOString(), currency: 'EUR', payment_method: 'cash',
      items: PIZZA(), pretax_amount: 200, tax_amount: 20, total_amount: 220,
      metadata: { is_cancellation: true, original_matricola: matricola, original_date: DAY2, original_number: number },
    });
  const cancel = (s: Scenario, id: string) => t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key: s.key });
  const already = (s: Scenario, number: string) => ({ error: `document ${number} of ${DAY2} on register ${s.matricola} is already cancelled` });

  it('by metadata first: a second annulment by metadata and POST …/cancel are 409; the day counts the annulment once', async () => {
    const s = await scenario();
    clock.set(`${DAY2}T08:00:00.000Z`);
    const sale = await settledSale(s);
    expect(sale).toMatchObject({ fiscal_id: '0001-0001' });

    const first = await annul(s, '0001-0001');
    expect(first.statusCode, first.body).toBe(201);
    // The register's matricola in another case is the same register.
    const again = await annul(s, '0001-0001', s.matricola.toLowerCase());
    expect(again.statusCode, again.body).toBe(409);
    expect(again.json()).toEqual(already(s, '0001-0001'));
    const viaCancel = await cancel(s, sale.id);
    expect(viaCancel.statusCode, viaCancel.body).toBe(409);
    expect(viaCancel.json()).toEqual(already(s, '0001-0001'));
    // Nothing was numbered for the refused ones: the next document continues without a gap.
    const next = await tx(s, 'sale', PIZZA(), {});
    expect(next).toMatchObject({ fiscal_id: '0001-0003' });
    // Another register's document is not ours to know: not checked.
    expect((await annul(s, '0001-0001', '99ZZ-000001')).statusCode).toBe(201);

    await t.worker.drain();
    const day = await inspect(s, `?date=${DAY2}`);
    expect(day.statusCode, day.body).toBe(200);
    // The 2.20 sale annulled once by us, and the other register's 2.20 document.
    expect(day.body).toContain('<TotaleAmmontareAnnulli>4.40</TotaleAmmontareAnnulli>');
    expect(day.body).toContain('<NumeroDocCommerciali>4</NumeroDocCommerciali>');
  });

  it('by POST …/cancel first: an annulment by metadata naming it is 409; the cancel stays idempotent', async () => {
    const s = await scenario();
    clock.set(`${DAY2}T09:00:00.000Z`);
    const sale = await settledSale(s);
    const c = await cancel(s, sale.id);
    expect(c.statusCode, c.body).toBe(201);
    await t.worker.drain();
    const byMetadata = await annul(s, '0001-0001');
    expect(byMetadata.statusCode, byMetadata.body).toBe(409);
    expect(byMetadata.json()).toEqual(already(s, '0001-0001'));
    const repeat = await cancel(s, sale.id);
    expect(repeat.statusCode, repeat.body).toBe(200);
    expect(repeat.json().id).toBe(c.json().id);
  });

  it('an annulment refused by AdE (or out of retries) did not annul: the document may be annulled again', async () => {
    const s = await scenario();
    clock.set(`${DAY2}T10:00:00.000Z`);
    await settledSale(s);
    const first = await annul(s, '0001-0001');
    expect(first.statusCode, first.body).toBe(201);
    await t.db.query(`UPDATE transactions SET status = 'failed_permanent' WHERE id = $1`, [first.json().id]);
    const second = await annul(s, '0001-0001');
    expect(second.statusCode, second.body).toBe(201);
  });

  it('the receipt of an annulment or a return made by metadata says so (not "di vendita")', async () => {
    const s = await scenario();
    clock.set(`${DAY2}T11:00:00.000Z`);
    await settledSale(s);
    const a = (await annul(s, '0001-0001')).json();
    const r = await tx(s, 'sale', PIZZA(), { is_return: true, original_matricola: s.matricola, original_date: DAY2, original_number: '0001-0001' });
    const title = async (id: string) => (await t.request({ method: 'GET', url: `/v1/transactions/${id}/receipt?format=text`, key: s.key })).body;
    expect(await title(a.id)).toContain('emesso per ANNULLAMENTO');
    expect(await title(r.id)).toContain('emesso per RESO MERCE');
  });
});
