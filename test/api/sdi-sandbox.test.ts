import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { stubHeldCopyIdentificativoSdI } from '../../src/countries/it-sdi/sandbox.ts';
import { jobsRepo } from '../../src/store/repos/jobs-repo.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { configs } from '../support/fixtures.ts';
import { createLocation, createTx, getTx, saleBody, saleMetadata } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../support/xml-tools.ts';

/*
 * Test keys with the stub SdI (src/countries/it-sdi/sandbox.ts), on each store: the stub
 * answers `sent` and produces the RC or NS a real SdI would send, and an `inbound_message`
 * job delivers it through the SdI channel's receiver (services/inbound.ts), the same code
 * POST /v1/inbound/sdi runs. Nothing is wrapped here: the real plug-in and channel.
 */

const clock = new ManualClock('2026-11-20T10:00:00.000Z');

let t: TestApp;
let key: string;
let accountId: string;
let location: string;
beforeAll(async () => {
  t = await startTestApp({ clock });
  ({ key, accountId } = await t.signup());
  location = await createLocation(t, key, 'it-sdi');
});
afterAll(async () => {
  await t.close();
});

const eventsOf = async (transactionId: string) => (await t.db.query<{ type: string; data: { status: string } }>(
  `SELECT type, data FROM events WHERE account_id = $1 AND data->>'transaction_id' = $2 AND type LIKE 'transaction.sdi%' ORDER BY created_at`,
  [accountId, transactionId])).rows.map((e) => [e.type, e.data.status]);

const jobsOf = async (transactionId: string) => (await t.db.query<{ id: string; kind: string; status: string; payload: Record<string, unknown>; last_error: string | null }>(
  `SELECT id, kind, status, payload, last_error FROM jobs WHERE transaction_id = $1 ORDER BY created_at, kind`, [transactionId])).rows;

/** Creates an invoice, runs its submit job alone, and checks it then awaits its notification. */
async function submitted(metadata: Record<string, unknown> = {}, notifications = 1) {
  const res = await createTx(t, key, saleBody(location, { metadata: { ...saleMetadata['it-sdi'], ...metadata } }));
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().status).toBe('pending');
  const id: string = res.json().id;
  const submit = (await jobsOf(id)).find((j) => j.kind === 'submit')!;
  expect(await t.worker.runJobNow(submit.id)).toBe(true);
  const sent = await getTx(t, key, id);
  expect(sent).toMatchObject({ status: 'pending', fiscal_id: expect.stringMatching(/^IT\d{11}_[0-9A-Z]{5}\.xml$/) });
  expect(sent.response_payload).toMatchObject({ awaiting_notification: true, authority: { sandbox: true, IdentificativoSdI: expect.stringMatching(/^[1-9]\d{9}$/) } });
  const inbound = (await jobsOf(id)).filter((j) => j.kind === 'inbound_message');
  expect(inbound.map((j) => [j.status, j.payload.channel, j.payload.content_type])).toEqual(Array(notifications).fill(['pending', 'sdi', 'application/xml']));
  expect(await eventsOf(id)).toEqual([]);
  return { id, fiscalId: sent.fiscal_id as string, sdiId: sent.response_payload.authority.IdentificativoSdI as string, inbound: inbound[0]!, inboundAll: inbound };
}

/** The same notification job once more (a re-run after a lost completion). */
async function again(job: { payload: Record<string, unknown> }, transactionId: string) {
  const now = clock.now();
  const copy = await t.db.transaction((tx) => jobsRepo.enqueue(tx, { kind: 'inbound_message', accountId, transactionId, maxAttempts: 5, runAt: now, payload: job.payload }, now));
  await t.worker.drain();
  return (await t.db.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1', [copy.id])).rows[0]!.status;
}

describe('test keys: the stub SdI notifies through the receiver', () => {
  it('accept: pending, then a real RC through the receiver: delivered, with one event; the same RC again changes nothing', async () => {
    const s = await submitted();
    await t.worker.drain();
    const tx = await getTx(t, key, s.id);
    expect(tx).toMatchObject({ status: 'delivered', fiscal_id: s.fiscalId, fiscal_id_upstream: s.sdiId });
    expect(tx.completed_at).not.toBeNull();
    expect(tx.response_payload.notifications).toEqual([expect.objectContaining({
      notification: 'RC', type: 'RicevutaConsegna', IdentificativoSdI: s.sdiId, NomeFile: s.fiscalId, Destinatario: expect.objectContaining({ Codice: '0000000' }),
    })]);
    expect((await jobsOf(s.id)).map((j) => [j.kind, j.status])).toEqual(expect.arrayContaining([['submit', 'completed'], ['inbound_message', 'completed']]));
    expect(await eventsOf(s.id)).toEqual([['transaction.sdi_status_changed', 'delivered']]);

    expect(await again(s.inbound, s.id)).toBe('completed');
    expect(await getTx(t, key, s.id)).toMatchObject({ status: 'delivered', fiscal_id: s.fiscalId, fiscal_id_upstream: s.sdiId, completed_at: tx.completed_at });
    expect(await eventsOf(s.id)).toEqual([['transaction.sdi_status_changed', 'delivered']]);
  });

  it('reject:00404 (a retry resent a file SdI held): the NS 00404 for our copy is a duplicate notice, the RC of the held copy delivers; re-runs change nothing', async () => {
    const s = await submitted({ sandbox_outcome: 'reject:00404' }, 2);
    await t.worker.drain();
    const tx = await getTx(t, key, s.id);
    const held = stubHeldCopyIdentificativoSdI(s.id);
    // The RC of the held copy gives the transaction that copy's IdentificativoSdI.
    expect(tx).toMatchObject({ status: 'delivered', fiscal_id: s.fiscalId, fiscal_id_upstream: held });
    const notifications = tx.response_payload.notifications as Record<string, unknown>[];
    expect(notifications.map((n) => [n.notification, n.IdentificativoSdI, n.duplicate]).sort()).toEqual([
      ['NS', s.sdiId, true], ['RC', held, undefined],
    ].sort());
    expect(notifications.find((n) => n.notification === 'NS')).toMatchObject({
      ListaErrori: [{ Codice: '00404', Descrizione: expect.stringContaining('Duplicate invoice'), message: expect.stringContaining('Duplicate invoice') }],
    });
    expect(await eventsOf(s.id)).toEqual([['transaction.sdi_status_changed', 'delivered']]);
    expect((await jobsOf(s.id)).filter((j) => j.kind === 'inbound_message').map((j) => j.status)).toEqual(['completed', 'completed']);

    // The duplicate notice again, after the RC (found through the answer that named our copy).
    const ns = s.inboundAll.find((j) => String(j.payload.body).includes('NotificaScarto'))!;
    expect(await again(ns, s.id)).toBe('completed');
    expect((await getTx(t, key, s.id)).status).toBe('delivered');
    expect(await eventsOf(s.id)).toEqual([['transaction.sdi_status_changed', 'delivered']]);
  });

  it('a notification the receiver refuses (no record, 404) ends its job dead with the answer, never retried', async () => {
    const s = await submitted();
    await t.worker.drain();
    const body = String(s.inbound.payload.body).replace(/<NomeFile>[^<]+<\/NomeFile>/, '<NomeFile>IT00000000000_ZZZZZ.xml</NomeFile>')
      .replace(/<IdentificativoSdI>\d+<\/IdentificativoSdI>/, '<IdentificativoSdI>1</IdentificativoSdI>');
    const now = clock.now();
    const job = await t.db.transaction((tx) => jobsRepo.enqueue(tx, { kind: 'inbound_message', accountId, transactionId: s.id, maxAttempts: 5, runAt: now, payload: { ...s.inbound.payload, body } }, now));
    await t.worker.drain();
    const row = (await t.db.query<{ status: string; last_error: string }>('SELECT status, last_error FROM jobs WHERE id = $1', [job.id])).rows[0]!;
    expect(row).toEqual({ status: 'dead', last_error: 'the sdi channel answered 404: transaction not found' });
    expect((await getTx(t, key, s.id)).status).toBe('delivered');
  });
});

describe('test keys: cancelling a credit note, and long invoice numbers', () => {
  const document = async (id: string) => {
    const record = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
    expect(record.statusCode, record.body).toBe(200);
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(record.body, 'it/fatturapa/Schema_del_file_xml_FatturaPA_v1.2.2.xsd');
      expect(v.ok, v.output).toBe(true);
    }
    const tipo = /<TipoDocumento>([^<]+)<\/TipoDocumento>/.exec(record.body)![1];
    const numero = /<Numero>([^<]+)<\/Numero>/.exec(record.body)![1]!;
    const collegata = /<DatiFattureCollegate>\s*<IdDocumento>([^<]+)<\/IdDocumento>/.exec(record.body)?.[1];
    return { tipo, numero, collegata };
  };
  const delivered = async (metadata: Record<string, unknown>, type = 'sale') => {
    const res = await createTx(t, key, { ...saleBody(location, { metadata: { ...saleMetadata['it-sdi'], ...metadata } }), type });
    expect(res.statusCode, res.body).toBe(201);
    await t.worker.drain();
    expect((await getTx(t, key, res.json().id)).status).toBe('delivered');
    return res.json().id as string;
  };
  const cancel = async (id: string) => {
    const res = await t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key, payload: {} });
    expect(res.statusCode, res.body).toBe(201);
    await t.worker.drain();
    return res.json().id as string;
  };

  it('a refund (TD04) is reversed by a debit note (TD05) naming it, not a second credit note', async () => {
    const refund = await delivered({ invoice_number: 'R-refund-1' }, 'refund');
    expect(await document(refund)).toMatchObject({ tipo: 'TD04', numero: 'R-refund-1' });
    const reversal = await cancel(refund);
    expect(await document(reversal)).toEqual({ tipo: 'TD05', numero: 'ND-R-refund-1', collegata: 'R-refund-1' });
    expect((await getTx(t, key, reversal)).status).toBe('delivered');
    expect((await getTx(t, key, refund)).status).toBe('cancelled');
  });

  it('an invoice numbered with 19 characters is credited under a number of at most 20, valid against the XSD', async () => {
    const sale = await delivered({ invoice_number: 'FATT-2026-000000012' });
    const note = await document(await cancel(sale));
    expect(note.tipo).toBe('TD04');
    expect(note.numero).toMatch(/^NC-000000012-\d{6}$/);
    expect(note.collegata).toBe('FATT-2026-000000012');
  });
});

describe('test keys: an FPA12 (public administration) file is signed XAdES-BES', () => {
  it('with the account\'s sandbox certificate (no certificate uploaded): verified by xmlsec1, valid against the XSD; an FPR12 file stays unsigned', async () => {
    const pa = await createLocation(t, key, 'it-sdi', { country_config: { ...configs.sdi, formato_trasmissione: 'FPA12' } });
    const res = await createTx(t, key, saleBody(pa, { metadata: { ...saleMetadata['it-sdi'], codice_destinatario: 'UFXYZ1' } }));
    expect(res.statusCode, res.body).toBe(201);
    const record = await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}/fiscal-record`, key });
    expect(record.statusCode, record.body).toBe(200);
    const xml = record.body;
    expect(xml).toMatch(/versione="FPA12">.*<ds:Signature Id="[^"]+">.*<\/ds:Signature><\/p:FatturaElettronica>$/);
    const { rows } = await t.db.query<{ certificate_pem: string }>('SELECT certificate_pem FROM sandbox_certificates WHERE account_id = $1', [accountId]);
    expect(rows).toHaveLength(1);
    const sig = xmlsecVerify(xml, { trustedCertPem: rows[0]!.certificate_pem });
    expect(sig.output).toContain('SignedInfo References (ok/all): 3/3');
    expect(sig.ok).toBe(true);
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(xml, 'it/fatturapa/Schema_del_file_xml_FatturaPA_v1.2.2.xsd');
      expect(v.ok, v.output).toBe(true);
    } else console.warn(`sdi-sandbox: XSD validation skipped: ${SCHEMAS_MISSING_MESSAGE}`);

    const fpr = await createTx(t, key, saleBody(location, { metadata: { ...saleMetadata['it-sdi'], invoice_number: 'FT-2026-0099' } }));
    expect(fpr.statusCode, fpr.body).toBe(201);
    const fprRecord = await t.request({ method: 'GET', url: `/v1/transactions/${fpr.json().id}/fiscal-record`, key });
    expect(fprRecord.body).toContain('versione="FPR12"');
    expect(fprRecord.body).not.toContain('ds:Signature');
  });
});
