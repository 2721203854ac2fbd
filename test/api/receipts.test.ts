import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { decodePngQr, parseEscPos, pdfText, pdfToPng, squeeze } from '../../src/receipts/test-tools.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import type { Nf525JetEntry } from '../../src/countries/fr-nf525/closures/jet.ts';
import { verifyJet } from '../../src/countries/fr-nf525/closures/verify.ts';
import { recordKeysRepo } from '../../src/store/repos/record-keys-repo.ts';
import type { SystemKey } from '../support/fixtures.ts';
import { createLocation, createTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';

/*
 * GET /v1/transactions/{id}/receipt through the API, on both stores: every format of a
 * stored transaction with its mandatory render hints on it (the QR decoded back from the
 * PNG and from the PDF turned into PNG by pdftoppm), the Greek offline label, languages,
 * the options' 400s, and another account's transaction a 404.
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T10:00:00.000Z') });
});
afterAll(() => t?.close());

type Hint = { key: string; kind: string; mandatory: boolean; value: string };

async function sale(system: SystemKey, outcome?: string) {
  const { key } = await t.signup();
  const loc = await createLocation(t, key, system);
  const metadata = { ...(saleMetadata[system] ?? {}), ...(outcome ? { sandbox_outcome: outcome } : {}) };
  const res = await createTx(t, key, saleBody(loc, { ...saleLines[system], metadata }));
  expect(res.statusCode, res.body).toBe(201);
  return { key, tx: res.json() as { id: string; status: string; render_hints: Hint[] } };
}

const receipt = (key: string, id: string, query = '') => t.request({ method: 'GET', url: `/v1/transactions/${id}/receipt${query}`, key });

describe('GET /v1/transactions/{id}/receipt', () => {
  it('Portugal: HTML by default, text, ESC/POS, PDF and PNG, each with the ATCUD, the certified-program line and the QR content', async () => {
    const { key, tx } = await sale('pt-saft');
    const hints = Object.fromEntries(tx.render_hints.map((h) => [h.key, h]));
    const qr = hints.qr!.value;

    const html = await receipt(key, tx.id);
    expect(html.statusCode, html.body).toBe(200);
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.body).toContain('<html lang="pt">');
    // The page may load and run nothing; its one style block is allowed by its hash.
    const csp = String(html.headers['content-security-policy']);
    expect(csp).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*';/);
    const style = html.body.match(/<style>([^]*?)<\/style>/)![1]!;
    expect(csp).toContain(`'sha256-${crypto.createHash('sha256').update(style).digest('base64')}'`);
    expect(html.body).toContain(`>ATCUD:${hints.atcud!.value}</p>`);

    const text = await receipt(key, tx.id, '?format=text&width=58');
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    for (const line of text.body.split('\n')) expect([...line].length).toBeLessThanOrEqual(32);
    for (const h of tx.render_hints.filter((x) => x.mandatory)) expect(squeeze(text.body), h.key).toContain(squeeze(h.value));

    const escpos = await receipt(key, tx.id, '?format=text&escpos=1');
    expect(escpos.headers['content-type']).toBe('application/vnd.escpos');
    const parsed = parseEscPos(escpos.rawPayload);
    expect(parsed.text).toContain(`ATCUD:${hints.atcud!.value}`);
    expect(parsed.images).toHaveLength(1);

    const pdf = await receipt(key, tx.id, '?format=pdf');
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toBe(`inline; filename="receipt-${tx.id}.pdf"`);
    expect(squeeze(pdfText(pdf.rawPayload))).toContain(squeeze(hints.software_certificate?.value ?? hints.hash_extract!.value));
    const fromPdf = decodePngQr(pdfToPng(pdf.rawPayload));
    expect(fromPdf?.data).toBe(qr);
    expect(fromPdf!.version).toBeGreaterThanOrEqual(9);

    const png = await receipt(key, tx.id, '?format=png&width=58');
    expect(png.headers['content-type']).toBe('image/png');
    expect(decodePngQr(png.rawPayload)?.data).toBe(qr);
  });

  it('Spain (TicketBAI): the identifier and the QR, in Spanish or English', async () => {
    const { key, tx } = await sale('es-ticketbai');
    const tbai = tx.render_hints.find((h) => h.key === 'tbai_id')!.value;
    const es = await receipt(key, tx.id, '?format=text');
    expect(es.body).toContain('Factura simplificada');
    expect(es.body).toContain(`${tbai}\n[QR]\n`);
    // The number comes from the stored record (its NumFactura) and the series from the stored metadata.
    const qrUrl = new URL(tx.render_hints.find((h) => h.key === 'qr')!.value);
    expect(es.body).toContain(`\nFactura n.º ${qrUrl.searchParams.get('s')}-${qrUrl.searchParams.get('nf')}\n`);
    const en = await receipt(key, tx.id, '?format=text&lang=en');
    expect(en.body).toContain('Simplified invoice');
    const png = await receipt(key, tx.id, '?format=png');
    expect(decodePngQr(png.rawPayload)?.data).toBe(tx.render_hints.find((h) => h.key === 'qr')!.value);
  });

  it('Greece: the MARK once AADE answered; an offline_pending receipt carries the offline label', async () => {
    const online = await sale('gr-mydata');
    expect(online.tx.status).toBe('success');
    const mark = online.tx.render_hints.find((h) => h.key === 'mark')!.value;
    expect((await receipt(online.key, online.tx.id, '?format=text')).body).toContain(`ΜΑΡΚ ${mark}`);
    expect((await receipt(online.key, online.tx.id, '?format=text&lang=en')).body).toContain(`MARK ${mark}`);

    const offline = await sale('gr-mydata', 'timeout');
    expect(offline.tx.status).toBe('offline_pending');
    const label = offline.tx.render_hints.find((h) => h.key === 'late_transmission_label')!.value;
    const html = await receipt(offline.key, offline.tx.id);
    expect(html.body).toContain(`<p data-hint="late_transmission_label">${label}</p>`);
    expect(squeeze(pdfText((await receipt(offline.key, offline.tx.id, '?format=pdf')).rawPayload))).toContain(squeeze(label));
  });

  it('bad options are a 400 that says what is allowed; another account\'s or an unknown transaction a 404', async () => {
    const { key, tx } = await sale('fr-nf525');
    const bad = async (query: string, error: string) => {
      const res = await receipt(key, tx.id, query);
      expect([res.statusCode, res.json()]).toEqual([400, { error }]);
    };
    await bad('?format=docx', 'format must be one of: html, pdf, png, text, escpos');
    await bad('?lang=es', 'lang must be one of: fr, en');
    await bad('?format=text&width=76', 'width must be 58 or 80 (paper width in mm)');
    await bad('?format=png&escpos=1', 'escpos applies to format=text only');

    const other = await t.signup();
    for (const [k, id] of [[other.key, tx.id], [key, '00000000-0000-4000-8000-000000000000'], [key, 'not-an-id']] as const) {
      const res = await receipt(k, id, '?format=text');
      expect([res.statusCode, res.json()]).toEqual([404, { error: 'transaction not found' }]);
    }
    // Another account's transaction is a 404 even with a bad option: nothing about it leaks.
    const res = await receipt(other.key, tx.id, '?format=docx');
    expect(res.statusCode).toBe(404);
  });
});

describe('POST /v1/transactions/{id}/receipt/duplicate', () => {
  const duplicate = (key: string, id: string, query = '') => t.request({ method: 'POST', url: `/v1/transactions/${id}/receipt/duplicate${query}`, key });

  it('France: each reprint is marked DUPLICATA and numbered, counted once; the original stays unmarked', async () => {
    const { key, tx } = await sale('fr-nf525');
    const first = await duplicate(key, tx.id, '?format=text');
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['x-receipt-copy']).toBe('1');
    expect(first.body).toContain('DUPLICATA n° 1');
    const second = await duplicate(key, tx.id, '?lang=en&format=text');
    expect(second.headers['x-receipt-copy']).toBe('2');
    expect(second.body).toContain('DUPLICATE no. 2');
    // Everything else of the ticket is the original's.
    const original = await receipt(key, tx.id, '?format=text');
    expect(original.body).not.toContain('DUPLICATA');
    expect(first.body.replace(/^.*DUPLICATA n° 1.*\n/m, '')).toBe(original.body);
    // A bad option is refused before a number is taken; the next copy is 3.
    expect((await duplicate(key, tx.id, '?format=doc')).statusCode).toBe(400);
    expect((await duplicate(key, tx.id, '?format=pdf')).headers['x-receipt-copy']).toBe('3');
    const { rows } = await t.db.query<{ copy_number: number }>('SELECT copy_number FROM receipt_duplicates WHERE transaction_id = $1 ORDER BY copy_number', [tx.id]);
    expect(rows.map((r) => r.copy_number)).toEqual([1, 2, 3]);
    // Each duplicate is traced in the register's JET (code 70), signed and chained with the rest.
    const loc = (tx as unknown as { location_id: string }).location_id;
    const jet = await t.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key });
    expect(jet.statusCode, jet.body).toBe(200);
    const events = [...(jet.json().data as Nf525JetEntry[])].reverse();
    // The ticket's number on the register (its record's document number, the transaction's fiscal_id).
    const ticket = (await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}`, key })).json().fiscal_id;
    expect(ticket).toMatch(/-00000001$/);
    expect(events.filter((e) => e.event === 'duplicate').map((e) => [e.code, e.details])).toEqual([1, 2, 3].map((copy) =>
      ['70', { transaction_id: tx.id, ticket, copy: String(copy) }]));
    const publicKey = crypto.createPublicKey((await recordKeysRepo.get(t.db, loc, 'ec-p256'))!.public_key_pem);
    expect(verifyJet(events, publicKey)).toMatchObject({ ok: true, count: events.length });
  });

  it('a ticket of a deleted location: its reprint is numbered and traced in that register\'s JET all the same', async () => {
    const { key, tx } = await sale('fr-nf525');
    const loc = (tx as unknown as { location_id: string }).location_id;
    expect((await t.request({ method: 'DELETE', url: `/v1/locations/${loc}`, key })).statusCode).toBe(204);
    const res = await duplicate(key, tx.id, '?format=text');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['x-receipt-copy']).toBe('1');
    expect(res.body).toContain('DUPLICATA n° 1');
    // The register's JET stays readable (an inspector's file), the reprint in it.
    const jet = await t.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key });
    expect(jet.statusCode, jet.body).toBe(200);
    const ticket = (await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}`, key })).json().fiscal_id;
    expect((jet.json().data as Nf525JetEntry[]).filter((e) => e.event === 'duplicate').map((e) => e.details)).toEqual([{ transaction_id: tx.id, ticket, copy: '1' }]);
    // Still the caller's only: another account gets a 404.
    const other = await t.signup();
    expect((await t.request({ method: 'GET', url: `/v1/locations/${loc}/jet`, key: other.key })).statusCode).toBe(404);
  });

  /** Systems whose receipts have no numbered duplicate: a reprint is the receipt printed again (GET). */
  const noDuplicates: readonly SystemKey[] = ['it-sdi', 'it-dc', 'gr-mydata'];
  const reprint = (system: SystemKey, key: string, id: string) => (noDuplicates.includes(system) ? receipt(key, id, '?format=text') : duplicate(key, id, '?format=text'));

  // The record signs the name (France, VERI*FACTU, TicketBAI, SDI, Documento Commerciale) or
  // the core kept it beside the record (myDATA, SII: their records name no issuer).
  it.each(['fr-nf525', 'es-verifactu', 'es-ticketbai', 'it-sdi', 'it-dc', 'gr-mydata', 'es-sii'] as const)('%s: a reprint after the legal name changed prints the name the document was issued with, not today\'s', async (system) => {
    const { key, tx } = await sale(system);
    const loc = (tx as unknown as { location_id: string }).location_id;
    const before = await receipt(key, tx.id, '?format=text');
    const location = (await t.request({ method: 'GET', url: `/v1/locations/${loc}`, key })).json() as { name: string; country_config: Record<string, unknown> };
    // The SDI fixture has no legal_name: its invoices name the location (build.ts CedentePrestatore).
    const signed = (location.country_config.legal_name as string | undefined) ?? location.name;
    expect(before.body).toContain(signed);
    const renamed = 'Nueva Razón & Cía';
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...location.country_config, legal_name: renamed } } });
    expect(patched.statusCode, patched.body).toBe(200);
    // A numbered duplicate where the system has them (else the receipt printed again as is).
    const dup = await reprint(system, key, tx.id);
    expect(dup.statusCode, dup.body).toBe(200);
    expect(dup.body).toContain(signed);
    expect(dup.body).not.toContain(renamed);
    // A document made after the change prints the new name (its record signed it; XML-escaped there).
    const next = await createTx(t, key, saleBody(loc, { ...saleLines[system], ...(saleMetadata[system] ? { metadata: saleMetadata[system] } : {}) }));
    expect(next.statusCode, next.body).toBe(201);
    expect((await receipt(key, next.json().id, '?format=text')).body).toContain(renamed);
  });

  it('fr-nf525: a DUPLICATA after the shop was renamed and moved prints the name and address its ticket printed (the record keeps them); a later ticket the new ones', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525', { name: 'Boulangerie du Marché', address: '1 place du Marché, 69001 Lyon' });
    const sold = await createTx(t, key, saleBody(loc, saleLines['fr-nf525']));
    expect(sold.statusCode, sold.body).toBe(201);
    const id = sold.json().id as string;
    const original = await receipt(key, id, '?format=text');
    expect(original.body).toContain('Boulangerie du Marché');
    expect(original.body).toContain('1 place du Marché, 69001 Lyon');
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { name: 'Pains & Co', address: '9 rue Neuve, 69002 Lyon' } });
    expect(patched.statusCode, patched.body).toBe(200);
    const dup = await duplicate(key, id, '?format=text');
    expect(dup.statusCode, dup.body).toBe(200);
    expect(dup.body).toContain('DUPLICATA n° 1');
    // The ticket as issued, but for the duplicate's mark.
    expect(dup.body.replace(/^.*DUPLICATA n° 1.*\n/m, '')).toBe(original.body);
    expect(dup.body).not.toContain('Pains & Co');
    expect(dup.body).not.toContain('9 rue Neuve');
    // Printing the original again (GET) is the ticket as issued too.
    expect((await receipt(key, id, '?format=text')).body).toBe(original.body);
    // A ticket made after the change prints the shop as it is now.
    const next = await createTx(t, key, saleBody(loc, saleLines['fr-nf525']));
    expect(next.statusCode, next.body).toBe(201);
    const later = (await receipt(key, next.json().id, '?format=text')).body;
    expect(later).toContain('Pains & Co');
    expect(later).toContain('9 rue Neuve, 69002 Lyon');
  });

  // Systems whose records keep no shop name or address: the core keeps them beside the record
  // (fiscal_records.issuer). The legal name too, where the location's config has one; the
  // record's own name wins where it signs one (VERI*FACTU, TicketBAI, SDI, Documento Commerciale).
  const signsLegalName: readonly SystemKey[] = ['es-verifactu', 'es-ticketbai', 'it-sdi', 'it-dc'];
  it.each(['it-dc', 'gr-mydata', 'pt-saft', 'es-sii', 'es-verifactu', 'es-ticketbai', 'it-sdi'] as const)('%s: a reprint after the shop was renamed and moved and its legal name changed prints them as issued; a record stored before they were kept prints today\'s; a later document the new ones', async (system) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system, { name: 'Shop As Issued', address: 'Street As Issued 1' });
    const body = () => saleBody(loc, { ...saleLines[system], ...(saleMetadata[system] ? { metadata: saleMetadata[system] } : {}) });
    const sold = await createTx(t, key, body());
    expect(sold.statusCode, sold.body).toBe(201);
    const id = sold.json().id as string;
    const original = await receipt(key, id, '?format=text');
    expect(original.statusCode, original.body).toBe(200);
    const config = (await t.request({ method: 'GET', url: `/v1/locations/${loc}`, key })).json().country_config as Record<string, unknown>;
    const legal = config.legal_name as string | undefined;
    for (const issued of ['Shop As Issued', 'Street As Issued 1', ...(legal ? [legal] : [])]) expect(original.body).toContain(issued);
    const patched = await t.request({
      method: 'PATCH', url: `/v1/locations/${loc}`, key,
      payload: { name: 'Shop Renamed', address: 'Street Moved 9', ...(legal ? { country_config: { ...config, legal_name: 'Renamed Legal Co' } } : {}) },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    // Printed again: the receipt as issued, byte for byte.
    expect((await receipt(key, id, '?format=text')).body).toBe(original.body);
    const copy = await reprint(system, key, id);
    expect(copy.statusCode, copy.body).toBe(200);
    for (const now of ['Shop Renamed', 'Street Moved 9', 'Renamed Legal Co']) expect(copy.body).not.toContain(now);
    for (const issued of ['Shop As Issued', 'Street As Issued 1', ...(legal ? [legal] : [])]) expect(copy.body).toContain(issued);
    // A record stored before the issuer was kept beside it: the shop as it is now; the legal
    // name the record signs where it signs one.
    await t.db.query('UPDATE fiscal_records SET issuer = NULL WHERE transaction_id = $1', [id]);
    const before = (await receipt(key, id, '?format=text')).body;
    expect(before).toContain('Shop Renamed');
    expect(before).toContain('Street Moved 9');
    if (legal) expect(before).toContain(signsLegalName.includes(system) ? legal : 'Renamed Legal Co');
    // A document issued after the change prints the shop as it is now.
    const next = await createTx(t, key, body());
    expect(next.statusCode, next.body).toBe(201);
    const later = (await receipt(key, next.json().id, '?format=text')).body;
    for (const now of ['Shop Renamed', 'Street Moved 9', ...(legal ? ['Renamed Legal Co'] : [])]) expect(later).toContain(now);
  });

  it('racing reprints take distinct numbers', async () => {
    const { key, tx } = await sale('fr-nf525');
    const answers = await Promise.all(Array.from({ length: 6 }, () => duplicate(key, tx.id, '?format=text')));
    expect(answers.map((a) => Number(a.headers['x-receipt-copy'])).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it.each([
    ['es-verifactu', 'DUPLICADO n.º 1', 'DUPLICADO n.º 2'],
    ['es-ticketbai', 'DUPLICADO n.º 1', 'DUPLICADO n.º 2'],
    ['es-sii', 'DUPLICADO n.º 1', 'DUPLICADO n.º 2'],
    ['pt-saft', '2.ª via', '2.ª via'],
  ] as const)('%s: a reprint says so (Spain: RD 1619/2012 art. 14.3 "duplicado"; Portugal: "2.ª via"), numbered, nothing else changed', async (system, first, second) => {
    const { key, tx } = await sale(system);
    const one = await duplicate(key, tx.id, '?format=text');
    expect(one.statusCode, one.body).toBe(200);
    expect(one.headers['x-receipt-copy']).toBe('1');
    expect(one.body).toContain(first);
    const two = await duplicate(key, tx.id, '?format=text');
    expect(two.headers['x-receipt-copy']).toBe('2');
    expect(two.body).toContain(second);
    const original = await receipt(key, tx.id, '?format=text');
    expect(original.body).not.toContain(first);
    expect(one.body.replace(new RegExp(`^.*${first.replace(/[.*]/g, '\\$&')}.*\n`, 'm'), '')).toBe(original.body);
  });

  it('a document since cancelled says so on every print: Portugal "ANULADO" on the receipt and its 2.ª via', async () => {
    const { key, tx } = await sale('pt-saft');
    expect((await receipt(key, tx.id, '?format=text')).body).not.toContain('ANULADO');
    const cancelled = await t.request({ method: 'POST', url: `/v1/transactions/${tx.id}/cancel`, key });
    expect(cancelled.statusCode, cancelled.body).toBe(201);
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${tx.id}`, key })).json().status).toBe('cancelled');
    expect((await receipt(key, tx.id, '?format=text')).body).toContain('ANULADO');
    const copy = await duplicate(key, tx.id, '?format=text');
    expect(copy.body).toContain('2.ª via');
    expect(copy.body).toContain('ANULADO');
    expect((await receipt(key, tx.id, '?format=text&lang=en')).body).toContain('CANCELLED');
  });

  it('a system without numbered duplicates: 400; another account\'s transaction: 404; a read-only key: 403', async () => {
    const { key, tx } = await sale('gr-mydata');
    const res = await duplicate(key, tx.id);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/^this transaction's receipts have no numbered duplicates/);
    const fr = await sale('fr-nf525');
    expect((await duplicate(key, fr.tx.id)).statusCode).toBe(404);
    const ro = await t.request({ method: 'POST', url: '/v1/api-keys', key: fr.key, payload: { name: 'ro', permissions: ['transactions:read'] } });
    expect((await duplicate(ro.json().key, fr.tx.id)).statusCode).toBe(403);
  });
});
