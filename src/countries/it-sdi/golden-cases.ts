/**
 * Test fixtures (not a test file): the FatturaPA documents the golden files hold, on the
 * fixed clock: a B2B invoice, a consumer invoice, a multi-rate invoice with two exempt
 * natures, the TD04 credit note cancelling the B2B invoice, and an exempt invoice with the
 * stamp duty (DatiBollo); the simplified invoices (TD07)
 * and their notes (TD08, TD09).
 */
import type { FiscalRecord, TransactionDraft } from '../types.ts';
import { NOW, SOFTWARE, draft, line, location } from '../shared/test-fixtures.ts';
import { buildInput, fixedSigningKey, txCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { sdi } from './index.ts';

export interface GoldenCase {
  file: string;
  tx: TransactionDraft;
  record: FiscalRecord;
}

export const goldenLocation = () =>
  location('it-sdi', { legal_name: 'Trattoria Roma Srl', indirizzo: 'Via Roma 1', cap: '00184', comune: 'Roma', provincia: 'RM' });

const iva22 = (over: Parameters<typeof line>[0] = {}) =>
  line({ description: 'Pranzo di lavoro', quantity: 2, unit_price: 1500, tax_rate: 22, tax_amount: 660, total_amount: 3660, ...over });

export function goldenCases(loc = goldenLocation()): GoldenCase[] {
  const out: GoldenCase[] = [];
  const invoice = (file: string, tx: TransactionDraft) => {
    const n = out.length + 1;
    const built = validatedBuild(sdi, loc, tx, { transactionId: `00000000-0000-4000-8000-00000000000${n}`, chain: { seq: n, number: n, previous: null } });
    out.push({ file, tx: built.tx, record: built.record });
  };

  invoice(
    'b2b-invoice.xml',
    draft({
      payment_method: 'transfer',
      items: [iva22()],
      customer_context: {
        tax_id: '12345678903',
        legal_name: 'Cliente Esempio S.p.A.',
        address: { street: 'Corso Buenos Aires 10', postal_code: '20124', city: 'Milano', province: 'MI', country: 'IT' },
      },
      metadata: { invoice_number: 'FT-2026/1', codice_destinatario: 'ABC1234' },
    }),
  );
  invoice(
    'consumer-invoice.xml',
    draft({
      payment_method: 'cash',
      items: [iva22({ description: 'Cena', quantity: 1, unit_price: 4000, tax_amount: 880, total_amount: 4880 })],
      customer_context: {
        codice_fiscale: 'RSSMRA85T10A562S',
        first_name: 'Mario',
        last_name: 'Rossi',
        address: { street: 'Via Garibaldi 5', postal_code: '00153', city: 'Roma', province: 'RM' },
      },
      metadata: { invoice_number: 'FT-2026/2' },
    }),
  );
  invoice(
    'multi-rate-exempt.xml',
    draft({
      payment_method: 'card',
      items: [
        iva22({ description: 'Consulenza', quantity: 1, unit_price: 10000, tax_amount: 2200, total_amount: 12200 }),
        line({ description: 'Catering', quantity: 3, unit_price: 1250, tax_rate: 10, tax_amount: 375, total_amount: 4125 }),
        line({ description: 'Corso di formazione', quantity: 1, unit_price: 5000, tax_rate: 0, tax_amount: 0, total_amount: 5000, natura: 'N4' }),
        line({ description: 'Servizio a cliente estero', quantity: 1, unit_price: 2000, tax_rate: 0, tax_amount: 0, total_amount: 2000, natura: 'N2.1' }),
        line({ description: 'Libri', quantity: 2, unit_price: 1000, tax_rate: 0, tax_amount: 0, total_amount: 2000, natura: 'N4' }),
      ],
      customer_context: { tax_id: 'DE123456789', legal_name: 'Kunde GmbH', address: { street: 'Hauptstrasse 1', postal_code: '10115', city: 'Berlin', country: 'DE' } },
      // A foreign buyer: CodiceDestinatario XXXXXXX, and no PECDestinatario (it goes with 0000000 only: SdI 00426).
      metadata: { invoice_number: 'FT-2026/3', buyer_country: 'DE', codice_destinatario: 'XXXXXXX' },
    }),
  );

  // The TD04 credit note cancelling the B2B invoice: the first record of the location's annulment chain.
  const first = out[0]!;
  const record = sdi.build({
    transactionId: '00000000-0000-4000-8000-000000000004',
    kind: 'cancellation',
    tx: first.tx,
    original: { transactionId: '00000000-0000-4000-8000-000000000001', fiscalId: first.record.fiscalId, tx: first.tx, issuedAt: NOW.toISOString(), documentNumber: first.record.documentNumber },
    location: loc,
    environment: 'test',
    now: NOW,
    chain: { seq: 1, previous: null },
    software: SOFTWARE,
  });
  out.push({ file: 'credit-note-td04.xml', tx: first.tx, record });

  // Stamp duty (bollo.ts): a VAT-exempt service (N4) above 77.47 EUR carries DatiBollo; the
  // merchant recharges the 2.00 with a line of its own (N1, art. 15 DPR 633/1972), which is
  // what puts it in ImportoTotaleDocumento: DatiBollo alone never does.
  invoice(
    'bollo-exempt-invoice.xml',
    draft({
      payment_method: 'transfer',
      items: [
        line({ description: 'Visita medica specialistica', quantity: 1, unit_price: 15000, tax_rate: 0, tax_amount: 0, total_amount: 15000, natura: 'N4' }),
        line({ description: 'Rimborso imposta di bollo', quantity: 1, unit_price: 200, tax_rate: 0, tax_amount: 0, total_amount: 200, natura: 'N1' }),
      ],
      customer_context: {
        codice_fiscale: 'RSSMRA85T10A562S',
        first_name: 'Mario',
        last_name: 'Rossi',
        address: { street: 'Via Garibaldi 5', postal_code: '00153', city: 'Roma', province: 'RM' },
      },
      metadata: { invoice_number: 'FT-2026/5' },
    }),
  );
  return out;
}

/**
 * Simplified invoices (TD07, FatturaElettronicaSemplificata FSM10, Schema_VFSM10.xsd): a
 * consumer's (codice fiscale, named, with an address) over two rates and an exempt line,
 * and a company's identified by its partita IVA alone (the name and address art. 21-bis
 * does not ask for left out).
 */
export function semplificataCases(loc = goldenLocation()): GoldenCase[] {
  const out: GoldenCase[] = [];
  const invoice = (file: string, tx: TransactionDraft) => {
    const n = out.length + 11;
    const built = validatedBuild(sdi, loc, tx, { transactionId: `00000000-0000-4000-8000-0000000000${n}`, chain: { seq: n, number: n, previous: null } });
    out.push({ file, tx: built.tx, record: built.record });
  };
  invoice(
    'simplified-consumer-td07.xml',
    draft({
      payment_method: 'cash',
      items: [
        iva22({ description: 'Pranzo di lavoro', quantity: 2, unit_price: 1500, tax_amount: 660, total_amount: 3660 }),
        line({ description: 'Vino della casa', quantity: 1, unit_price: 1000, tax_rate: 10, tax_amount: 100, total_amount: 1100 }),
        line({ description: 'Visita guidata', quantity: 1, unit_price: 2500, tax_rate: 0, tax_amount: 0, total_amount: 2500, natura: 'N4' }),
      ],
      customer_context: {
        codice_fiscale: 'RSSMRA85T10A562S',
        first_name: 'Mario',
        last_name: 'Rossi',
        address: { street: 'Via Garibaldi 5', postal_code: '00153', city: 'Roma', province: 'RM' },
      },
      metadata: { invoice_number: 'FS-2026/1', tipo_documento: 'TD07', invoice_date: '2026-01-14' },
    }),
  );
  invoice(
    'simplified-company-td07.xml',
    draft({
      payment_method: 'card',
      items: [iva22({ description: 'Cancelleria', quantity: 1, unit_price: 8000, tax_amount: 1760, total_amount: 9760 })],
      customer_context: { tax_id: 'IT12345678903' },
      metadata: { invoice_number: 'FS-2026/2', tipo_documento: 'TD07', codice_destinatario: 'ABC1234' },
    }),
  );
  return out;
}

/**
 * The simplified notes (Schema_VFSM10.xsd, FSM10), each naming what it corrects in
 * DatiFatturaRettificata (DPR 633/1972 art. 21-bis c.1 lett. h): the nota di credito
 * semplificata (TD08) cancelling the consumer's TD07 above; a refund the request asks in the
 * simplified form (`tipo_documento` TD07 on a refund), a TD08 naming the company's TD07 and
 * the goods it credits; and the nota di debito semplificata (TD09) cancelling that refund.
 */
export function semplificataNoteCases(loc = goldenLocation()): GoldenCase[] {
  const [consumer] = semplificataCases(loc);
  const out: GoldenCase[] = [];
  const cancel = (file: string, original: GoldenCase, n: number, originalId: string) => {
    const record = sdi.build({
      transactionId: `00000000-0000-4000-8000-0000000000${n}`,
      kind: 'cancellation',
      tx: original.tx,
      original: { transactionId: originalId, fiscalId: original.record.fiscalId, tx: original.tx, issuedAt: NOW.toISOString(), documentNumber: original.record.documentNumber },
      location: loc,
      environment: 'test',
      now: NOW,
      chain: { seq: n - 20, previous: null },
      software: SOFTWARE,
    });
    out.push({ file, tx: original.tx, record });
  };
  cancel('simplified-credit-note-td08.xml', consumer!, 21, '00000000-0000-4000-8000-000000000011');
  const refundId = '00000000-0000-4000-8000-000000000022';
  const refund = validatedBuild(sdi, loc, draft({
    type: 'refund',
    payment_method: 'card',
    items: [line({ description: 'Cancelleria (reso)', quantity: 1, unit_price: 2000, tax_rate: 22, tax_amount: 440, total_amount: 2440 })],
    customer_context: { tax_id: 'IT12345678903' },
    metadata: {
      invoice_number: 'NCS-2026/1', tipo_documento: 'TD07', codice_destinatario: 'ABC1234',
      original_invoice_number: 'FS-2026/2', original_invoice_date: '2026-01-15',
    },
  }), { transactionId: refundId, chain: { seq: 22, number: 22, previous: null } });
  out.push({ file: 'simplified-refund-td08.xml', tx: refund.tx, record: refund.record });
  cancel('simplified-debit-note-td09.xml', out[1]!, 23, refundId);
  return out;
}

/**
 * A refund the client did not ask in the simplified form (no `tipo_documento`) naming the
 * consumer's TD07 above by its number and date: the core finds that TD07 among the numbers
 * issued (`FiscalSystem.correctedSale`) and the refund is issued as the simplified credit
 * note, TD08, as `tipo_documento: TD07` would have made it. `found`: the sales the core's
 * lookup hands the plug-in (the TD07; [] as if none was found).
 */
export function derivedRefundCase(loc = goldenLocation(), opts: { found?: 'td07' | 'none'; metadata?: Record<string, unknown> } = {}): GoldenCase {
  const [consumer] = semplificataCases(loc);
  const request = draft({
    type: 'refund',
    payment_method: 'cash',
    items: [line({ description: 'Vino della casa (reso)', quantity: 1, unit_price: 1000, tax_rate: 10, tax_amount: 100, total_amount: 1100 })],
    customer_context: {
      codice_fiscale: 'RSSMRA85T10A562S',
      first_name: 'Mario',
      last_name: 'Rossi',
      address: { street: 'Via Garibaldi 5', postal_code: '00153', city: 'Roma', province: 'RM' },
    },
    metadata: { invoice_number: 'NC-2026/5', original_invoice_number: 'FS-2026/1', original_invoice_date: '2026-01-14', ...opts.metadata },
  });
  const ctx = txCtx(loc);
  const tx = { ...request, metadata: sdi.validateTransaction(request, ctx) };
  const found = opts.found === 'none'
    ? []
    : [{ transactionId: '00000000-0000-4000-8000-000000000011', tx: consumer!.tx, documentNumber: consumer!.record.documentNumber ?? null, issuedAt: NOW.toISOString() }];
  const stored = sdi.correctedSale!.named({ tx, request, location: loc }) === null
    ? tx
    : { ...tx, metadata: sdi.correctedSale!.resolve({ tx, request, ctx }, found) };
  const record = sdi.build(buildInput(loc, stored, { signingKey: fixedSigningKey(), transactionId: '00000000-0000-4000-8000-000000000024', chain: { seq: 24, number: 24, previous: null } }));
  return { file: 'simplified-refund-derived-td08.xml', tx: stored, record };
}
