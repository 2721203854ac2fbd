import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { DC_POLL_AFTER_SECONDS } from '../../src/countries/it-dc/response.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';

/*
 * Corrections end to end, on both stores: what the fiscal record says a correction is, the
 * receipt prints (docs/decisions.md "Corrections on paper"): a cancellation titled as what it
 * is and naming the document it cancels (the service finds the original), a refund naming
 * what it corrects, amounts with the record's sign.
 */
let t: TestApp;
const clock = new ManualClock('2026-03-02T10:00:00.000Z');
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t?.close());

const get = async (key: string, url: string) => t.request({ method: 'GET', url, key });
const receipt = async (key: string, id: string, query = '?format=text') => {
  const res = await get(key, `/v1/transactions/${id}/receipt${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
};
const cancel = async (key: string, id: string, reason?: string) => {
  const res = await t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key, payload: reason ? { reason } : {} });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
};
const hint = (tx: { render_hints: { key: string; value: string }[] }, key: string) => tx.render_hints.find((h) => h.key === key)?.value;

describe('France NF525', () => {
  it('a cancellation is its own "Ticket d\'annulation" naming the ticket it cancels, its amounts negative as its record\'s', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const sale = (await createTx(t, key, saleBody(loc))).json();
    const c = await cancel(key, sale.id, 'Erreur de caisse');
    const record = JSON.parse((await get(key, `/v1/transactions/${c.id}/fiscal-record`)).body);
    expect(record.operation).toBe('cancellation');
    expect(record.cancels.document_number).toBe(hint(sale, 'document_number'));
    expect(record.totals.incl_tax).toBe(-2046);

    const text = await receipt(key, c.id);
    expect(text).toMatch(/\n\s+Ticket d'annulation\n/);
    expect(text).not.toContain('Ticket de caisse');
    expect(text).not.toMatch(/\n\s+ANNULATION\n/);
    const own = (await get(key, `/v1/transactions/${c.id}`)).json();
    expect(text).toContain(`\nTicket n° ${hint(own, 'document_number')}\nAnnule le ticket n° ${record.cancels.document_number}\nMotif : Erreur de caisse\n`);
    expect(text).toMatch(/\nTOTAL TTC EUR\s+-20,46\n/);
    // Every format, English too.
    expect(await receipt(key, c.id, '?format=text&lang=en')).toContain(`Cancels receipt no. ${record.cancels.document_number}`);
    expect(await receipt(key, c.id, '?format=html')).toContain('Ticket d&#39;annulation');
  });

  it('a void and a refund stay apart on paper, both negative as their records', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const refund = (await createTx(t, key, saleBody(loc, { type: 'refund' }))).json();
    const voided = (await createTx(t, key, saleBody(loc, { type: 'void' }))).json();
    const r = await receipt(key, refund.id);
    const v = await receipt(key, voided.id);
    expect(r).toMatch(/\n\s+Ticket de remboursement\n/);
    expect(v).toMatch(/\n\s+Ticket d'annulation\n/);
    for (const text of [r, v]) expect(text).toMatch(/\nTOTAL TTC EUR\s+-20,46\n/);
  });
});

describe('Portugal SAF-T', () => {
  it('an annulment is no new document: its print names the annulled one, says it is no invoice, and carries no ATCUD, QR or hash', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const sale = (await createTx(t, key, saleBody(loc))).json();
    const c = await cancel(key, sale.id, 'Erro na emissão');
    const record = (await get(key, `/v1/transactions/${c.id}/fiscal-record`)).body;
    expect(record).toContain(`<InvoiceNo>${hint(sale, 'invoice_no')}</InvoiceNo>`);
    expect(record).toContain('<InvoiceStatus>A</InvoiceStatus>');

    const text = await receipt(key, c.id);
    expect(text).toMatch(/\n\s+Anulação de documento\n/);
    expect(text).not.toMatch(/Fatura simplificada|\n\s+ANULAÇÃO\n|ATCUD:|\[QR\]|Processado por programa/);
    expect(text).toContain(`\nDocumento anulado: ${hint(sale, 'invoice_no')}\nATCUD do documento anulado: ${hint(sale, 'atcud')}\nMotivo: Erro na emissão\nEste documento não serve de fatura\n`);
    // The annulled document itself still prints as itself, marked ANULADO, its QR field E = A.
    const original = await receipt(key, sale.id);
    expect(original).toMatch(/\n\s+Fatura simplificada\n\s+ANULADO\n/);
    expect(original).toContain('*E:A*');
  });

  it('a credit note names the document it corrects and the reason, amounts positive as in the SAF-T', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'pt-saft');
    const sale = (await createTx(t, key, saleBody(loc))).json();
    const nc = (await createTx(t, key, saleBody(loc, { type: 'refund', metadata: { original_invoice_no: hint(sale, 'invoice_no'), reason: 'Devolução parcial' } }))).json();
    const record = (await get(key, `/v1/transactions/${nc.id}/fiscal-record`)).body;
    expect(record).toContain(`<References><Reference>${hint(sale, 'invoice_no')}</Reference><Reason>Devolução parcial</Reason></References>`);
    const text = await receipt(key, nc.id);
    expect(text).toMatch(/\n\s+Nota de crédito\n/);
    expect(text).toContain(`\nDocumento de origem: ${hint(sale, 'invoice_no')}\nMotivo: Devolução parcial\n`);
    expect(text).toMatch(/\nTOTAL EUR\s+20,46\n/);
  });
});

describe('Spain VERI*FACTU', () => {
  it('a corrective invoice prints the amounts its record and QR carry (negative) and names the invoice it corrects; a cancellation is an annulment naming it', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const sale = (await createTx(t, key, saleBody(loc))).json();
    clock.advance(10_000);
    await t.worker.drain();
    const saleNo = (await get(key, `/v1/transactions/${sale.id}/fiscal-record`)).body.match(/<sf:NumSerieFactura>([^<]+)</)![1]!;
    const refund = (await createTx(t, key, saleBody(loc, { type: 'refund', metadata: { original_invoice_number: saleNo, original_issue_date: '02-03-2026' } }))).json();
    const record = (await get(key, `/v1/transactions/${refund.id}/fiscal-record`)).body;
    expect(record).toContain('<sf:ImporteTotal>-20.46</sf:ImporteTotal>');
    const text = await receipt(key, refund.id);
    expect(text).toMatch(/\n\s+Factura rectificativa simplificada\n/);
    expect(text).toContain(`\nRectifica la factura n.º ${saleNo} de 02-03-2026\n`);
    expect(text).toMatch(/\nTOTAL EUR\s+-20,46\n/);
    expect(text.replace(/\n/g, '')).toContain('importe=-20.46');

    const c = await cancel(key, sale.id);
    const anulacion = await receipt(key, c.id);
    expect(anulacion).toMatch(/\n\s+Anulación de factura\n/);
    expect(anulacion).toContain(`\nFactura anulada n.º ${saleNo}\n`);
    expect(anulacion).not.toContain('Factura simplificada');
  });
});

describe('Italy', () => {
  it('DC: an annullo made by POST …/cancel is titled "emesso per annullamento" and names the annulled document, as its ResoAnnullo does', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'it-dc');
    const sale = (await createTx(t, key, saleBody(loc))).json();
    // Sent, then its result polled (pending → success): only then is it cancellable.
    for (let i = 0; i < 3; i++) {
      await t.worker.drain();
      clock.advance(DC_POLL_AFTER_SECONDS * 1000);
    }
    await t.worker.drain();
    const c = await cancel(key, sale.id);
    const record = (await get(key, `/v1/transactions/${c.id}/fiscal-record`)).body;
    expect(record).toContain(`<Tipologia>A</Tipologia>`);
    expect(record).toContain(`<Progressivo>${hint(sale, 'document_number')}</Progressivo>`);
    const text = await receipt(key, c.id);
    expect(text).toMatch(/\n\s+DOCUMENTO COMMERCIALE emesso per annullamento\n/);
    expect(text).not.toContain('di vendita o prestazione');
    expect(text).toContain(`\nRif. documento n. ${hint(sale, 'document_number')} del 2026-03-02\n`);
  });
});
