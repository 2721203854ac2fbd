import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { getSystem } from '../../src/countries/registry.ts';
import type { AuthorityOutcome, FiscalSystem } from '../../src/countries/types.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, getTx, saleBody, saleMetadata } from '../support/transactions.ts';

/*
 * SdI notifications through POST /v1/inbound/sdi with the REAL it-sdi channel
 * (src/countries/it-sdi/notifications.ts), on each store. Only `submit` is wrapped: the
 * sandbox stub answers `delivered` at once, while a real SdI takes the file (`sent`,
 * status `pending`, fiscal id = the file name) and answers later by notification.
 */

const SECRET = 'sdi-notifications-secret-for-tests';
const clock = new ManualClock('2026-11-20T10:00:00.000Z');

const sdi = getSystem('it-sdi');
/** The FatturaPA file name the record carries as its fiscal id (build.ts): IT + VAT number + _ + 5 characters. */
const FILE_NAME = /^IT\d{11}_[0-9A-Z]{5}\.xml$/;
const sentSdi: FiscalSystem = {
  ...sdi,
  submit: async (record): Promise<AuthorityOutcome> => ({ kind: 'sent', reference: record.fiscalId ?? record.transactionId, response: { sent: true } }),
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
  location = await createLocation(t, key, 'it-sdi');
});
afterAll(async () => {
  await t.close();
});

const post = (body: string, headers: Record<string, string> = { 'x-sdi-secret': SECRET }) =>
  t.request({ method: 'POST', url: '/v1/inbound/sdi', payload: body, headers: { 'content-type': 'application/xml', ...headers } });

/** An invoice sent to SdI, awaiting its notification. */
async function sentInvoice(): Promise<{ id: string; fiscal_id: string }> {
  const res = await createTx(t, key, saleBody(location, { metadata: saleMetadata['it-sdi'] }));
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

  it('an NE or DT on a pending invoice is recorded and gives it its IdentificativoSdI; the RC that follows is matched by it', async () => {
    const tx = await sentInvoice();
    const id = sdiId();
    expect((await post(notice('DT', tx.fiscal_id, id))).json()).toEqual({ transaction_id: tx.id, status: 'pending', changed: false });
    expect(await getTx(t, key, tx.id)).toMatchObject({ status: 'pending', fiscal_id_upstream: id });
    expect(await eventsOf(tx.id)).toEqual([]);
    // Another file name, the same IdentificativoSdI: the authority's id finds it.
    expect((await post(notice('RC', 'IT01234567890_ZZZZZ.xml', id))).json()).toEqual({ transaction_id: tx.id, status: 'delivered', changed: true });
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
