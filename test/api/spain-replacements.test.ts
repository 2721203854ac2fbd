import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { STORE, startTestApp, type TestApp, unlimitedLimiter } from '../support/harness.ts';
import { getSystem } from '../../src/countries/registry.ts';
import type { TransactionDraft } from '../../src/core/transaction.ts';
import { chainDocumentsRepo } from '../../src/store/repos/chain-documents-repo.ts';
import { createdTx, createLocation, createTx, fiscalRecordOf, getTx, saleBody } from '../support/transactions.ts';
import { ES_NIF } from '../support/fixtures.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';
import { regFactuRequest } from '../../src/countries/es-verifactu/soap.ts';

/*
 * A full invoice replacing simplified ones (F3, src/countries/es/replacement.ts): the
 * customer of one or more tickets (F2) asks for an invoice with their NIF and name; the
 * request names the tickets by transaction id in metadata.replaces_simplified. Only this
 * account's, location's and environment's simplified sales, neither refused nor cancelled,
 * each replaced once (also when two replacements race).
 */

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ limiter: unlimitedLimiter() });
});
afterAll(async () => {
  await t?.close();
});

const CUSTOMER = { nif: 'B64717838', name: 'Cliente Ejemplo SA' };
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false });

const created = (key: string, body: object) => createdTx(t, key, body);
const record = (key: string, id: string) => fiscalRecordOf(t, key, id);

const replacing = (loc: string, ids: unknown, over: Record<string, unknown> = {}) =>
  saleBody(loc, { customer_context: CUSTOMER, metadata: { replaces_simplified: ids }, ...over });

const cancelTx = (key: string, id: string, payload: Record<string, unknown> = {}) =>
  t.request({ method: 'POST', url: `/v1/transactions/${id}/cancel`, key, payload });

/**
 * `ticket` is not cancellable alone while `f3` stands (409, the spec's string); `f3`'s
 * cancellation accepted (the worker drains), `f3` is cancelled and the ticket's cancel is
 * answered 201. Answers that cancellation.
 */
async function cancelledOnlyWithF3(key: string, f3: string, ticket: string) {
  const alone = await cancelTx(key, ticket);
  expect([alone.statusCode, alone.json().error]).toEqual([409, 'transaction cannot be cancelled']);
  expect((await cancelTx(key, f3)).statusCode).toBe(201);
  await t.worker.drain();
  expect((await getTx(t, key, f3)).status).toBe('cancelled');
  const freed = await cancelTx(key, ticket);
  expect(freed.statusCode, freed.body).toBe(201);
  return freed;
}

/**
 * How a refund or void names the invoice of `id` (original_invoice_number, original_issue_date,
 * TicketBAI's original_series), read from its record as the authority holds it.
 */
async function invoiceRef(key: string, id: string): Promise<Record<string, string>> {
  const doc = parser.parse(await record(key, id)) as Record<string, any>;
  if (doc.RegistroAlta) {
    const f = doc.RegistroAlta.IDFactura;
    return { original_invoice_number: f.NumSerieFactura, original_issue_date: f.FechaExpedicionFactura };
  }
  if (doc.RegistroLRFacturasEmitidas) {
    const f = doc.RegistroLRFacturasEmitidas.IDFactura;
    return { original_invoice_number: f.NumSerieFacturaEmisor, original_issue_date: f.FechaExpedicionFacturaEmisor };
  }
  const c = doc.TicketBai.Factura.CabeceraFactura;
  return { original_invoice_number: c.NumFactura, original_issue_date: c.FechaExpedicionFactura, original_series: c.SerieFactura };
}

/** The 409 of a correction naming a ticket that `f3` replaces. */
async function correctionRefusal(key: string, f3: string, type: 'refund' | 'void' = 'refund'): Promise<string> {
  const ref = await invoiceRef(key, f3);
  const series = ref.original_series === undefined ? '' : ` (series ${ref.original_series})`;
  const [done, act] = type === 'void' ? ['voided', 'void'] : ['refunded', 'refund'];
  return `transaction cannot be ${done}: invoice ${ref.original_invoice_number}${series} of ${ref.original_issue_date} (transaction ${f3}) replaces it; ${act} that invoice`;
}

/**
 * A correction (`body`: the refund or void naming an invoice) of `ticket`, which `f3`
 * replaces, is refused while the F3 stands (409 naming the F3; the preview alike), also
 * with the F3's cancellation pending; that of `other` (replaced by none) is accepted at
 * once; the F3 cancelled, the ticket's is accepted.
 */
async function correctedOnlyThroughF3(
  key: string, f3: string, ticket: string, other: string, body: (ref: Record<string, string>) => object, type: 'refund' | 'void' = 'refund',
) {
  const message = await correctionRefusal(key, f3, type);
  const named = body(await invoiceRef(key, ticket));
  const alone = await createTx(t, key, named);
  expect([alone.statusCode, alone.json().error], alone.body).toEqual([409, message]);
  const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: named });
  expect([preview.statusCode, preview.json().error]).toEqual([409, message]);
  const unreplaced = await createTx(t, key, body(await invoiceRef(key, other)));
  expect(unreplaced.statusCode, unreplaced.body).toBe(201);
  await t.worker.drain();
  expect((await cancelTx(key, f3)).statusCode).toBe(201);
  const pending = await createTx(t, key, named);
  expect([pending.statusCode, pending.json().error]).toEqual([409, message]);
  await t.worker.drain();
  expect((await getTx(t, key, f3)).status).toBe('cancelled');
  const freed = await createTx(t, key, named);
  expect(freed.statusCode, freed.body).toBe(201);
  return freed.json();
}

async function refused(key: string, body: object, status: number): Promise<string> {
  const res = await createTx(t, key, body);
  expect(res.statusCode, res.body).toBe(status);
  return res.json().error;
}

describe('VERI*FACTU: a full invoice (F3) replacing tickets', () => {
  it('names each replaced ticket in FacturasSustituidas (its NumSerieFactura and date), names the customer, validates against SuministroLR.xsd', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const first = await created(key, saleBody(loc));
    const second = await created(key, saleBody(loc));
    const f3 = await created(key, replacing(loc, [first.id, second.id]));
    const xml = await record(key, f3.id);
    const alta = (parser.parse(xml) as Record<string, any>).RegistroAlta;
    expect(alta.TipoFactura).toBe('F3');
    const numbers = await Promise.all([first.id, second.id].map(async (id) => (parser.parse(await record(key, id)) as Record<string, any>).RegistroAlta.IDFactura));
    expect(alta.FacturasSustituidas.IDFacturaSustituida).toEqual(numbers);
    expect(alta.Destinatarios.IDDestinatario).toEqual({ NombreRazon: CUSTOMER.name, NIF: CUSTOMER.nif });
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(regFactuRequest({ nif: 'B12345674', nombreRazon: 'Bar Pepe' }, [xml]), 'es/verifactu/SuministroLR.xsd');
      expect(v.ok, v.output).toBe(true);
    } else console.warn(`spain-replacements: XSD validation skipped: ${SCHEMAS_MISSING_MESSAGE}`);
    // The receipt titles it a full invoice (the tickets stay simplified ones).
    const receipt = await t.request({ method: 'GET', url: `/v1/transactions/${f3.id}/receipt?format=text&lang=en`, key });
    expect(receipt.statusCode).toBe(200);
    expect(receipt.body).toMatch(/^ *Invoice$/m);
    expect(receipt.body).not.toContain('Simplified invoice');
  });

  it('an F3 is cancelled as any invoice is: its annulment is built from the stored draft (its replaced_invoices are the service\'s own)', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const ticket = await created(key, saleBody(loc));
    const f3 = await created(key, replacing(loc, [ticket.id]));
    await t.worker.drain(); // the stub accepts the invoice: cancellable now
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${f3.id}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBe(201);
    const annulment = (parser.parse(await record(key, cancel.json().id)) as Record<string, any>).RegistroAnulacion;
    const alta = (parser.parse(await record(key, f3.id)) as Record<string, any>).RegistroAlta.IDFactura;
    expect(annulment.IDFactura).toEqual({ IDEmisorFacturaAnulada: alta.IDEmisorFactura, NumSerieFacturaAnulada: alta.NumSerieFactura, FechaExpedicionFacturaAnulada: alta.FechaExpedicionFactura });
  });

  it('a ticket is replaced once: a second F3 naming it is a 409, also when two race; the other tickets stay replaceable', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const ticket = await created(key, saleBody(loc));
    await created(key, replacing(loc, [ticket.id]));
    expect(await refused(key, replacing(loc, [ticket.id]), 409)).toBe(`metadata.replaces_simplified: transaction ${ticket.id} was already replaced by another invoice`);

    const raced = await created(key, saleBody(loc));
    const results = await Promise.all([1, 2, 3].map(() => createTx(t, key, replacing(loc, [raced.id]))));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);

    // The same request again under its idempotency key answers the replacement it made, not a 409.
    const again = await created(key, saleBody(loc));
    const headers = { 'idempotency-key': `f3-${again.id}` };
    const made = await createTx(t, key, replacing(loc, [again.id]), headers);
    expect(made.statusCode, made.body).toBe(201);
    const replay = await createTx(t, key, replacing(loc, [again.id]), headers);
    expect(replay.statusCode, replay.body).toBeLessThan(300);
    expect(replay.json().id).toBe(made.json().id);

    // A replacement naming a free ticket beside a replaced one is refused whole.
    const free = await created(key, saleBody(loc));
    expect(await refused(key, replacing(loc, [free.id, raced.id]), 409)).toContain(raced.id);
    await created(key, replacing(loc, [free.id]));
  });

  it('another account\'s ticket is unknown (404, as an id that does not exist); another location\'s, a full invoice, a refund or a cancelled ticket are 400s', async () => {
    const other = await t.signup();
    const otherLoc = await createLocation(t, other.key, 'es-verifactu');
    const foreign = await created(other.key, saleBody(otherLoc));
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const unknown = '01890000-0000-7000-8000-000000000000';
    expect(await refused(key, replacing(loc, [foreign.id]), 404)).toBe(`metadata.replaces_simplified: transaction ${foreign.id} not found`);
    expect(await refused(key, replacing(loc, [unknown]), 404)).toBe(`metadata.replaces_simplified: transaction ${unknown} not found`);

    const loc2 = await createLocation(t, key, 'es-verifactu');
    const elsewhere = await created(key, saleBody(loc2));
    expect(await refused(key, replacing(loc, [elsewhere.id]), 400)).toContain('is of another location');

    const full = await created(key, saleBody(loc, { customer_context: CUSTOMER }));
    expect(await refused(key, replacing(loc, [full.id]), 400)).toContain('is not a simplified invoice (F2)');
    const refund = await created(key, saleBody(loc, { type: 'refund' }));
    expect(await refused(key, replacing(loc, [refund.id]), 400)).toContain('is not a sale');

    const ticket = await created(key, saleBody(loc));
    await t.worker.drain();
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${ticket.id}/cancel`, key, payload: {} });
    expect(cancel.statusCode, cancel.body).toBeLessThan(300);
    expect(await refused(key, replacing(loc, [ticket.id]), 400)).toContain('is cancelled or being cancelled');
    await t.worker.drain();
    expect((await getTx(t, key, ticket.id)).status).toBe('cancelled');
    expect(await refused(key, replacing(loc, [ticket.id]), 400)).toContain('is cancelled or being cancelled');
    // Nothing was recorded for the refused requests.
    const { rows } = await t.db.query("SELECT count(*)::int AS n FROM chain_documents WHERE role = 'replaced' AND document = $1", [ticket.id]);
    expect(rows[0]).toEqual({ n: 0 });
  });

  it('a ticket an F3 replaces is cancelled only with it: 409 while the F3 stands, even with its cancellation pending; freed once the F3 is cancelled', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const [a, b] = [await created(key, saleBody(loc)), await created(key, saleBody(loc))];
    const f3 = await created(key, replacing(loc, [a.id, b.id]));
    await t.worker.drain(); // all accepted by the stub: cancellable statuses
    const cancel = (id: string) => cancelTx(key, id);
    const alone = await cancel(a.id);
    expect(alone.statusCode, alone.body).toBe(409);
    expect(alone.json().error).toBe('transaction cannot be cancelled');
    // The F3's cancellation pending: it may still be refused, so the tickets stay its own.
    const f3Cancel = await cancel(f3.id);
    expect(f3Cancel.statusCode, f3Cancel.body).toBe(201);
    expect((await cancel(a.id)).statusCode).toBe(409);
    expect(await refused(key, replacing(loc, [a.id]), 409)).toBe(`metadata.replaces_simplified: transaction ${a.id} was already replaced by another invoice`);
    // Accepted: the F3 is cancelled, its tickets are the sale's documents again.
    await t.worker.drain();
    expect((await getTx(t, key, f3.id)).status).toBe('cancelled');
    const again = await created(key, replacing(loc, [a.id]));
    expect((await cancel(a.id)).statusCode).toBe(409); // replaced again, by the new F3
    const freed = await cancel(b.id);
    expect(freed.statusCode, freed.body).toBe(201);
    expect(again.id).not.toBe(f3.id);
    // No ticket is cancelled while replaced: nothing was recorded for the refused cancels.
    expect((await getTx(t, key, a.id)).cancelled_by_id ?? null).toBeNull();
  });

  it('the F3\'s cancellation refused by the authority freed nothing: the F3 stands again with its tickets; its next, accepted cancellation frees them', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const ticket = await created(key, saleBody(loc));
    const f3 = await created(key, replacing(loc, [ticket.id]));
    await t.worker.drain();
    const cancel = (id: string, payload: Record<string, unknown> = {}) => cancelTx(key, id, payload);
    const refusedCancel = await cancel(f3.id, { sandbox_outcome: 'reject:4102' });
    expect(refusedCancel.statusCode, refusedCancel.body).toBe(201);
    // While it waits for the authority nothing is freed: no second F3 can take the ticket.
    expect(await refused(key, replacing(loc, [ticket.id]), 409)).toContain('was already replaced');
    await t.worker.drain();
    expect((await getTx(t, key, refusedCancel.json().id)).status).toBe('failed_permanent');
    expect(await getTx(t, key, f3.id)).toMatchObject({ status: 'success', cancellation_transaction_id: null });
    // The F3 stands: its ticket is still its own, neither cancellable alone nor replaceable.
    const alone = await cancel(ticket.id);
    expect([alone.statusCode, alone.json().error]).toEqual([409, 'transaction cannot be cancelled']);
    expect(await refused(key, replacing(loc, [ticket.id]), 409)).toContain('was already replaced');
    // Cancelled for real: the ticket is free.
    expect((await cancel(f3.id)).statusCode).toBe(201);
    await t.worker.drain();
    expect((await getTx(t, key, f3.id)).status).toBe('cancelled');
    const freed = await cancel(ticket.id);
    expect(freed.statusCode, freed.body).toBe(201);
    expect(freed.json().cancels_transaction_id).toBe(ticket.id);
  });

  it('a refund of a ticket an F3 replaces is refused while the F3 stands (it corrects the F3); a refund of another ticket is not; freed once the F3 is cancelled', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const [ticket, other] = [await created(key, saleBody(loc)), await created(key, saleBody(loc))];
    const f3 = await created(key, replacing(loc, [ticket.id]));
    const refund = (ref: Record<string, string>) => saleBody(loc, { type: 'refund', metadata: ref });
    await correctedOnlyThroughF3(key, f3.id, ticket.id, other.id, refund);
    // A void (a corrective invoice too) alike, its own words.
    const [a, b] = [await created(key, saleBody(loc)), await created(key, saleBody(loc))];
    const second = await created(key, replacing(loc, [a.id, b.id]));
    const voided = await createTx(t, key, saleBody(loc, { type: 'void', metadata: await invoiceRef(key, b.id) }));
    expect([voided.statusCode, voided.json().error]).toEqual([409, await correctionRefusal(key, second.id, 'void')]);
    // The F3 itself is what is refunded.
    const ofF3 = await createTx(t, key, saleBody(loc, { type: 'refund', customer_context: CUSTOMER, metadata: await invoiceRef(key, second.id) }));
    expect(ofF3.statusCode, ofF3.body).toBe(201);
    // A refund made before its ticket was replaced (then cancelled: a standing one would keep
    // the F3 out): the same request again answers it, not the 409.
    const early = await created(key, saleBody(loc));
    const headers = { 'idempotency-key': `refund-${early.id}` };
    const body = saleBody(loc, { type: 'refund', metadata: await invoiceRef(key, early.id) });
    const first = await createTx(t, key, body, headers);
    expect(first.statusCode, first.body).toBe(201);
    await t.worker.drain();
    expect((await cancelTx(key, first.json().id)).statusCode).toBe(201);
    await t.worker.drain();
    await created(key, replacing(loc, [early.id]));
    const replay = await createTx(t, key, body, headers);
    expect([replay.statusCode, replay.json().id]).toEqual([200, first.json().id]);
  });

  it('the 409s of a replaced ticket (its cancel, its refund) are answered before the ledger takes the entry, the same words', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const ticket = await created(key, saleBody(loc));
    const f3 = await created(key, replacing(loc, [ticket.id]));
    await t.worker.drain();
    const appends = vi.spyOn(t.rt.ledger, 'append');
    try {
      const cancel = await cancelTx(key, ticket.id);
      expect([cancel.statusCode, cancel.json().error]).toEqual([409, 'transaction cannot be cancelled']);
      const refund = await createTx(t, key, saleBody(loc, { type: 'refund', metadata: await invoiceRef(key, ticket.id) }));
      expect([refund.statusCode, refund.json().error]).toEqual([409, await correctionRefusal(key, f3.id)]);
      expect(appends).not.toHaveBeenCalled();
    } finally {
      appends.mockRestore();
    }
  });

  it('a ticket cancelled and replaced at the same time: one of the two wins, never both', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    for (let i = 0; i < 3; i++) {
      const ticket = await created(key, saleBody(loc));
      await t.worker.drain();
      const [cancelled, replaced] = await Promise.all([
        cancelTx(key, ticket.id),
        createTx(t, key, replacing(loc, [ticket.id])),
      ]);
      const won = [cancelled.statusCode, replaced.statusCode];
      expect([[201, 400], [409, 201]], `${cancelled.body} ${replaced.body}`).toContainEqual(won);
    }
  });

  it('the request: a customer with NIF and name, well-formed ids, a sale, no invoice_type but F3, no replaced_invoices of its own', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const ticket = await created(key, saleBody(loc));
    const needsCustomer = "a full invoice replacing simplified ones (F3, metadata.replaces_simplified) names its customer: give the customer's tax id (nif or tax_id) and name in customer_context";
    expect(await refused(key, replacing(loc, [ticket.id], { customer_context: null }), 400)).toBe(needsCustomer);
    expect(await refused(key, replacing(loc, [ticket.id], { customer_context: { nif: CUSTOMER.nif } }), 400)).toBe(needsCustomer);
    const invalid = 'metadata.replaces_simplified must be an array of 1 to 100 distinct transaction ids';
    for (const ids of [[], 'x', [ticket.id, ticket.id], ['not-a-uuid'], ticket.id]) expect(await refused(key, replacing(loc, ids), 400)).toBe(invalid);
    expect(await refused(key, replacing(loc, [ticket.id], { type: 'refund' }), 400)).toBe('metadata.replaces_simplified is only allowed on sale transactions');
    expect(await refused(key, saleBody(loc, { customer_context: CUSTOMER, metadata: { replaces_simplified: [ticket.id], invoice_type: 'F1' } }), 400))
      .toBe('metadata.invoice_type must be F3 or left out when metadata.replaces_simplified is given');
    expect(await refused(key, saleBody(loc, { customer_context: CUSTOMER, metadata: { invoice_type: 'F3' } }), 400))
      .toBe('metadata.invoice_type F3 needs metadata.replaces_simplified: the transaction ids of the simplified invoices it replaces');
    expect(await refused(key, saleBody(loc, { customer_context: CUSTOMER, metadata: { replaces_simplified: [ticket.id], replaced_invoices: [] } }), 400))
      .toBe('metadata.replaced_invoices is written by the service from metadata.replaces_simplified; leave it out');
    // invoice_type F3 given explicitly is accepted with the tickets.
    await created(key, saleBody(loc, { customer_context: CUSTOMER, metadata: { replaces_simplified: [ticket.id], invoice_type: 'F3' } }));
  });
});

describe('SII: a full invoice (F3) replacing tickets', () => {
  const PARTY = { counterparty_nif: 'A13585625', counterparty_name: 'Cliente Ejemplo SA' };

  it('names each ticket in FacturasAgrupadas as it was reported (NumSerieFacturaEmisor and date) and the counterparty', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const ticket = await created(key, saleBody(loc, { metadata: { simplified: true } }));
    const f3 = await created(key, saleBody(loc, { metadata: { ...PARTY, replaces_simplified: [ticket.id] } }));
    const factura = (parser.parse(await record(key, f3.id)) as Record<string, any>).RegistroLRFacturasEmitidas;
    const reported = (parser.parse(await record(key, ticket.id)) as Record<string, any>).RegistroLRFacturasEmitidas.IDFactura;
    expect(factura.FacturaExpedida.TipoFactura).toBe('F3');
    expect(factura.FacturaExpedida.FacturasAgrupadas.IDFacturaAgrupada).toEqual({
      NumSerieFacturaEmisor: reported.NumSerieFacturaEmisor, FechaExpedicionFacturaEmisor: reported.FechaExpedicionFacturaEmisor,
    });
    expect(factura.FacturaExpedida.Contraparte).toEqual({ NombreRazon: PARTY.counterparty_name, NIF: PARTY.counterparty_nif });
  });

  it('a ticket is replaced once per location, whatever series (chain) the replacements are numbered in, also when they race', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const ticket = await created(key, saleBody(loc, { metadata: { simplified: true } }));
    const results = await Promise.all(['X', 'Y', 'Z'].map((series) =>
      createTx(t, key, saleBody(loc, { metadata: { ...PARTY, series, replaces_simplified: [ticket.id] } }))));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
    const { rows } = await t.db.query("SELECT count(*)::int AS n FROM chain_documents WHERE role = 'replaced' AND document = $1", [ticket.id]);
    expect(rows[0]).toEqual({ n: 1 });
  });

  it('a ticket replaced by an F3 of another series is cancelled only with it; the F3 cancelled, the ticket is cancellable and replaceable again', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const [a, b] = [await created(key, saleBody(loc, { metadata: { simplified: true } })), await created(key, saleBody(loc, { metadata: { simplified: true } }))];
    const f3 = await created(key, saleBody(loc, { metadata: { ...PARTY, series: 'F', replaces_simplified: [a.id, b.id] } }));
    await t.worker.drain();
    await cancelledOnlyWithF3(key, f3.id, a.id);
    await created(key, saleBody(loc, { metadata: { ...PARTY, series: 'G', replaces_simplified: [b.id] } }));
  });

  it('a refund (R5) or void (baja) of a ticket the F3 replaces is refused while the F3 stands; freed once it is cancelled; another ticket\'s is not', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const ticket = async () => created(key, saleBody(loc, { metadata: { simplified: true } }));
    const [a, b, c, d] = [await ticket(), await ticket(), await ticket(), await ticket()];
    const f3 = await created(key, saleBody(loc, { metadata: { ...PARTY, series: 'F', replaces_simplified: [a.id] } }));
    await correctedOnlyThroughF3(key, f3.id, a.id, b.id, (ref) => saleBody(loc, { type: 'refund', metadata: { simplified: true, ...ref } }));
    const second = await created(key, saleBody(loc, { metadata: { ...PARTY, series: 'F', replaces_simplified: [c.id] } }));
    await correctedOnlyThroughF3(key, second.id, c.id, d.id, (ref) => saleBody(loc, { type: 'void', metadata: ref }), 'void');
  });

  it.runIf(STORE === 'postgres')('a refund racing an F3 that replaces its ticket waits for it under the ticket reference\'s lock: the F3 committed first, the refund is refused', async () => {
    const { key, accountId } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const [a, b] = [await created(key, saleBody(loc, { metadata: { simplified: true } })), await created(key, saleBody(loc, { metadata: { simplified: true } }))];
    const f3 = await created(key, saleBody(loc, { metadata: { ...PARTY, series: 'F', replaces_simplified: [b.id] } }));
    const ref = await invoiceRef(key, a.id);
    const scope = `replaced:es-sii:${accountId}:${ES_NIF}`; // the issuer's (SaleReplacement.scope)
    const body = saleBody(loc, { type: 'refund', metadata: { simplified: true, ...ref } });
    const named = getSystem('es-sii').replaces!.corrected(body as unknown as TransactionDraft)!.ref;
    let refund: Promise<Awaited<ReturnType<typeof createTx>>> | undefined;
    // An F3 writing its replacement of `a` (as transaction-entry.ts does: the ref's lock, its
    // row, the metadata naming it), not committed while the refund is checked and written.
    await t.db.transaction(async (tx) => {
      await chainDocumentsRepo.lockDocument(tx, 'replaced_ref', scope, named);
      await chainDocumentsRepo.insert(tx, { role: 'replaced_ref', chainKey: scope, document: named, transactionId: f3.id, now: new Date() });
      const entry = { transaction_id: a.id, number: ref.original_invoice_number, issue_date: ref.original_issue_date };
      await tx.query(
        "UPDATE transactions SET normalized = jsonb_set(normalized::jsonb, '{metadata,replaced_invoices}', (normalized::jsonb->'metadata'->'replaced_invoices') || $2::jsonb)::json WHERE id = $1",
        [f3.id, JSON.stringify([entry])],
      );
      refund = createTx(t, key, body);
      await new Promise((r) => setTimeout(r, 500));
    });
    const res = await refund!;
    expect([res.statusCode, res.json().error], res.body).toEqual([409, await correctionRefusal(key, f3.id)]);
  });

  it('the counterparty is required, simplified: true is refused, a full invoice is not replaced', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-sii');
    const ticket = await created(key, saleBody(loc, { metadata: { simplified: true } }));
    expect(await refused(key, saleBody(loc, { metadata: { replaces_simplified: [ticket.id] } }), 400))
      .toBe('counterparty_nif and counterparty_name are required in metadata for an SII invoice replacing simplified ones (F3, metadata.replaces_simplified)');
    expect(await refused(key, saleBody(loc, { metadata: { ...PARTY, simplified: true, replaces_simplified: [ticket.id] } }), 400))
      .toBe('metadata.simplified cannot be true with metadata.replaces_simplified: the invoice replacing simplified ones is a full one (F3)');
    const full = await created(key, saleBody(loc, { metadata: PARTY }));
    expect(await refused(key, saleBody(loc, { metadata: { ...PARTY, replaces_simplified: [full.id] } }), 400)).toContain('is not a simplified invoice (F2)');
  });
});

describe('TicketBAI: a full invoice (F3) replacing tickets', () => {
  it('says FacturaEmitidaSustitucionSimplificada S and names each ticket by series, number and date; XSD-valid', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    const tickets = [await created(key, saleBody(loc)), await created(key, saleBody(loc))];
    const f3 = await created(key, replacing(loc, tickets.map((x) => x.id)));
    const xml = await record(key, f3.id);
    const cabecera = (parser.parse(xml) as Record<string, any>).TicketBai.Factura.CabeceraFactura;
    expect(cabecera.FacturaSimplificada).toBe('N');
    expect(cabecera.FacturaEmitidaSustitucionSimplificada).toBe('S');
    const named = await Promise.all(tickets.map(async (x) => {
      const c = (parser.parse(await record(key, x.id)) as Record<string, any>).TicketBai.Factura.CabeceraFactura;
      expect(c.FacturaEmitidaSustitucionSimplificada).toBe('N');
      return { SerieFactura: c.SerieFactura, NumFactura: c.NumFactura, FechaExpedicionFactura: c.FechaExpedicionFactura };
    }));
    expect(cabecera.FacturasRectificadasSustituidas.IDFacturaRectificadaSustituida).toEqual(named);
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(xml, 'es/ticketbai/ticketbaiv1-2-2.xsd');
      expect(v.ok, v.output).toBe(true);
    }
    expect(await refused(key, replacing(loc, [tickets[0]!.id]), 409)).toContain('was already replaced');
  });

  it('a ticket the substitution invoice replaces is cancelled only with it (409); the invoice cancelled, its tickets are cancellable and replaceable again', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    const [a, b] = [await created(key, saleBody(loc)), await created(key, saleBody(loc))];
    const f3 = await created(key, replacing(loc, [a.id, b.id]));
    await t.worker.drain();
    const freed = await cancelledOnlyWithF3(key, f3.id, a.id);
    expect(freed.json().cancels_transaction_id).toBe(a.id);
    const again = await created(key, replacing(loc, [b.id]));
    const bAlone = await cancelTx(key, b.id);
    expect([bAlone.statusCode, bAlone.json().error]).toEqual([409, 'transaction cannot be cancelled']);
    expect(again.id).not.toBe(f3.id);
  });

  it('a rectificativa of a ticket the substitution invoice replaces is refused while it stands (with the ticket\'s series or none; another series is another invoice); freed once it is cancelled', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-ticketbai');
    const [ticket, other] = [await created(key, saleBody(loc)), await created(key, saleBody(loc))];
    const f3 = await created(key, replacing(loc, [ticket.id]));
    const refund = (ref: Record<string, string>) => saleBody(loc, { type: 'refund', metadata: ref });
    const { original_series: series, ...unseried } = await invoiceRef(key, ticket.id);
    expect(series).toBeTruthy();
    const noSeries = await createTx(t, key, refund(unseried));
    expect([noSeries.statusCode, noSeries.json().error]).toEqual([409, await correctionRefusal(key, f3.id)]);
    const otherSeries = await createTx(t, key, refund({ ...unseried, original_series: `${series}X` }));
    expect(otherSeries.statusCode, otherSeries.body).toBe(201);
    await correctedOnlyThroughF3(key, f3.id, ticket.id, other.id, refund);
  });
});

/*
 * The reverse order, and the issuer's scope: a ticket a standing refund or void corrects
 * (naming it by number and date) is not replaced by an F3 afterwards (409 naming the ticket
 * and the correction) until the correction is cancelled or refused by the authority; and
 * both checks run over every location of the issuer (same account, environment and NIF;
 * TicketBAI also the territory), whose numbers the tickets are.
 */
const OTHER_NIF = 'B64717838';

/** How the F3's 409 names an invoice (number, TicketBAI series, date), as invoiceRef reads it. */
const nameOf = (r: Record<string, string>) =>
  `${r.original_invoice_number}${r.original_series === undefined ? '' : ` (series ${r.original_series})`} of ${r.original_issue_date}`;

/** The 409 of an F3 naming `ticket`, which the standing `correction` corrects already. */
async function replacementRefusal(key: string, ticket: string, correction: string): Promise<string> {
  const [named, by] = [await invoiceRef(key, ticket), await invoiceRef(key, correction)];
  return `metadata.replaces_simplified: transaction ${ticket} (invoice ${nameOf(named)}) was already corrected by invoice ${nameOf(by)} (transaction ${correction}); an F3 cannot replace it`;
}

describe('Spain: a refund and an F3 of one ticket exclude each other, at any location of the issuer', () => {
  it('VERI*FACTU: an F3 naming a ticket a standing refund or void corrects is a 409 naming both (preview alike, before the ledger takes it); a refund refused by AEAT or cancelled corrects nothing', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const ticket = async () => created(key, saleBody(loc));
    const [a, b, c, d] = [await ticket(), await ticket(), await ticket(), await ticket()];
    const correction = async (id: string, type: 'refund' | 'void' = 'refund', over: Record<string, unknown> = {}) =>
      created(key, saleBody(loc, { type, metadata: { ...(await invoiceRef(key, id)), ...over } }));
    const refund = await correction(a.id);
    const message = await replacementRefusal(key, a.id, refund.id);
    const appends = vi.spyOn(t.rt.ledger, 'append');
    try {
      // The whole F3 is refused, also beside a free ticket.
      const res = await createTx(t, key, replacing(loc, [b.id, a.id]));
      expect([res.statusCode, res.json().error], res.body).toEqual([409, message]);
      expect(appends).not.toHaveBeenCalled();
    } finally {
      appends.mockRestore();
    }
    const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: replacing(loc, [a.id]) });
    expect([preview.statusCode, preview.json().error]).toEqual([409, message]);
    // A void alike.
    const voided = await correction(c.id, 'void');
    expect(await refused(key, replacing(loc, [c.id]), 409)).toBe(await replacementRefusal(key, c.id, voided.id));
    // Refused by AEAT: no correction, the ticket is replaceable.
    const rejected = await correction(d.id, 'refund', { sandbox_outcome: 'reject:4102' });
    await t.worker.drain();
    expect((await getTx(t, key, rejected.id)).status).toBe('failed_permanent');
    await created(key, replacing(loc, [d.id]));
    // The refund's cancellation pending: it stands; accepted, the ticket is replaceable.
    expect((await cancelTx(key, refund.id)).statusCode).toBe(201);
    expect(await refused(key, replacing(loc, [a.id]), 409)).toBe(message);
    await t.worker.drain();
    expect((await getTx(t, key, refund.id)).status).toBe('cancelled');
    await created(key, replacing(loc, [a.id, b.id]));
  });

  /**
   * Shops A and B of one issuer, `other` of another NIF: tickets of A; an F3 at A and a
   * refund at B of one ticket exclude each other, in both orders (the 409s name the other
   * document); at `other` the same number is another invoice. Answers a third ticket of A,
   * not yet replaced or refunded.
   */
  async function excludeAcrossShops(key: string, shops: { shopA: string; shopB: string; other: string }, make: {
    ticket: () => ReturnType<typeof created>;
    f3At: (loc: string, ids: string[]) => object;
    refundAt: (loc: string, id: string) => ReturnType<typeof createTx>;
  }): ReturnType<typeof created> {
    const { shopA, shopB, other } = shops;
    const [a, b, c] = [await make.ticket(), await make.ticket(), await make.ticket()];
    // F3 at A, refund at B: 409 naming the F3; at the other issuer the number is another invoice.
    const f3 = await created(key, make.f3At(shopA, [a.id]));
    const atB = await make.refundAt(shopB, a.id);
    expect([atB.statusCode, atB.json().error], atB.body).toEqual([409, await correctionRefusal(key, f3.id)]);
    const atOther = await make.refundAt(other, a.id);
    expect(atOther.statusCode, atOther.body).toBe(201);
    // Refund at B, F3 at A: 409 naming the refund.
    const refundB = await make.refundAt(shopB, b.id);
    expect(refundB.statusCode, refundB.body).toBe(201);
    expect(await refused(key, make.f3At(shopA, [b.id]), 409)).toBe(await replacementRefusal(key, b.id, refundB.json().id));
    return c;
  }

  /** Three locations of `system`: two of the fixture NIF, one of another. */
  async function threeShops(key: string, system: 'es-verifactu' | 'es-sii' | 'es-ticketbai', b: string) {
    return {
      shopA: await createLocation(t, key, system),
      shopB: await createLocation(t, key, system, { name: b }),
      other: await createLocation(t, key, system, { name: 'Otra SL', tax_id: OTHER_NIF }),
    };
  }

  it('VERI*FACTU: a refund at shop B of a ticket of shop A (same NIF) is refused while an F3 at A replaces it, and an F3 at A is refused for a ticket refunded at B; another NIF\'s invoices are others', async () => {
    const { key } = await t.signup();
    const shops = await threeShops(key, 'es-verifactu', 'Bar Pepe Chamberí');
    const refundAt = async (loc: string, id: string) => createTx(t, key, saleBody(loc, { type: 'refund', metadata: await invoiceRef(key, id) }));
    const c = await excludeAcrossShops(key, shops, { ticket: () => created(key, saleBody(shops.shopA)), f3At: (loc, ids) => replacing(loc, ids), refundAt });
    // Refund at the other issuer, F3 at A: replaced.
    expect((await refundAt(shops.other, c.id)).statusCode).toBe(201);
    await created(key, replacing(shops.shopA, [c.id]));
  });

  it('SII: refund at B and F3 at A of one issuer exclude each other, both orders; another NIF\'s do not', async () => {
    const PARTY = { counterparty_nif: 'A13585625', counterparty_name: 'Cliente Ejemplo SA' };
    const { key } = await t.signup();
    const shops = await threeShops(key, 'es-sii', 'Bar Pepe Triana');
    const f3At = (loc: string, ids: string[]) => saleBody(loc, { metadata: { ...PARTY, series: 'F', replaces_simplified: ids } });
    const refundAt = async (loc: string, id: string) => createTx(t, key, saleBody(loc, { type: 'refund', metadata: { simplified: true, ...(await invoiceRef(key, id)) } }));
    const c = await excludeAcrossShops(key, shops, { ticket: () => created(key, saleBody(shops.shopA, { metadata: { simplified: true } })), f3At, refundAt });
    expect((await refundAt(shops.other, c.id)).statusCode).toBe(201);
    await created(key, f3At(shops.shopA, [c.id]));
  });

  it('TicketBAI: a rectificativa at B and a substitution invoice at A of one issuer and territory exclude each other, both orders; another NIF\'s do not', async () => {
    const { key } = await t.signup();
    const shops = await threeShops(key, 'es-ticketbai', 'Bar Pepe Gros');
    const refundAt = async (loc: string, id: string) => createTx(t, key, saleBody(loc, { type: 'refund', metadata: await invoiceRef(key, id) }));
    const c = await excludeAcrossShops(key, shops, { ticket: () => created(key, saleBody(shops.shopA)), f3At: (loc, ids) => replacing(loc, ids), refundAt });
    // Without the series, the rectificativa names that number of that date in any series: still the ticket.
    const { original_series: _series, ...unseried } = await invoiceRef(key, c.id);
    const bare = await createTx(t, key, saleBody(shops.shopB, { type: 'refund', metadata: unseried }));
    expect(bare.statusCode, bare.body).toBe(201);
    expect(await refused(key, replacing(shops.shopA, [c.id]), 409)).toBe(await replacementRefusal(key, c.id, bare.json().id));
  });

  it.runIf(STORE === 'postgres')('an F3 racing a refund of its ticket waits for it under the ticket reference\'s lock: the refund committed first, the F3 is refused', async () => {
    const { key, accountId } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const [a, b] = [await created(key, saleBody(loc)), await created(key, saleBody(loc))];
    const ref = await invoiceRef(key, a.id);
    // A refund of b, rewritten in the transaction below to name a (as transaction-entry.ts
    // writes a correction: the ref's lock, its row), not committed while the F3 is written.
    const refund = await created(key, saleBody(loc, { type: 'refund', metadata: await invoiceRef(key, b.id) }));
    const named = getSystem('es-verifactu').replaces!.corrected(saleBody(loc, { type: 'refund', metadata: ref }) as unknown as TransactionDraft)!.ref;
    const scope = `replaced:es-verifactu:${accountId}:${ES_NIF}`;
    let f3: Promise<Awaited<ReturnType<typeof createTx>>> | undefined;
    await t.db.transaction(async (tx) => {
      await chainDocumentsRepo.lockDocument(tx, 'replaced_ref', scope, named);
      await chainDocumentsRepo.insert(tx, { role: 'corrected_ref', chainKey: scope, document: named, transactionId: refund.id, now: new Date() });
      await tx.query(
        "UPDATE transactions SET normalized = jsonb_set(jsonb_set(normalized::jsonb, '{metadata,original_invoice_number}', to_jsonb($2::text)), '{metadata,original_issue_date}', to_jsonb($3::text))::json WHERE id = $1",
        [refund.id, ref.original_invoice_number, ref.original_issue_date],
      );
      f3 = createTx(t, key, replacing(loc, [a.id]));
      await new Promise((r) => setTimeout(r, 500));
    });
    const res = await f3!;
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().error).toMatch(new RegExp(`^metadata\\.replaces_simplified: transaction ${a.id} \\(invoice ${ref.original_invoice_number} of ${ref.original_issue_date}\\) was already corrected by invoice .+ \\(transaction ${refund.id}\\); an F3 cannot replace it$`));
  });

  it('migration 0055: the refs an F3 registered under its location move to its issuer\'s scope, and a refund stored before registers the invoice it names', async () => {
    const { key, accountId } = await t.signup();
    const shopA = await createLocation(t, key, 'es-verifactu');
    const shopB = await createLocation(t, key, 'es-verifactu', { name: 'Bar Pepe Chamberí' });
    const tbai = await createLocation(t, key, 'es-ticketbai');
    const [a, b] = [await created(key, saleBody(shopA)), await created(key, saleBody(shopA))];
    const f3 = await created(key, replacing(shopA, [a.id]));
    const refund = await created(key, saleBody(shopB, { type: 'refund', metadata: await invoiceRef(key, b.id) }));
    const ticket = await created(key, saleBody(tbai));
    const rectificativa = await created(key, saleBody(tbai, { type: 'refund', metadata: await invoiceRef(key, ticket.id) }));
    const ids = [f3.id, refund.id, rectificativa.id];
    const rows = async () => (await t.db.query<{ chain_key: string; role: string; document: string; transaction_id: string }>(
      "SELECT chain_key, role, document, transaction_id FROM chain_documents WHERE transaction_id = ANY($1::uuid[]) AND role IN ('replaced_ref', 'corrected_ref') ORDER BY role, transaction_id",
      [ids])).rows;
    const written = await rows();
    expect(written.map((r) => [r.role, r.chain_key, r.transaction_id])).toEqual([
      ['corrected_ref', `replaced:es-verifactu:${accountId}:${ES_NIF}`, refund.id],
      ['corrected_ref', `replaced:es-ticketbai:${accountId}:${ES_NIF}:gipuzkoa`, rectificativa.id],
      ['replaced_ref', `replaced:es-verifactu:${accountId}:${ES_NIF}`, f3.id],
    ]);
    // What a store had before 0055: the F3's ref under its location, no refund registered.
    await t.db.query("DELETE FROM chain_documents WHERE role = 'corrected_ref' AND transaction_id = ANY($1::uuid[])", [ids]);
    await t.db.query("UPDATE chain_documents SET chain_key = $1 WHERE role = 'replaced_ref' AND transaction_id = $2", [`replaced:${shopA}`, f3.id]);
    const file = fs.readFileSync(new URL('../../src/store/migrations/0055_issuer_replaced_refs.sql', import.meta.url), 'utf8');
    await t.db.exec(file);
    expect(await rows()).toEqual(written);
    // Read as the service writes them: a refund at B of the F3's ticket, an F3 of a refunded ticket, refused.
    const atB = await createTx(t, key, saleBody(shopB, { type: 'refund', metadata: await invoiceRef(key, a.id) }));
    expect([atB.statusCode, atB.json().error]).toEqual([409, await correctionRefusal(key, f3.id)]);
    expect(await refused(key, replacing(shopA, [b.id]), 409)).toBe(await replacementRefusal(key, b.id, refund.id));
    expect(await refused(key, replacing(tbai, [ticket.id]), 409)).toBe(await replacementRefusal(key, ticket.id, rectificativa.id));
  });
});
