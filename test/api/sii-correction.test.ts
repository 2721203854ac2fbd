/**
 * POST /v1/transactions/{id}/correct at an SII location (src/countries/es-sii/correction.ts):
 * an invoice AEAT accepted (with errors, above all) is corrected by the same
 * RegistroLRFacturasEmitidas, same IDFactura, sent with TipoComunicacion A1; SII is not
 * chained, so the record goes on a side sequence (`#corrections`). Against the sandbox stub
 * and against the fake AEAT SII (which holds the invoice, replaces it on an A1 and refuses
 * an A1 of an invoice it does not hold with 3002). On the store TEST_STORE names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { NOTHING_IN_RECORD, VOID_NOT_CORRECTED } from '../../src/countries/es-sii/correction.ts';
import type { TestApp } from '../support/harness.ts';
import { startAuthorityTestApp } from '../support/authority-app.ts';
import { startFakeAeatSii, type FakeAeatSii } from '../support/fake-aeat-sii.ts';
import { freshNif, tagText, uploadSpainCertificate } from '../support/spain.ts';
import { createLocation, createTx, fiscalRecordOf, getTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

let t: TestApp;
let clock: ManualClock;
let aeat: FakeAeatSii;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  clock = new ManualClock(new Date());
  ({ t, aeat, close } = await startAuthorityTestApp(clock, 'es-sii', startFakeAeatSii));
});
afterAll(async () => {
  await close?.();
});

const PARTY = { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Ejemplo SA' };
/** A full invoice (F1): SII names its customer from metadata.counterparty_*. */
const invoice = (loc: string, metadata: Record<string, unknown> = PARTY) =>
  saleBody(loc, { timestamp: clock.now().toISOString(), metadata });
const correct = (key: string, id: string, payload: unknown) =>
  t.request({ method: 'POST', url: `/v1/transactions/${id}/correct`, key, payload: payload as object });

/** The correction records of a transaction, oldest first, with their sequence. */
async function correctionRecords(txId: string): Promise<{ body: string; chain_key: string }[]> {
  const res = await t.db.query<{ body: string; chain_key: string }>(
    `SELECT r.body, r.chain_key FROM transaction_corrections c JOIN fiscal_records r ON r.id = c.record_id
     WHERE c.transaction_id = $1 ORDER BY c.created_at`, [txId]);
  return res.rows;
}

function expectXsdValid(content: string) {
  if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
  const valid = xsdValidate(content, 'es/sii/SuministroLR.xsd');
  expect(valid.ok, valid.output).toBe(true);
}

const idFactura = (xml: string): string => /<siiLR:IDFactura>[\s\S]*?<\/siiLR:IDFactura>/.exec(xml)![0];

async function acceptedInvoice(key: string, loc: string, metadata?: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Record<string, any>> {
  const res = await createTx(t, key, invoice(loc, metadata), headers);
  expect(res.statusCode, res.body).toBe(201);
  await t.worker.drain();
  const tx = await getTx(t, key, res.json().id);
  expect(tx.status, JSON.stringify(tx.response_payload)).toBe('success');
  return tx;
}

/** An SII location that submits to the fake AEAT (its own NIF and certificate). */
async function authorityLocation(key: string): Promise<{ loc: string; nif: string }> {
  const nif = freshNif();
  const cert = await uploadSpainCertificate(t, key, nif);
  const created = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { name: `Tienda ${nif}`, country: 'ES', address: 'Calle Sierpes 1', tax_id: nif, country_config: { system: 'sii', legal_name: 'Ejemplo Sevilla SL', certificate_id: cert.certificateId } },
  });
  expect(created.statusCode, created.body).toBe(201);
  return { loc: created.json().id, nif };
}

const AUTHORITY = { 'x-svc-sandbox': 'authority' };

describe('SII: correcting an accepted invoice (A1)', () => {
  it('fake AEAT: an invoice accepted with errors (2011) is modified by an A1 of the same IDFactura; AEAT answers Correcto and the warnings go', async () => {
    const { key } = await t.signup();
    const { loc, nif } = await authorityLocation(key);
    aeat.setMode({ kind: 'accept_with_errors', code: '2011', description: 'El NIF de la contraparte no está censado.' });
    let accepted: Record<string, any>;
    try {
      accepted = await acceptedInvoice(key, loc, { counterparty_nif: '00000000T', counterparty_name: 'Cliente Mal Escrito' }, AUTHORITY);
    } finally {
      aeat.setMode({ kind: 'normal' });
    }
    expect(accepted.response_payload.warnings?.length).toBeGreaterThan(0);
    const originalBody = await fiscalRecordOf(t, key, accepted.id);
    const held = `${nif}|${tagText(originalBody, 'sii:NumSerieFacturaEmisor')}|${tagText(originalBody, 'sii:FechaExpedicionFacturaEmisor')}`;
    expect(aeat.invoice(held)).toMatchObject({ estado: 'AceptadaConErrores', modified: false });

    const res = await correct(key, accepted.id, { metadata: PARTY });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ id: accepted.id, status: 'success', fiscal_id: accepted.fiscal_id, response_payload: { correction: { status: 'pending' } } });
    const [rec] = await correctionRecords(accepted.id);
    // Not chained: a side sequence beside the invoice's series.
    expect(rec!.chain_key).toMatch(/#corrections$/);
    expect(idFactura(rec!.body)).toBe(idFactura(originalBody));
    expect(rec!.body).toContain('<sii:NombreRazon>Cliente Ejemplo SA</sii:NombreRazon>');
    expect(rec!.body).toContain('<sii:NIF>B64717838</sii:NIF>');
    // The transaction keeps its record.
    expect(await fiscalRecordOf(t, key, accepted.id)).toBe(originalBody);

    await t.worker.drain();
    // AEAT received the record byte for byte under an A1 header, schema-valid.
    const sent = aeat.lastBody!;
    expect(tagText(sent, 'sii:TipoComunicacion')).toBe('A1');
    expect(idFactura(sent)).toBe(idFactura(originalBody));
    expectXsdValid(sent);
    const done = await getTx(t, key, accepted.id);
    expect(done.status).toBe('success');
    expect(done.fiscal_id).toBe(accepted.fiscal_id);
    expect(done.response_payload.correction).toMatchObject({ status: 'accepted', replaced: { warnings: accepted.response_payload.warnings } });
    expect(done.response_payload.warnings).toBeUndefined();
    expect(done.response_payload.authority).toMatchObject({ EstadoRegistro: 'Correcto' });
    // AEAT's book holds the modified invoice, now correct.
    const book = aeat.invoice(held)!;
    expect(book).toMatchObject({ estado: 'Correcta', modified: true });
    expect(book.factura.Contraparte).toMatchObject({ NombreRazon: 'Cliente Ejemplo SA', NIF: 'B64717838' });
  });

  it('fake AEAT: an A1 of an invoice AEAT does not hold is refused (3002); the correction is rejected and the accepted answer stays', async () => {
    const { key } = await t.signup();
    const { loc, nif } = await authorityLocation(key);
    const accepted = await acceptedInvoice(key, loc, PARTY, AUTHORITY);
    const body = await fiscalRecordOf(t, key, accepted.id);
    // AEAT no longer holds it (e.g. its test environment purged it).
    expect(aeat.registered.delete(`${nif}|${tagText(body, 'sii:NumSerieFacturaEmisor')}|${tagText(body, 'sii:FechaExpedicionFacturaEmisor')}`)).toBe(true);

    const res = await correct(key, accepted.id, { metadata: { description: 'Menú del día y vino' } });
    expect(res.statusCode, res.body).toBe(202);
    await t.worker.drain();
    expect(tagText(aeat.lastBody!, 'sii:TipoComunicacion')).toBe('A1');
    const after = await getTx(t, key, accepted.id);
    expect(after.status).toBe('success');
    expect(after.response_payload.correction).toMatchObject({ status: 'rejected', error: { code: '3002' } });
    expect(after.response_payload.authority).toEqual(accepted.response_payload.authority);
  });

  it('stub: the description of a ticket (F2) is corrected; 400 for amounts, lines, dates, the number, metadata outside the record, or nothing that reaches it', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const tx = await acceptedInvoice(key, loc);
    for (const [payload, field] of [
      [{ total_amount: 100 }, 'total_amount'], [{ items: [] }, 'items'], [{ timestamp: '2026-01-01T00:00:00Z' }, 'timestamp'],
      [{ metadata: { invoice_number: '9' } }, 'metadata.invoice_number'], [{ metadata: { issue_date: '01-01-2026' } }, 'metadata.issue_date'],
      [{ metadata: { simplified: true } }, 'metadata.simplified'],
    ] as const) {
      const res = await correct(key, tx.id, payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toContain(`${field} cannot be corrected`);
    }
    // customer_context is not written in SII records: alone, it would modify nothing.
    const onlyContext = await correct(key, tx.id, { customer_context: { name: 'Otro nombre' } });
    expect(onlyContext.statusCode, onlyContext.body).toBe(400);
    expect(onlyContext.json().error).toBe(NOTHING_IN_RECORD);
    expect(await correctionRecords(tx.id)).toEqual([]);

    const ticket = await acceptedInvoice(key, loc, { simplified: true });
    const named = await correct(key, ticket.id, { metadata: PARTY });
    expect(named.statusCode, named.body).toBe(400);
    expect(named.json().error).toContain('cannot be corrected on an F2 invoice');
    const described = await correct(key, ticket.id, { metadata: { description: 'Dos menús' } });
    expect(described.statusCode, described.body).toBe(202);
    const [rec] = await correctionRecords(ticket.id);
    expect(rec!.body).toContain('<sii:DescripcionOperacion>Dos menús</sii:DescripcionOperacion>');
    expect(rec!.body).not.toContain('Contraparte');
    await t.worker.drain();
    expect((await getTx(t, key, ticket.id)).response_payload.correction).toMatchObject({ status: 'accepted', authority: { EstadoRegistro: 'Correcto' } });
  });

  it('409 unless accepted (pending, refused), for a void (a baja), and one correction at a time', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const body = { metadata: { description: 'Otra descripción' } };

    const pending = await createTx(t, key, invoice(loc));
    const early = await correct(key, pending.json().id, body);
    expect(early.statusCode, early.body).toBe(409);
    expect(early.json().error).toContain('its status is pending');

    const refused = await createTx(t, key, invoice(loc, { ...PARTY, sandbox_outcome: 'reject:1116' }));
    await t.worker.drain();
    expect((await getTx(t, key, refused.json().id)).status).not.toBe('success');
    expect((await correct(key, refused.json().id, body)).statusCode).toBe(409);

    const tx = await acceptedInvoice(key, loc);
    const voided = await createTx(t, key, saleBody(loc, {
      type: 'void', timestamp: clock.now().toISOString(),
      metadata: { original_invoice_number: 'F-2026-7', original_issue_date: '02-03-2026' },
    }));
    expect(voided.statusCode, voided.body).toBe(201);
    await t.worker.drain();
    expect((await getTx(t, key, voided.json().id)).status).toBe('success');
    const ofVoid = await correct(key, voided.json().id, body);
    expect(ofVoid.statusCode, ofVoid.body).toBe(409);
    expect(ofVoid.json().error).toBe(VOID_NOT_CORRECTED);

    expect((await correct(key, tx.id, body)).statusCode).toBe(202);
    const second = await correct(key, tx.id, { metadata: { description: 'Y otra' } });
    expect(second.statusCode).toBe(409);
    expect(second.json().error).toContain('still waiting for the authority');
    await t.worker.drain();
  });
});
