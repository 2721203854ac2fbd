import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { locationBodies } from '../support/fixtures.ts';
import { DEFAULT_SOFTWARE } from '../../src/runtime.ts';
import { startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { embeddedCertificatePem, fingerprintOf, freshNif, tagText, uploadSpainCertificate } from '../support/spain.ts';
import { createLocation, createTx, getTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../support/xml-tools.ts';

/*
 * Spanish records as the API hands them out, in stub mode (test keys, no X-Svc-Sandbox):
 * TicketBAI records are really signed (the account's sandbox certificate, or the
 * location's uploaded one) and verifiable by anyone from the record alone; SII deadlines
 * count working days; 1,000 concurrent TicketBAI creates on one location make one
 * unbroken, gapless chain.
 */

const TBAI_XSD = 'es/ticketbai/ticketbaiv1-2-2.xsd';

/** The sandbox bucket (200) would refuse most of the burst: the chain test is about the chain, not the limit. */
let a: TestApp;
let b: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock(new Date());
  a = await startTestApp({ clock, limiter: unlimitedLimiter() });
  // A second API node on the same store (its own process-local state: sandbox key cache, queue).
  b = await startTestApp({ db: a.db, clock, limiter: unlimitedLimiter() });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const warnSkipped = (what: string) => console.warn(`spain-records: ${what} skipped: ${SCHEMAS_MISSING_MESSAGE}`);

function expectSchemaValid(xml: string, xsd = TBAI_XSD): void {
  if (!HAVE_SCHEMAS) return warnSkipped('XSD validation');
  const v = xsdValidate(xml, xsd);
  expect(v.output).toMatch(/validates$/);
  expect(v.ok).toBe(true);
}

/** xmlsec1 verifies the signature with the certificate the record itself carries in KeyInfo. */
function expectSelfVerifying(xml: string): void {
  if (!HAVE_SCHEMAS) return warnSkipped('xmlsec1 verification');
  const v = xmlsecVerify(xml, { trustedCertPem: embeddedCertificatePem(xml) });
  expect(v.output).toContain('SignedInfo References (ok/all): 3/3');
  expect(v.ok).toBe(true);
}

async function fiscalRecord(t: TestApp, key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
  expect(res.headers['x-fiscal-record-placeholder']).toBe('false');
  return res.body;
}

/** A stub-mode TicketBAI sale; returns its transaction and the signed record. */
async function ticketBaiRecord(key: string, loc: string): Promise<{ tx: Record<string, any>; xml: string }> {
  const res = await createTx(a, key, saleBody(loc));
  expect(res.statusCode, res.body).toBe(201);
  return { tx: res.json(), xml: await fiscalRecord(a, key, res.json().id) };
}

const ticketBaiLocation = (key: string, over: Record<string, unknown> = {}) =>
  createLocation(a, key, 'es-ticketbai', over);
const withoutCertificate = () => {
  const { certificate_id: _omit, ...config } = locationBodies['es-ticketbai'].country_config;
  return { country_config: config };
};

async function sandboxCertificatePem(accountId: string): Promise<string> {
  const { rows } = await a.db.query<{ certificate_pem: string }>('SELECT certificate_pem FROM sandbox_certificates WHERE account_id = $1', [accountId]);
  expect(rows).toHaveLength(1);
  return rows[0]!.certificate_pem;
}

describe('TicketBAI records in stub mode are really signed', () => {
  it('with the account\'s sandbox certificate: XSD-valid, verified by xmlsec1 from the record alone; a changed byte fails', async () => {
    const { key, accountId } = await a.signup();
    const loc = await ticketBaiLocation(key, withoutCertificate());
    const { tx, xml } = await ticketBaiRecord(key, loc);
    expect(tx.status).toBe('pending');
    expect(tx.fiscal_id).toMatch(/^TBAI-B12345674-\d{6}-[A-Za-z0-9+/]{13}-\d{3}$/);
    expect(xml.startsWith('<T:TicketBai ')).toBe(true);
    expectSchemaValid(xml);
    expectSelfVerifying(xml);
    // The software producer is named by a NIF (the schema requires one).
    expect(/<EntidadDesarrolladora><NIF>([^<]*)<\/NIF>/.exec(xml)?.[1]).toBe(DEFAULT_SOFTWARE.vendorTaxId);

    // The certificate is the account's sandbox certificate, and says so.
    const embedded = embeddedCertificatePem(xml);
    expect(fingerprintOf(embedded)).toBe(fingerprintOf(await sandboxCertificatePem(accountId)));
    const x = new crypto.X509Certificate(embedded);
    expect(x.subject).toContain('CN=SANDBOX SIGNING CERTIFICATE - NOT VALID FOR LIVE');
    expect(x.subject).toContain(`O=Sandbox account ${accountId}`);

    if (HAVE_SCHEMAS) {
      const tampered = xml.replace('<ImporteTotalFactura>20.46<', '<ImporteTotalFactura>20.47<');
      expect(tampered).not.toBe(xml);
      const v = xmlsecVerify(tampered, { trustedCertPem: embedded });
      expect(v.ok).toBe(false);
    }
  });

  it('one sandbox certificate per account: the same on every record of the account (any location), another for another account', async () => {
    const one = await a.signup();
    const two = await a.signup();
    const l1 = await ticketBaiLocation(one.key, withoutCertificate());
    // Names a certificate that was never uploaded: stub mode falls back to the sandbox one.
    const l2 = await ticketBaiLocation(one.key, { name: 'Segundo local', tax_id: freshNif() });
    const l3 = await ticketBaiLocation(two.key, withoutCertificate());

    const r1 = await ticketBaiRecord(one.key, l1);
    const r2 = await ticketBaiRecord(one.key, l1);
    const r3 = await ticketBaiRecord(one.key, l2);
    const r4 = await ticketBaiRecord(two.key, l3);
    const fp = [r1, r2, r3, r4].map((r) => fingerprintOf(embeddedCertificatePem(r.xml)));
    expect(fp[1]).toBe(fp[0]);
    expect(fp[2]).toBe(fp[0]);
    expect(fp[3]).not.toBe(fp[0]);
    expect(fp[0]).toBe(fingerprintOf(await sandboxCertificatePem(one.accountId)));
    expect(fp[3]).toBe(fingerprintOf(await sandboxCertificatePem(two.accountId)));
    for (const r of [r2, r3, r4]) expectSelfVerifying(r.xml);
    // The second record of l1 is chained to the first.
    expect(tagText(r2.xml, 'SignatureValueFirmaFacturaAnterior')).toBe(tagText(r1.xml, 'ds:SignatureValue')!.slice(0, 100));
  });

  it('a location naming a certificate not uploaded yet signs with the sandbox one until it is uploaded, then with it at once', async () => {
    const { key } = await a.signup();
    const nif = freshNif();
    const loc = await ticketBaiLocation(key, { tax_id: nif, country_config: { ...locationBodies['es-ticketbai'].country_config, certificate_id: 'later' } });
    const before = await ticketBaiRecord(key, loc);
    const again = await ticketBaiRecord(key, loc); // the missing certificate is remembered, still the sandbox one
    expect(fingerprintOf(embeddedCertificatePem(again.xml))).toBe(fingerprintOf(embeddedCertificatePem(before.xml)));
    const cert = await uploadSpainCertificate(a, key, nif, 'later');
    const after = await ticketBaiRecord(key, loc);
    expect(fingerprintOf(embeddedCertificatePem(after.xml))).toBe(cert.fingerprint256);
    expect(fingerprintOf(embeddedCertificatePem(before.xml))).not.toBe(cert.fingerprint256);
  });

  it('with an uploaded certificate named by the location: the record carries that one, and it verifies the signature', async () => {
    const { key, accountId } = await a.signup();
    const nif = freshNif();
    const cert = await uploadSpainCertificate(a, key, nif);
    const loc = await ticketBaiLocation(key, { tax_id: nif, country_config: { ...locationBodies['es-ticketbai'].country_config, certificate_id: cert.certificateId } });
    const { tx, xml } = await ticketBaiRecord(key, loc);
    expect(tx.fiscal_id).toMatch(new RegExp(`^TBAI-${nif}-`));
    expect(fingerprintOf(embeddedCertificatePem(xml))).toBe(cert.fingerprint256);
    expectSchemaValid(xml);
    if (HAVE_SCHEMAS) {
      const v = xmlsecVerify(xml, { trustedCertPem: cert.cert.certPem });
      expect(v.output).toContain('SignedInfo References (ok/all): 3/3');
      expect(v.ok).toBe(true);
    }
    // No sandbox certificate was needed for this account.
    const { rows } = await a.db.query('SELECT 1 FROM sandbox_certificates WHERE account_id = $1', [accountId]);
    expect(rows).toHaveLength(0);

    // The annulment is signed with it too (AnulaTicketBai, its own schema).
    const cancel = await a.request({ method: 'POST', url: `/v1/transactions/${tx.id}/cancel`, key });
    expect(cancel.statusCode, cancel.body).toBe(409); // a pending record cannot be cancelled yet
    await a.worker.drain(); // the stub accepts it
    expect((await getTx(a, key, tx.id)).status).toBe('success');
    const cancelled = await a.request({ method: 'POST', url: `/v1/transactions/${tx.id}/cancel`, key });
    expect(cancelled.statusCode, cancelled.body).toBe(201);
    const anula = await fiscalRecord(a, key, cancelled.json().id);
    expect(anula.startsWith('<T:AnulaTicketBai ')).toBe(true);
    expect(fingerprintOf(embeddedCertificatePem(anula))).toBe(cert.fingerprint256);
    expectSchemaValid(anula, 'es/ticketbai/anula_ticketbaiv1-2-2.xsd');
    expectSelfVerifying(anula);
  });
});

describe('TicketBAI: one chain per issuer and territory', () => {
  it('an issuer in Gipuzkoa and Araba: each territory\'s invoices chain and number on their own', async () => {
    const { key } = await a.signup();
    const gipuzkoa = await ticketBaiLocation(key, withoutCertificate());
    const araba = await ticketBaiLocation(key, { name: 'Gasteiz', country_config: { ...withoutCertificate().country_config, territory: 'araba', tbai_license: 'TBAIARPRE00000000123' } });
    const g1 = await ticketBaiRecord(key, gipuzkoa);
    const g2 = await ticketBaiRecord(key, gipuzkoa);
    const a1 = await ticketBaiRecord(key, araba);
    const g3 = await ticketBaiRecord(key, gipuzkoa);
    const a2 = await ticketBaiRecord(key, araba);
    // Araba's first invoice names no previous one (not Gipuzkoa's), and numbers from 1.
    expect(a1.xml).not.toContain('EncadenamientoFacturaAnterior');
    expect([tagText(a1.xml, 'NumFactura'), tagText(a2.xml, 'NumFactura')]).toEqual(['1', '2']);
    expect(tagText(a2.xml, 'NumFacturaAnterior')).toBe('1');
    expect(tagText(a2.xml, 'SignatureValueFirmaFacturaAnterior')).toBe(tagText(a1.xml, 'ds:SignatureValue')!.replace(/\s/g, '').slice(0, 100));
    // Gipuzkoa's third follows its second, whatever Araba did in between.
    expect([g1, g2, g3].map((r) => tagText(r.xml, 'NumFactura'))).toEqual(['1', '2', '3']);
    expect(tagText(g3.xml, 'NumFacturaAnterior')).toBe('2');
    for (const r of [g1, g2, g3, a1, a2]) expectSchemaValid(r.xml);
  });

  it('refunds (corrective invoices) are numbered in a series of their own (RD 1619/2012 art. 6.1.a): RA beside A, in TicketBAI and VERI*FACTU', async () => {
    const { key } = await a.signup();
    const tbai = await ticketBaiLocation(key, withoutCertificate());
    const vf = await createLocation(a, key, 'es-verifactu', { name: 'VF' });
    for (const [loc, number] of [[tbai, (x: string) => `${tagText(x, 'SerieFactura')}-${tagText(x, 'NumFactura')}`], [vf, (x: string) => tagText(x, 'sf:NumSerieFactura')!]] as const) {
      const made: string[] = [];
      for (const type of ['sale', 'sale', 'refund', 'sale', 'refund']) {
        // A TicketBAI rectificativa names the invoice it corrects (es-ticketbai/foral-rules.ts).
        const named = type === 'refund' && loc === tbai ? { metadata: { original_invoice_number: '1', original_issue_date: '01-01-2026', original_series: 'A' } } : {};
        const res = await createTx(a, key, saleBody(loc, { type, ...named }));
        expect(res.statusCode, res.body).toBe(201);
        made.push(number(await fiscalRecord(a, key, res.json().id)));
      }
      expect(made).toEqual(['A-1', 'A-2', 'RA-1', 'A-3', 'RA-2']);
    }
  });

  it('migration 0044: a one-territory issuer\'s chain and series are renamed; a several-territory issuer\'s continue per territory from the shared head', async () => {
    const { key, accountId } = await a.signup();
    const nif = freshNif();
    const body = (territory: string, name: string) => ({ name, tax_id: nif, country_config: { ...withoutCertificate().country_config, territory, tbai_license: 'TBAIGIPRE00000000123' } });
    await ticketBaiLocation(key, body('gipuzkoa', 'G'));
    const other = await a.signup();
    await createLocation(a, other.key, 'es-ticketbai', body('gipuzkoa', 'G2'));
    await createLocation(a, other.key, 'es-ticketbai', body('araba', 'A2'));
    const now = new Date('2026-03-01T09:00:00Z');
    const old = (acct: string) => `es-ticketbai:${acct}:${nif}`;
    // As the old keys left them: a record and heads for the one-territory issuer, heads and series for the other.
    await a.db.query('INSERT INTO chain_heads (chain_key, seq, last_fiscal_id, last_issued_at, updated_at) VALUES ($1, 7, $2, $3, $3), ($4, 9, $5, $3, $3)',
      [old(accountId), 'F7', now, old(other.accountId), 'F9']);
    await a.db.query('INSERT INTO number_series (numbering_key, last_number, updated_at) VALUES ($1, 7, $3), ($2, 9, $3), ($4, 2, $3)',
      [`${old(accountId)}:A`, `${old(other.accountId)}:A`, now, `${old(accountId)}:A:live`]);
    const sql = (await import('node:fs')).readFileSync(new URL('../../src/store/migrations/0044_ticketbai_territory_chains.sql', import.meta.url), 'utf8');
    const heads = async (acct: string) => (await a.db.query<{ chain_key: string; seq: string | number }>(
      'SELECT chain_key, seq FROM chain_heads WHERE chain_key LIKE $1 ORDER BY chain_key', [`es-ticketbai:${acct}:%`])).rows.map((r) => [r.chain_key, Number(r.seq)]);
    const series = async (acct: string) => (await a.db.query<{ numbering_key: string; last_number: string | number }>(
      'SELECT numbering_key, last_number FROM number_series WHERE numbering_key LIKE $1 ORDER BY numbering_key', [`es-ticketbai:${acct}:%`])).rows.map((r) => [r.numbering_key, Number(r.last_number)]);
    for (let run = 0; run < 2; run++) { // and a second run changes nothing
      await a.db.transaction((tx) => tx.exec(sql));
      expect(await heads(accountId)).toEqual([[`${old(accountId)}:gipuzkoa`, 7]]);
      expect(await series(accountId)).toEqual([[`${old(accountId)}:gipuzkoa:A`, 7], [`${old(accountId)}:gipuzkoa:A:live`, 2]]);
      expect(await heads(other.accountId)).toEqual([[old(other.accountId), 9], [`${old(other.accountId)}:araba`, 9], [`${old(other.accountId)}:gipuzkoa`, 9]]);
      expect(await series(other.accountId)).toEqual([[`${old(other.accountId)}:A`, 9], [`${old(other.accountId)}:araba:A`, 9], [`${old(other.accountId)}:gipuzkoa:A`, 9]]);
    }
  });
});

describe('SII: deadline_at is the fourth working day (Saturdays, Sundays and national holidays excluded), end of day in Madrid', () => {
  const cases: Array<[string, string, string]> = [
    // Fri 9 Oct 2026; Sat, Sun, Mon 12 Oct (Fiesta Nacional) excluded → Tue 13 … Fri 16, 23:59:59.999 CEST.
    ['a Friday before a national holiday', '2026-10-09T10:00:00.000Z', '2026-10-16T21:59:59.999Z'],
    // Thu 8 Oct 22:30 UTC is already Friday 00:30 in Madrid: counted from Friday, as above.
    ['Thursday late evening UTC, Friday in Madrid', '2026-10-08T22:30:00.000Z', '2026-10-16T21:59:59.999Z'],
    // Thu 24 Dec: Fri 25 (Navidad), Sat, Sun excluded → Mon 28 … Thu 31, 23:59:59.999 CET.
    ['Christmas Eve', '2026-12-24T11:00:00.000Z', '2026-12-31T22:59:59.999Z'],
    // Fri 4 Dec: Sat 5, Sun 6, then Mon 7 (1), Tue 8 (Inmaculada) excluded, Wed 9 … Fri 11.
    ['a Friday with a holiday in the next week', '2026-12-04T10:00:00.000Z', '2026-12-11T22:59:59.999Z'],
  ];
  let saved: Date;
  beforeAll(() => (saved = clock.now()));
  afterAll(() => clock.set(saved));

  it.each(cases)('%s: issued %s → deadline %s', async (_name, at, deadline) => {
    clock.set(at);
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'es-sii');
    const res = await createTx(a, key, saleBody(loc, { timestamp: at, metadata: { simplified: true } }));
    expect(res.statusCode, res.body).toBe(201);
    const tx = res.json();
    expect(tx.status).toBe('pending');
    expect(tx.deadline_at).toBe(deadline);
    expect((await getTx(a, key, tx.id)).deadline_at).toBe(deadline);
    // The record reports the Madrid issue date the deadline counts from.
    const xml = await fiscalRecord(a, key, tx.id);
    const madridDate = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Madrid', day: '2-digit', month: '2-digit', year: 'numeric' }).format(new Date(at)).replaceAll('/', '-');
    expect(/<(?:\w+:)?FechaExpedicionFacturaEmisor>([^<]*)</.exec(xml)?.[1]).toBe(madridDate);
  });

  /*
   * The SII period runs from the invoice's issue (RIVA art. 69.Dos: "desde la expedición de
   * la factura"): an invoice issued on Friday 9 October (metadata.issue_date) and reported
   * on Wednesday 14th is due Friday 16th, not four days after its creation.
   */
  it('an invoice reported after its issue date (metadata.issue_date) is due four days after that date', async () => {
    clock.set('2026-10-14T10:00:00.000Z'); // Wednesday
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'es-sii');
    const res = await createTx(a, key, saleBody(loc, { timestamp: '2026-10-09T10:00:00.000Z', metadata: { simplified: true, issue_date: '09-10-2026' } }));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(a, key, res.json().id);
    expect(/<(?:\w+:)?FechaExpedicionFacturaEmisor>([^<]*)</.exec(xml)?.[1]).toBe('09-10-2026');
    expect(res.json().deadline_at).toBe('2026-10-16T21:59:59.999Z');
  });

  it('other Spanish systems keep the plain 4-calendar-day window (same Friday)', async () => {
    clock.set('2026-10-09T10:00:00.000Z');
    const { key } = await a.signup();
    const loc = await createLocation(a, key, 'es-verifactu');
    const tx = (await createTx(a, key, saleBody(loc, { timestamp: '2026-10-09T10:00:00.000Z' }))).json();
    expect(tx.deadline_at).toBe('2026-10-13T10:00:00.000Z');
  });
});

describe('TicketBAI: 1,000 concurrent creates on one Gipuzkoa location, through two API nodes', () => {
  const N = 1000;
  const SAMPLE = 20;

  it('make one unbroken chain: seq 1..1000, gapless numbers, each record naming the previous one\'s signature, one sandbox certificate', async () => {
    const { key, accountId } = await a.signup();
    const loc = await createLocation(a, key, 'es-ticketbai', withoutCertificate()); // Gipuzkoa (fixture)
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => createTx(i % 2 ? b : a, key, saleBody(loc))));
    expect(answers.filter((r) => r.statusCode !== 201).map((r) => r.body).slice(0, 3)).toEqual([]);

    const rows = (await a.db.query<{ seq: string | number; body: string; fingerprint: string; previous_fingerprint: string | null; fiscal_id: string; transaction_id: string; document_number: string }>(
      `SELECT r.seq, r.body, r.fingerprint, r.previous_fingerprint, r.fiscal_id, r.transaction_id, r.document_number FROM fiscal_records r
       JOIN transactions t ON t.id = r.transaction_id WHERE t.location_id = $1 ORDER BY r.seq`, [loc])).rows;
    expect(rows).toHaveLength(N);
    expect(new Set(rows.map((r) => r.transaction_id))).toEqual(new Set(answers.map((r) => r.json().id)));

    const sandboxFp = fingerprintOf(await sandboxCertificatePem(accountId));
    const certB64 = new Set<string>();
    const problems: string[] = [];
    const check = (cond: boolean, what: string) => {
      if (!cond && problems.length < 10) problems.push(what);
    };
    rows.forEach((r, i) => {
      const x = r.body;
      const sig = tagText(x, 'ds:SignatureValue')!;
      check(Number(r.seq) === i + 1, `seq ${r.seq} at ${i}`);
      check(tagText(x, 'NumFactura') === String(i + 1) && r.document_number === String(i + 1), `number ${tagText(x, 'NumFactura')} at seq ${i + 1}`);
      check(tagText(x, 'SerieFactura') === 'A', `series at seq ${i + 1}`);
      check(sig === r.fingerprint && sig.length > 100, `fingerprint at seq ${i + 1}`);
      check(r.fiscal_id.split('-')[3] === sig.slice(0, 13), `TBAI id at seq ${i + 1}`);
      certB64.add(tagText(x, 'ds:X509Certificate')!);
      if (i === 0) {
        check(!x.includes('EncadenamientoFacturaAnterior') && r.previous_fingerprint === null, 'first record chained');
        return;
      }
      const prev = rows[i - 1]!.body;
      check(tagText(x, 'SignatureValueFirmaFacturaAnterior') === tagText(prev, 'ds:SignatureValue')!.slice(0, 100), `SignatureValueFirmaFacturaAnterior at seq ${i + 1}`);
      check(tagText(x, 'NumFacturaAnterior') === tagText(prev, 'NumFactura'), `NumFacturaAnterior at seq ${i + 1}`);
      check(tagText(x, 'SerieFacturaAnterior') === tagText(prev, 'SerieFactura'), `SerieFacturaAnterior at seq ${i + 1}`);
      check(tagText(x, 'FechaExpedicionFacturaAnterior') === tagText(prev, 'FechaExpedicionFactura'), `FechaExpedicionFacturaAnterior at seq ${i + 1}`);
      check(r.previous_fingerprint === rows[i - 1]!.fingerprint, `previous_fingerprint at seq ${i + 1}`);
    });
    expect(problems).toEqual([]);
    expect(new Set(rows.map((r) => r.fiscal_id)).size).toBe(N);
    // Both nodes signed with the one sandbox certificate of the account (created once, whichever node came first).
    expect(certB64.size).toBe(1);
    expect(fingerprintOf(embeddedCertificatePem(rows[0]!.body))).toBe(sandboxFp);

    // A sample, spread over the chain (first and last included): signatures verified by
    // xmlsec1 from the records alone, documents valid against the XSD, and the API serves
    // exactly the stored bytes.
    const sample = Array.from({ length: SAMPLE }, (_, k) => Math.round((k * (N - 1)) / (SAMPLE - 1)));
    for (const i of sample) {
      const r = rows[i]!;
      expectSelfVerifying(r.body);
      expectSchemaValid(r.body);
    }
    for (const i of [0, N - 1]) expect(await fiscalRecord(a, key, rows[i]!.transaction_id)).toBe(rows[i]!.body);
  }, 120_000);
});

/*
 * Exempt operations (metadata.exemption_code, src/countries/es/exemption.ts): the 0 % lines
 * are reported with their legal cause in each Spanish record, never as S1 at 0 %.
 */
describe('exempt operations (metadata.exemption_code) in the three Spanish records', () => {
  const exemptSale = (loc: string, meta: Record<string, unknown>, code: unknown = 'E1') =>
    saleBody(loc, {
      items: [
        { description: 'Consulta médica', quantity: 1, unit_price: 6000, tax_rate: 0, tax_amount: 0, total_amount: 6000 },
        { description: 'Crema', quantity: 1, unit_price: 1000, tax_rate: 21, tax_amount: 210, total_amount: 1210 },
      ],
      pretax_amount: 7000,
      tax_amount: 210,
      total_amount: 7210,
      metadata: code === null ? meta : { ...meta, exemption_code: code },
    });
  const cases = [
    { system: 'es-verifactu', meta: {}, exempt: /<sf:OperacionExenta>E1<\/sf:OperacionExenta>\s*<sf:BaseImponibleOimporteNoSujeto>60\.00</, xsd: null },
    { system: 'es-ticketbai', meta: {}, exempt: /<Exenta><DetalleExenta><CausaExencion>E1<\/CausaExencion><BaseImponible>60\.00</, xsd: TBAI_XSD },
    { system: 'es-sii', meta: { simplified: true }, exempt: /<sii:CausaExencion>E1<\/sii:CausaExencion>\s*<sii:BaseImponible>60\.00</, xsd: null },
  ] as const;

  it.each(cases)('$system: stored in metadata, written with its cause beside the S1 line, cited on the receipt', async ({ system, meta, exempt, xsd }) => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, system);
    const res = await createTx(a, key, exemptSale(loc, meta));
    expect(res.statusCode, res.body).toBe(201);
    const tx = res.json();
    expect((await getTx(a, key, tx.id)).request_payload.metadata.exemption_code).toBe('E1');
    expect(tx.render_hints.find((h: { key: string }) => h.key === 'exemption')?.value).toMatch(/^Operación exenta de IVA \(art\. 20 (Ley 37\/1992|Norma Foral del IVA)\)$/);
    const xml = await fiscalRecord(a, key, tx.id);
    expect(xml).toMatch(exempt);
    expect(xml).not.toMatch(/<(\w+:)?TipoImpositivo>0\.00</);
    if (xsd) expectSchemaValid(xml, xsd);
  });

  it.each(cases)('$system: an unknown cause, or a cause without a 0 % line, is a 400 with the field named', async ({ system, meta }) => {
    const { key } = await a.signup();
    const loc = await createLocation(a, key, system);
    for (const bad of ['E9', 'e1', 7, true]) {
      const res = await createTx(a, key, exemptSale(loc, meta, bad));
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toBe('metadata.exemption_code must be one of E1, E2, E3, E4, E5, E6');
    }
    const noZero = await createTx(a, key, saleBody(loc, { metadata: { ...meta, exemption_code: 'E1' } }));
    expect(noZero.statusCode, noZero.body).toBe(400);
    expect(noZero.json().error).toBe('metadata.exemption_code applies to the lines with tax_rate 0, and this transaction has none');
    // Without a code a 0 % line stays a taxed line at 0 % (S1), as before.
    const plain = await createTx(a, key, exemptSale(loc, meta, null));
    expect(plain.statusCode, plain.body).toBe(201);
    expect(await fiscalRecord(a, key, plain.json().id)).toMatch(/<(\w+:)?TipoImpositivo>0\.00</);
  });
});
