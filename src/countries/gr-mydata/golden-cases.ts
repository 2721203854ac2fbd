/**
 * Test fixtures (not a test file): the myDATA documents the golden files hold, on the
 * fixed clock. One series (A) numbered 1..7 through the chain's linkData, as the ledger
 * would hand it over: a retail receipt, a service receipt, an invoice to a Greek
 * business, a TypeB receipt with its income classification, a credit note 5.1 correlated
 * to a MARK, a retail credit note (naming no MARK: "correlation difficulty"), a multi-rate
 * receipt with a 0 % line; then, in the cancellations' sequence, the CancelInvoice call of a
 * transmitted document and the reversing credit note of one AADE never acknowledged; then a
 * credit note 5.2 that names no invoice, a retail credit note naming its receipt's MARK, and
 * the reversing 5.2 of an invoice AADE never acknowledged.
 */
import type { BuildInput, FiscalRecord, TransactionDraft } from '../types.ts';
import { NOW, draft, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { myData } from './index.ts';

export interface MyDataGoldenCase {
  file: string;
  tx: TransactionDraft;
  record: FiscalRecord;
}

export const CORRELATED_MARK = '400001925600940';
export const BUYER_AFM = '123456783';

export const goldenLocation = (over: Record<string, unknown> = {}) => location('gr-mydata', over);

const vat24 = line({ description: 'Φρέντο εσπρέσο', quantity: 2, unit_price: 250, tax_rate: 24, tax_amount: 120, total_amount: 620 });
const vat13 = line({ description: 'Τυρόπιτα', quantity: 1, unit_price: 300, tax_rate: 13, tax_amount: 39, total_amount: 339 });
const vat6 = line({ description: 'Βιβλίο', quantity: 1, unit_price: 1500, tax_rate: 6, tax_amount: 90, total_amount: 1590 });
const vat0 = line({ description: 'Εξαγωγή', quantity: 1, unit_price: 1000, tax_rate: 0, tax_amount: 0, total_amount: 1000 });
const service = line({ description: 'Επισκευή', quantity: 1, unit_price: 4000, tax_rate: 24, tax_amount: 960, total_amount: 4960 });

export function goldenMyDataCases(): MyDataGoldenCase[] {
  const out: MyDataGoldenCase[] = [];
  const typeA = goldenLocation();
  const typeB = goldenLocation({ document_class: 'TypeB' });
  const previousOf = (prev: MyDataGoldenCase | undefined) =>
    prev ? { fingerprint: prev.record.fingerprint, fiscalId: prev.record.fiscalId, issuedAt: NOW.toISOString(), linkData: prev.record.linkData ?? null } : null;

  let seq = 0;
  // The sales' series (A): each document continues the last one of it.
  let lastSale: MyDataGoldenCase | undefined;
  const add = (file: string, loc: ReturnType<typeof goldenLocation>, tx: TransactionDraft) => {
    seq += 1;
    const built = validatedBuild(myData, loc, tx, {
      transactionId: `00000000-0000-4000-8000-0000000000${String(seq).padStart(2, '0')}`,
      now: new Date(NOW.getTime() + seq * 60_000),
      chain: { seq, previous: previousOf(lastSale) },
    });
    lastSale = { file, tx: built.tx, record: built.record };
    out.push(lastSale);
  };
  add('retail-receipt.xml', typeA, draft({ items: [vat24, vat13], payment_method: 'cash' }));
  add('service-receipt.xml', typeA, draft({ items: [service], metadata: { invoice_type: '11.2' } }));
  add('invoice-counterpart.xml', typeA, draft({ items: [vat24, vat13], payment_method: 'transfer', metadata: { counterpart_vat_number: BUYER_AFM, counterpart_postal_code: '10563', counterpart_city: 'Αθήνα' } }));
  add('typeb-classified.xml', typeB, draft({ items: [vat24, vat13] }));
  add('credit-note.xml', typeB, draft({ type: 'refund', items: [vat13], metadata: { counterpart_vat_number: BUYER_AFM, correlated_mark: CORRELATED_MARK } }));
  add('retail-credit.xml', typeA, draft({ type: 'refund', items: [vat24], payment_method: 'cash' }));
  add('multi-rate.xml', typeB, draft({ items: [vat24, vat13, vat6, vat0], payment_method: 'other', metadata: { vat_exemption_category: 27 } }));

  // The cancellations' own sequence (`<chain>#annulments`).
  const cancel = (file: string, original: MyDataGoldenCase, upstreamId: string | null, n: number, prev: MyDataGoldenCase | undefined) => {
    const input: BuildInput = {
      transactionId: `00000000-0000-4000-8000-0000000001${String(n).padStart(2, '0')}`,
      kind: 'cancellation',
      tx: original.tx,
      original: {
        transactionId: 'original', fiscalId: original.record.fiscalId, tx: original.tx, issuedAt: NOW.toISOString(),
        documentNumber: original.record.documentNumber, upstreamId,
      },
      location: typeA,
      environment: 'test',
      now: new Date(NOW.getTime() + (20 + n) * 60_000),
      chain: { seq: n, previous: previousOf(prev) },
      software: { name: 'fiscal-api', version: '0.1.0', vendorTaxId: 'A99800005' },
    };
    out.push({ file, tx: original.tx, record: myData.build(input) });
  };
  const cancelled = out[0]!;
  cancel('cancellation.json', cancelled, CORRELATED_MARK, 1, undefined);
  cancel('cancellation-credit-note.xml', out[1]!, null, 2, out[out.length - 1]);

  // A credit note 5.2 that names no invoice and a retail one naming its receipt; the
  // reversal of an invoice AADE never acknowledged, a 5.2 (A-CN-2).
  add('credit-note-uncorrelated.xml', typeB, draft({ type: 'refund', items: [vat24], payment_method: 'transfer', metadata: { counterpart_vat_number: BUYER_AFM } }));
  add('retail-credit-correlated.xml', typeA, draft({ type: 'refund', items: [vat13], payment_method: 'cash', metadata: { correlated_mark: CORRELATED_MARK } }));
  cancel('cancellation-of-invoice.xml', out[2]!, null, 3, out[8]);
  return out;
}
