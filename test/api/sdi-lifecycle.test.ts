import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startFakeSdi, FATTURAPA_XSD, type FakeSdi, type FakeSdiNotification } from '../support/fake-sdi.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert, uploadForm } from '../support/p12.ts';
import { createTx, getTx, locationBody, saleBody } from '../support/transactions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { xadesSign } from '../support/xades-sign.ts';
import { HAVE_SCHEMAS, xsdValidate } from '../support/xml-tools.ts';
import { freshPartitaIva } from '../support/italy.ts';

/*
 * The whole SdI lifecycle through the real client and the real receiver, on each store:
 * a test key with `X-Svc-Sandbox: authority` sends the FatturaPA with SdICoop
 * SdIRiceviFile (mutual TLS) to the fake SdI, which validates it against the XSD, answers
 * with an IdentificativoSdI (the transaction stays `pending`), and then posts signed
 * notifications (XAdES-BES, xmlsec1, its own key) to the service listening on 127.0.0.1:
 * `POST /v1/inbound/sdi` with `X-SDI-Secret`. The service trusts the fake SdI's CA
 * (`SDI_NOTIFICATION_CA_FILE`), so every notification must be signed by it. Status
 * changes reach a webhook receiver as `transaction.sdi_status_changed`.
 */

const SECRET = 'sdi-lifecycle-inbound-secret';
const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;
const PASSWORD = 'password-del-certificato';
const EVENT = 'transaction.sdi_status_changed';

let t: TestApp;
let fake: FakeSdi;
let receiver: WebhookReceiver;
const clock = new ManualClock(new Date());

beforeAll(async () => {
  fake = await startFakeSdi();
  receiver = await startWebhookReceiver({ now: () => clock.now().getTime() });
  t = await startTestApp({
    clock,
    random: () => 0.5,
    config: {
      authorityBaseUrls: { 'it-sdi:test': fake.url }, authorityCa: fake.caPem,
      inboundSecrets: { sdi: SECRET }, inboundCa: { sdi: fake.signerCaPem },
    },
  });
  // The fake SdI's signing certificate is valid from its creation, after the clock was made.
  clock.set(new Date());
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  fake.notifyTo(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/inbound/sdi`, SECRET);
});
afterAll(async () => {
  await t?.close();
  await fake?.close();
  await receiver?.close();
});

interface Scenario {
  key: string;
  accountId: string;
  loc: string;
}


/** A fresh account with its uploaded certificate, an it-sdi location (its own partita IVA) naming it, and a webhook for the SDI event. */
async function scenario(taxId = freshPartitaIva()): Promise<Scenario> {
  const { key, accountId } = await t.signup();
  const certificateId = `cert-it-${crypto.randomUUID().slice(0, 8)}`;
  const cert = generateCert({ subject: '/C=IT/serialNumber=TINIT-01234567897/CN=Trasmittente Test', days: 3650 });
  const { payload, headers } = uploadForm({ certificateId, password: PASSWORD, file: exportP12(cert, PASSWORD) });
  expect((await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers })).statusCode).toBe(201);
  const body = locationBody('it-sdi') as { country_config: Record<string, unknown> };
  const loc = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { ...body, tax_id: taxId, country_config: { ...body.country_config, certificate_id: certificateId } },
  });
  expect(loc.statusCode, loc.body).toBe(201);
  const hook = await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: receiver.url, events: [EVENT] } });
  expect(hook.statusCode, hook.body).toBe(201);
  receiver.secret = hook.json().secret;
  return { key, accountId, loc: loc.json().id };
}

let invoices = 0;
/** Creates an invoice (a fresh number unless given) to a buyer with a partita IVA; `pending`, not yet sent. */
async function invoice(s: Scenario, metadata: Record<string, unknown> = {}) {
  const res = await createTx(t, s.key, saleBody(s.loc, {
    timestamp: clock.now().toISOString(),
    metadata: { invoice_number: `FT-${Date.now() % 100_000}-${++invoices}`, ...metadata },
    customer_context: { tax_id: 'IT01234567897', legal_name: 'Cliente di prova S.r.l.' },
  }), AUTHORITY);
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().status).toBe('pending');
  return res.json() as { id: string; fiscal_id: string };
}

/** Runs the submit job(s) due: the fake SdI takes the file (or not). */
const send = () => t.worker.drain();

const sdiEvents = (txId: string) => receiver.received
  .filter((r) => r.json?.event === EVENT && r.json?.transaction_id === txId)
  .map((r) => {
    expect(r.check(receiver.secret!).all).toBe(true);
    return r.json.status as string;
  });

const answers = (ns: FakeSdiNotification[]) => ns.map((n) => [n.type, n.answers.map((a) => a.status)]);
const statusOf = async (s: Scenario, id: string) => (await getTx(t, s.key, id)).status as string;

describe('SdI lifecycle: fake SdI → signed notifications → POST /v1/inbound/sdi', () => {
  it('RC: pending, then delivered with the signer recorded, the event at the webhook; a duplicate RC, NE and DT change nothing', async () => {
    const s = await scenario();
    const tx = await invoice(s);
    await send();
    const sent = await getTx(t, s.key, tx.id);
    expect(sent).toMatchObject({ status: 'pending', fiscal_id_upstream: expect.stringMatching(/^\d+$/) });
    expect(fake.outbox.map((n) => [n.type, n.nomeFile])).toEqual([['RC', tx.fiscal_id]]);
    if (HAVE_SCHEMAS) expect(xsdValidate(fake.outbox[0]!.body, 'it/fatturapa/sdi/MessaggiTypes_v1.1.xsd').ok).toBe(true);

    const [rc] = await fake.deliver();
    expect(rc!.answers).toEqual([{ status: 200, body: JSON.stringify({ transaction_id: tx.id, status: 'delivered', changed: true }) }]);
    const delivered = await getTx(t, s.key, tx.id);
    expect(delivered).toMatchObject({ status: 'delivered', fiscal_id_upstream: sent.fiscal_id_upstream });
    expect(delivered.response_payload.notifications).toEqual([expect.objectContaining({
      notification: 'RC', IdentificativoSdI: sent.fiscal_id_upstream, NomeFile: tx.fiscal_id,
      signature: { signer: expect.stringContaining('CN=Fake SdI notifications'), trusted: true },
    })]);
    await t.worker.drain(); // the webhook delivery
    expect(sdiEvents(tx.id)).toEqual(['delivered']);

    // SdI retries a notification it thinks lost: the same RC again.
    expect(await fake.post(rc!)).toMatchObject({ status: 200, body: expect.stringContaining('"changed":false') });
    await t.worker.drain();
    expect(sdiEvents(tx.id)).toEqual(['delivered']);
  });

  it('NE and DT programmed after the RC, delivered out of order (DT, NE, RC): recorded on the pending invoice, the RC delivers', async () => {
    const s = await scenario();
    const tx = await invoice(s, { codice_destinatario: 'ABC1234' });
    fake.program(tx.fiscal_id, [{ type: 'RC' }, { type: 'NE', esito: 'EC02' }, { type: 'DT' }]);
    await send();
    const got = await fake.deliver({ order: 'reversed' });
    expect(answers(got)).toEqual([['DT', [200]], ['NE', [200]], ['RC', [200]]]);
    const after = await getTx(t, s.key, tx.id);
    expect(after.status).toBe('delivered');
    expect((after.response_payload.notifications as { notification: string; esito?: string }[]).map((n) => [n.notification, n.esito]))
      .toEqual([['DT', undefined], ['NE', 'EC02'], ['RC', undefined]]);
    await t.worker.drain();
    expect(sdiEvents(tx.id)).toEqual(['delivered']);
  });

  it('NS: rejected with every error and the event; a rejected invoice cannot be cancelled; the corrected invoice (same number) is delivered, then cancelled by a TD04 credit note', async () => {
    const s = await scenario();
    const number = `FT-NS-${Date.now() % 100_000}`;
    const first = await invoice(s, { invoice_number: number });
    fake.program(first.fiscal_id, [{ type: 'NS', errors: [
      { codice: '00305', descrizione: '1.4.1.1.2 <IdCodice> non valido : 01234567897' },
      { codice: '00423', descrizione: '2.2.1.11 <PrezzoTotale> non calcolato secondo le regole definite nelle specifiche tecniche' },
    ] }]);
    await send();
    expect(answers(await fake.deliver())).toEqual([['NS', [200]]]);
    const rejected = await getTx(t, s.key, first.id);
    expect(rejected.status).toBe('rejected');
    expect(rejected.response_payload.notifications[0].ListaErrori).toEqual([
      { Codice: '00305', Descrizione: '1.4.1.1.2 <IdCodice> non valido : 01234567897', message: expect.stringContaining('buyer') },
      { Codice: '00423', Descrizione: expect.stringContaining('<PrezzoTotale>'), message: expect.stringContaining('PrezzoTotale') },
    ]);
    await t.worker.drain();
    expect(sdiEvents(first.id)).toEqual(['rejected']);
    // SdI never accepted it: there is nothing to credit.
    const refused = await t.request({ method: 'POST', url: `/v1/transactions/${first.id}/cancel`, key: s.key, payload: {} });
    expect([refused.statusCode, refused.json()]).toEqual([409, { error: 'transaction cannot be cancelled' }]);

    // The corrected invoice, under the same number (a rejected invoice was never issued): a new file, delivered.
    const corrected = await invoice(s, { invoice_number: number });
    expect(corrected.fiscal_id).not.toBe(first.fiscal_id);
    await send();
    expect(answers(await fake.deliver())).toEqual([['RC', [200]]]);
    expect(await statusOf(s, corrected.id)).toBe('delivered');

    // Cancelling the delivered invoice issues a TD04 credit note naming it, sent to SdI like any file.
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${corrected.id}/cancel`, key: s.key, payload: { reason: 'reso' }, headers: AUTHORITY });
    expect(cancel.statusCode, cancel.body).toBe(201);
    const note = cancel.json() as { id: string; fiscal_id: string; status: string };
    expect(note.status).toBe('pending');
    const before = fake.received.length;
    await send();
    const file = fake.received.slice(before).find((r) => r.nomeFile === note.fiscal_id)!;
    expect(file.identificativoSdI).toMatch(/^\d+$/);
    if (HAVE_SCHEMAS) expect(xsdValidate(file.file, FATTURAPA_XSD).ok).toBe(true);
    const doc = new XMLParser({ removeNSPrefix: true, parseTagValue: false }).parse(file.file);
    const generali = doc.FatturaElettronica.FatturaElettronicaBody.DatiGenerali;
    expect(generali.DatiGeneraliDocumento).toMatchObject({ TipoDocumento: 'TD04', Numero: `NC-${number}` });
    expect(generali.DatiFattureCollegate).toMatchObject({ IdDocumento: number });
    expect(answers(await fake.deliver())).toEqual([['RC', [200]]]);
    expect(await statusOf(s, note.id)).toBe('delivered');
    expect(await statusOf(s, corrected.id)).toBe('cancelled');
    await t.worker.drain();
    expect(sdiEvents(note.id)).toEqual(['delivered']);
  });

  it('MC then AT (a PA invoice that could not be delivered): delivery_error once; an AT delivered first gives the same', async () => {
    const s = await scenario();
    const a = await invoice(s);
    const b = await invoice(s);
    fake.program(a.fiscal_id, [{ type: 'MC' }, { type: 'AT' }]);
    fake.program(b.fiscal_id, [{ type: 'MC' }, { type: 'AT' }]);
    await send();
    expect(answers(await fake.deliver({ pick: (n) => n.nomeFile === a.fiscal_id }))).toEqual([['MC', [200]], ['AT', [200]]]);
    expect(answers(await fake.deliver({ pick: (n) => n.nomeFile === b.fiscal_id, order: 'reversed' }))).toEqual([['AT', [200]], ['MC', [200]]]);
    expect([await statusOf(s, a.id), await statusOf(s, b.id)]).toEqual(['delivery_error', 'delivery_error']);
    await t.worker.drain();
    expect([sdiEvents(a.id), sdiEvents(b.id)]).toEqual([['delivery_error'], ['delivery_error']]);
  });

  it('an RC after an NS does not apply (409) and changes nothing', async () => {
    const s = await scenario();
    const tx = await invoice(s);
    fake.program(tx.fiscal_id, [{ type: 'NS', errors: [{ codice: '00311' }] }, { type: 'RC' }]);
    await send();
    const got = await fake.deliver();
    expect(got.map((n) => [n.type, n.answers[0]!.status])).toEqual([['NS', 200], ['RC', 409]]);
    expect(await statusOf(s, tx.id)).toBe('rejected');
  });

  /** An invoice SdI took while our attempt's answer was lost: the transaction is `failed`, a retry due. */
  async function answerLost() {
    const s = await scenario();
    const tx = await invoice(s);
    fake.setMode('answer-lost');
    try {
      await send();
    } finally {
      fake.setMode('normal');
    }
    expect(await statusOf(s, tx.id)).toBe('failed');
    return { s, tx };
  }

  it.each(['written', 'reversed'] as const)(
    'the answer lost after SdI took the file: the retry (a resend) gets NS 00002 for its copy, the held copy an RC; delivered in %s order, never a 404',
    async (order) => {
      const { s, tx } = await answerLost();
      const { rows } = await t.db.query<{ run_at: Date }>(`SELECT run_at FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [tx.id]);
      clock.set(rows[0]!.run_at);
      await send(); // the retry: the same file again
      const retried = await getTx(t, s.key, tx.id);
      expect(retried.status).toBe('pending');
      const mine = fake.outbox.filter((n) => n.nomeFile === tx.fiscal_id);
      expect(mine.map((n) => n.type)).toEqual(['RC', 'NS']);
      const [held, dup] = mine;
      expect(dup!.identificativoSdI).toBe(retried.fiscal_id_upstream);
      expect(held!.identificativoSdI).not.toBe(retried.fiscal_id_upstream);

      const got = await fake.deliver({ order, pick: (n) => n.nomeFile === tx.fiscal_id });
      expect(got.every((n) => n.answers[0]!.status === 200)).toBe(true);
      const after = await getTx(t, s.key, tx.id);
      expect(after).toMatchObject({ status: 'delivered', fiscal_id_upstream: held!.identificativoSdI });
      expect(after.response_payload.authority).toMatchObject({ IdentificativoSdI: dup!.identificativoSdI, resend: true });
      const recorded = after.response_payload.notifications as { notification: string; duplicate?: boolean; IdentificativoSdI: string }[];
      // Same file name: SdI's first uniqueness check (00002) refuses our second copy.
      expect(recorded.find((n) => n.notification === 'NS')).toMatchObject({
        duplicate: true, IdentificativoSdI: dup!.identificativoSdI, ListaErrori: [expect.objectContaining({ Codice: '00002' })],
      });
      // Both again (SdI's retries): still 200, nothing moves.
      expect((await fake.post(dup!)).status).toBe(200);
      expect((await fake.post(held!)).status).toBe(200);
      await t.worker.drain();
      expect(sdiEvents(tx.id)).toEqual(['delivered']);
    },
  );

  it('the answer lost, the RC delivered while the transaction is failed (before the retry): delivered, completed; the retry sends nothing', async () => {
    const { s, tx } = await answerLost();
    const got = await fake.deliver({ pick: (n) => n.nomeFile === tx.fiscal_id });
    expect(got.map((n) => [n.type, n.answers[0]!.status])).toEqual([['RC', 200]]);
    expect(await getTx(t, s.key, tx.id)).toMatchObject({ status: 'delivered', fiscal_id_upstream: got[0]!.identificativoSdI });
    const sentBefore = fake.received.filter((r) => r.nomeFile === tx.fiscal_id).length;
    const { rows } = await t.db.query<{ run_at: Date }>(`SELECT run_at FROM jobs WHERE transaction_id = $1 AND kind = 'submit'`, [tx.id]);
    clock.set(rows[0]!.run_at);
    await send();
    expect(fake.received.filter((r) => r.nomeFile === tx.fiscal_id).length).toBe(sentBefore);
    expect(fake.outbox.filter((n) => n.nomeFile === tx.fiscal_id)).toEqual([]);
    expect(await statusOf(s, tx.id)).toBe('delivered');
    expect(sdiEvents(tx.id)).toEqual(['delivered']);
  });

  it('an invoice number used twice (sent once, SdI holds another invoice with it): NS 00404 rejects it, with the event', async () => {
    const s = await scenario();
    const number = `FT-DUP-${Date.now() % 100_000}`;
    const first = await invoice(s, { invoice_number: number });
    await send();
    await fake.deliver();
    expect(await statusOf(s, first.id)).toBe('delivered');
    // At the same location the number is refused at creation (FiscalSystem.issuedDocument)…
    const refused = await createTx(t, s.key, saleBody(s.loc, { metadata: { invoice_number: number }, customer_context: { codice_fiscale: 'RSSMRA85T10A562S' } }), AUTHORITY);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().error).toBe(`metadata.invoice_number ${number} was already issued as TD01 in ${refused.json().error.match(/in (\d{4}):/)?.[1]}: SdI refuses a duplicate invoice (00404)`);
    expect(refused.json().error).toMatch(/ in \d{4}: /);
    // …and at another location of the issuer (its own chain: the number is the cedente's).
    const loc = (await t.request({ method: 'GET', url: `/v1/locations/${s.loc}`, key: s.key })).json();
    const twin = await t.request({
      method: 'POST', url: '/v1/locations', key: s.key,
      payload: { name: 'Seconda cassa', country: 'IT', address: loc.address, tax_id: loc.tax_id, country_config: loc.country_config },
    });
    expect(twin.statusCode, twin.body).toBe(201);
    const atTwin = await createTx(t, s.key, saleBody(twin.json().id, { metadata: { invoice_number: number }, customer_context: { codice_fiscale: 'RSSMRA85T10A562S' } }), AUTHORITY);
    expect(atTwin.statusCode, atTwin.body).toBe(409);
    // What we cannot see (another account of the same partita IVA: another software) SdI
    // still refuses: the NS 00404 path.
    const other = await scenario(loc.tax_id);
    // Its first file takes the name the first account already used (the progressivo is per
    // transmitter): SdI refuses the name (00002). Its next file is new.
    await invoice(other);
    await send();
    await fake.deliver();
    const again = await invoice(other, { invoice_number: number });
    await send();
    const got = await fake.deliver();
    expect(got.map((n) => [n.type, n.nomeFile, n.answers[0]!.status])).toEqual([['NS', again.fiscal_id, 200]]);
    const rejected = await getTx(t, other.key, again.id);
    expect(rejected.status).toBe('rejected');
    expect(rejected.response_payload.notifications).toEqual([expect.objectContaining({
      notification: 'NS', duplicate: true, ListaErrori: [expect.objectContaining({ Codice: '00404', message: expect.stringContaining('Duplicate invoice') })],
    })]);
    await t.worker.drain();
    expect(sdiEvents(again.id)).toEqual(['rejected']);
    expect(await statusOf(s, first.id)).toBe('delivered');
  });

  it('a tampered, unsigned or foreign-signed notification is a 400 and changes nothing', async () => {
    const s = await scenario();
    const tx = await invoice(s);
    await send();
    const [rc] = fake.outbox.splice(0);
    const tampered = await fake.post(rc!.body.replace(/<DataOraConsegna>[^<]+</, '<DataOraConsegna>2020-01-01T00:00:00.000Z<'));
    expect(tampered.status).toBe(400);
    expect(JSON.parse(tampered.body).error).toMatch(/^the SDI notification signature does not verify: Reference 1 \(URI=""\): the digest does not match/);
    const unsigned = await fake.post(rc!.body.replace(/\s*<ds:Signature[\s\S]*<\/ds:Signature>/, ''));
    expect([unsigned.status, JSON.parse(unsigned.body)]).toEqual([400, {
      error: 'the SDI notification is not signed: only signed notifications are accepted (SDI_NOTIFICATION_CA_FILE is set)',
    }]);
    const stranger = generateCert({ subject: '/C=IT/CN=Not SdI', withCa: true });
    const foreign = await fake.post(xadesSign(rc!.body.replace(/\s*<ds:Signature[\s\S]*<\/ds:Signature>/, ''), { keyPem: stranger.keyPem, certPem: stranger.certPem }));
    expect([foreign.status, JSON.parse(foreign.body)]).toEqual([400, {
      error: 'the SDI notification signature does not verify: the signing certificate is not issued by a trusted certificate authority',
    }]);
    const still = await getTx(t, s.key, tx.id);
    expect(still.status).toBe('pending');
    expect(still.response_payload.notifications).toBeUndefined();
    // The genuine one still delivers.
    expect((await fake.post(rc!)).status).toBe(200);
    expect(await statusOf(s, tx.id)).toBe('delivered');
  });
});
