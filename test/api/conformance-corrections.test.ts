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
    expect(record.totals.incl_tax).toBe(-2040);

    const text = await receipt(key, c.id);
    expect(text).toMatch(/\n\s+Ticket d'annulation\n/);
    expect(text).not.toContain('Ticket de caisse');
    expect(text).not.toMatch(/\n\s+ANNULATION\n/);
    const own = (await get(key, `/v1/transactions/${c.id}`)).json();
    expect(text).toContain(`\nTicket n° ${hint(own, 'document_number')}\nAnnule le ticket n° ${record.cancels.document_number}\nMotif : Erreur de caisse\n`);
    expect(text).toMatch(/\nTOTAL TTC EUR\s+-20,40\n/);
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
    for (const text of [r, v]) expect(text).toMatch(/\nTOTAL TTC EUR\s+-20,40\n/);
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
  it('DC: an annullo made by POST …/cancel is titled "emesso per ANNULLAMENTO" and names the annulled document, as its ResoAnnullo does', async () => {
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
    // The words of the specifiche tecniche, as every RT and AdE's own documento commerciale print them.
    expect(text).toMatch(/\n\s+DOCUMENTO COMMERCIALE emesso per ANNULLAMENTO\n/);
    expect(text).not.toContain('di vendita o prestazione');
    // The register too, as the ResoAnnullo's MatrTrasm (the location's own pem_matricola).
    expect(record).toContain('<MatrTrasm>99AB-123456</MatrTrasm>');
    expect(text).toContain(`\nDocumento di riferimento:\nN. ${hint(sale, 'document_number')} del 02-03-2026\nMatricola RT 99AB-123456\n`);
    expect(await receipt(key, c.id, '?format=text&lang=en')).toContain(`\nReference document:\nNo. ${hint(sale, 'document_number')} of 02-03-2026\nRegister (RT) 99AB-123456\n`);
  });

  it('DC: a sale prints the amounts paid its DatiPagamento declares (contante, elettronico, ticket, non riscosso), not only the payment method', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'it-dc');
    const sale = (await createTx(t, key, saleBody(loc, { payment_method: 'cash', metadata: { cash_amount: 1000, electronic_amount: 546, ticket_amount: 500, ticket_count: 1 } }))).json();
    const record = (await get(key, `/v1/transactions/${sale.id}/fiscal-record`)).body;
    expect(record).toContain('<Vendita><DatiPagamento><Tipo>PC</Tipo><Importo>10.00</Importo></DatiPagamento><DatiPagamento><Tipo>PE</Tipo><Importo>5.46</Importo></DatiPagamento><DatiPagamento><Tipo>NR</Tipo><Importo>5.00</Importo></DatiPagamento></Vendita>');
    const text = await receipt(key, sale.id);
    // The vouchers the record files under NR print as such (the day's corrispettivi count them as PagatoTicket).
    expect(text).toMatch(/\nTOTALE EUR\s+20,46\nPagamento contante\s+10,00\nPagamento elettronico\s+5,46\nPagamento ticket\s+5,00\n/);
    expect(text).not.toContain('Pagamento: contanti');
    expect(await receipt(key, sale.id, '?format=text&lang=en')).toMatch(/\nCash payment\s+10\.00\nElectronic payment\s+5\.46\nMeal voucher payment\s+5\.00\n/);
    // A sale not collected (payment method other, no amounts): "Non riscosso", the record's NR.
    const unpaid = (await createTx(t, key, saleBody(loc, { payment_method: 'other' }))).json();
    expect((await get(key, `/v1/transactions/${unpaid.id}/fiscal-record`)).body).toContain('<DatiPagamento><Tipo>NR</Tipo><Importo>20.46</Importo></DatiPagamento>');
    expect(await receipt(key, unpaid.id)).toMatch(/\nTOTALE EUR\s+20,46\nNon riscosso\s+20,46\n/);
  });

  it('DC: a reso is "emesso per RESO MERCE" and names the document returned (number, day, register), as its ResoAnnullo does', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'it-dc');
    const reso = (await createTx(t, key, saleBody(loc, {
      type: 'refund', metadata: { is_return: true, original_matricola: '99AB-123456', original_date: '2026-03-01', original_number: '0001-0007' },
    }))).json();
    const record = (await get(key, `/v1/transactions/${reso.id}/fiscal-record`)).body;
    expect(record).toContain('<Tipologia>R</Tipologia>');
    const text = await receipt(key, reso.id);
    expect(text).toMatch(/\n\s+DOCUMENTO COMMERCIALE emesso per RESO MERCE\n/);
    expect(text).toContain('\nDocumento di riferimento:\nN. 0001-0007 del 01-03-2026\nMatricola RT 99AB-123456\n');
    expect(text).toMatch(/\nTOTALE EUR\s+20,46\n/);
  });
});

describe('Italy SDI: the courtesy copy names the document built (its TipoDocumento), never "Fattura" for a credit note', () => {
  /** An SDI document sent through the stub and delivered (its RC through the receiver): cancellable. */
  const delivered = async (key: string, body: object) => {
    const res = await createTx(t, key, body);
    expect(res.statusCode, res.body).toBe(201);
    await t.worker.drain(); // sent, then the stub's RC
    await t.worker.drain();
    const tx = (await get(key, `/v1/transactions/${res.json().id}`)).json();
    expect(tx.status).toBe('delivered');
    return tx as { id: string; render_hints: { key: string; value: string }[] };
  };
  const tipoOf = async (key: string, id: string) => (await get(key, `/v1/transactions/${id}/fiscal-record`)).body.match(/<TipoDocumento>(TD\d\d)</)![1];
  const sdiLocation = async () => {
    const { key } = await t.signup();
    return { key, loc: await createLocation(t, key, 'it-sdi') };
  };

  it('a refund is a nota di credito TD04: "Nota di credito n." under its title, naming the invoice it credits', async () => {
    const { key, loc } = await sdiLocation();
    const nc = (await createTx(t, key, saleBody(loc, {
      type: 'refund', metadata: { invoice_number: 'NC-2026-1', original_invoice_number: 'FT-2026-1', original_invoice_date: '2026-03-01' },
    }))).json();
    expect(await tipoOf(key, nc.id)).toBe('TD04');
    const text = await receipt(key, nc.id);
    expect(text).toMatch(/\n\s+Copia di cortesia della nota di credito\n/);
    expect(text).toContain('\nNota di credito n. NC-2026-1\nRif. fattura n. FT-2026-1 del 01-03-2026\n');
    expect(text).not.toContain('Fattura n.');
    const en = await receipt(key, nc.id, '?format=text&lang=en');
    expect(en).toContain('\nCredit note no. NC-2026-1\n');
    expect(en).not.toContain('Invoice no.');
    expect(await receipt(key, nc.id, '?format=html')).toContain('>Nota di credito n. NC-2026-1</p>');
  });

  it('cancelling an invoice issues a TD04, printed "Nota di credito n. NC-…"; cancelling a credit note a TD05, "Nota di debito n. ND-…"', async () => {
    const { key, loc } = await sdiLocation();
    const invoice = await delivered(key, saleBody(loc, { metadata: { invoice_number: 'FT-7' } }));
    expect(await receipt(key, invoice.id)).toContain('\nFattura n. FT-7\n');
    const nc = await cancel(key, invoice.id);
    expect(await tipoOf(key, nc.id)).toBe('TD04');
    const ncText = await receipt(key, nc.id);
    expect(ncText).toMatch(/\n\s+Copia di cortesia della nota di credito\n/);
    expect(ncText).toContain('\nNota di credito n. NC-FT-7\nRif. fattura n. FT-7 del 02-03-2026\n');
    expect(ncText).not.toContain('Fattura n.');

    const creditNote = await delivered(key, saleBody(loc, { type: 'refund', metadata: { invoice_number: 'NC-8' } }));
    const nd = await cancel(key, creditNote.id);
    expect(await tipoOf(key, nd.id)).toBe('TD05');
    const ndText = await receipt(key, nd.id);
    expect(ndText).toMatch(/\n\s+Copia di cortesia della nota di debito\n/);
    expect(ndText).toContain('\nNota di debito n. ND-NC-8\nRif. nota di credito n. NC-8 del 02-03-2026\n');
    expect(await receipt(key, nd.id, '?format=text&lang=en')).toContain('\nDebit note no. ND-NC-8\nRef. credit note no. NC-8 of 02-03-2026\n');
  });

  it.each([
    ['TD02', 'Copia di cortesia della fattura di acconto', 'Fattura di acconto n.'],
    ['TD06', 'Copia di cortesia della parcella', 'Parcella n.'],
    ['TD24', 'Copia di cortesia della fattura differita', 'Fattura differita n.'],
    // A sale the client declared a credit note is one: the type does not decide, the document does.
    ['TD04', 'Copia di cortesia della nota di credito', 'Nota di credito n.'],
  ] as const)('a sale with tipo_documento %s prints "%s" and "%s"', async (tipo, title, label) => {
    const { key, loc } = await sdiLocation();
    const tx = (await createTx(t, key, saleBody(loc, { metadata: { invoice_number: `${tipo}-1`, tipo_documento: tipo } }))).json();
    expect(await tipoOf(key, tx.id)).toBe(tipo);
    const text = await receipt(key, tx.id);
    expect(text).toMatch(new RegExp(`\\n\\s+${title}\\n`));
    expect(text).toContain(`\n${label} ${tipo}-1\n`);
  });
});
