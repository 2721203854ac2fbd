/**
 * Test fixtures (not a test file): the SAF-T (PT) documents the golden files hold, one
 * location's January on the fixed clock and the fixed producer key: two simplified
 * invoices (FS, chained), an invoice (FT) to a customer with a NIF and all four mainland
 * rates, a credit note (NC) for part of the first FS, the cancellation of the second FS,
 * and the month's SAF-T file.
 *
 * The producer key (golden/producer-key.pem, golden/producer-cert.pem) is an RSA-1024
 * key pair made once with openssl for these tests, as AT certifies 1024-bit keys (the
 * shared fixedSigningKey() is RSA-2048, whose signature does not fit the SAF-T Hash):
 *   openssl genrsa 1024 | openssl pkcs8 -topk8 -nocrypt -out producer-key.pem
 *   openssl req -x509 -new -key producer-key.pem -out producer-cert.pem -days 36500 -set_serial 1 \
 *     -subj "/C=PT/O=Fiscal API test software producer/CN=SAF-T PT golden test key (not secret)"
 * It signs nothing real. Never use it outside tests.
 */
import { readFileSync } from 'node:fs';
import { toSigningKey } from '../../certificates/signing-key.ts';
import type { FiscalRecord, SigningKey, TransactionDraft } from '../types.ts';
import type { InProcessSigningKey } from '../../core/signing-key.ts';
import { NOW, SOFTWARE, draft, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { saft } from './index.ts';
import { buildSaftFile, type SaftFile } from './saft-file.ts';

let key: InProcessSigningKey | undefined;
/** The fixed RSA-1024 producer key of the golden files. */
export function goldenProducerKey(): InProcessSigningKey {
  if (key) return key;
  const dir = new URL('./golden/', import.meta.url);
  key = toSigningKey(
    { privateKeyPem: readFileSync(new URL('producer-key.pem', dir), 'utf8'), certificatePem: readFileSync(new URL('producer-cert.pem', dir), 'utf8'), chainPem: [] },
    'uploaded',
  );
  return key;
}

export const goldenPtLocation = () => ({ ...location('pt-saft'), name: 'Pastelaria Belém, Lda.', address: 'Rua de Belém 84, 1300-085 Lisboa' });

export interface PtGoldenCase {
  file: string;
  tx: TransactionDraft;
  record: FiscalRecord;
  /** When it was built (the record's SystemEntryDate). */
  at: Date;
  kind: 'record' | 'cancellation';
}

const nata = line({ description: 'Pastel de nata', quantity: 4, unit_price: 100, tax_rate: 13, tax_amount: 52, total_amount: 452 });
const cafe = line({ description: 'Café — chávena “bica”', quantity: 2, unit_price: 60, tax_rate: 23, tax_amount: 28, total_amount: 148 });
const cha = line({ description: 'Chá verde 緑茶', quantity: 1, unit_price: 150, tax_rate: 23, tax_amount: 35, total_amount: 185 });

export const FT_CUSTOMER = {
  nif: '123456789',
  name: 'Cliente Exemplo, Lda.',
  address: 'Rua Augusta 10',
  city: 'Lisboa',
  postal_code: '1100-053',
  country: 'PT',
};

export function goldenPtCases(loc = goldenPtLocation()): PtGoldenCase[] {
  const out: PtGoldenCase[] = [];
  const heads = new Map<string, PtGoldenCase>();
  const signingKey = goldenProducerKey();
  const add = (file: string, tx: TransactionDraft, cancels?: PtGoldenCase) => {
    const n = out.length + 1;
    const at = new Date(NOW.getTime() + n * 60_000);
    const transactionId = `00000000-0000-4000-8000-0000000000e${n}`;
    if (cancels) {
      const built = validatedBuild(saft, loc, cancels.tx, {
        transactionId,
        kind: 'cancellation',
        now: at,
        signingKey,
        tx: { ...cancels.tx, metadata: { ...cancels.tx.metadata, cancellation_reason: 'Erro na emissão' } },
        original: {
          transactionId: 'x', fiscalId: cancels.record.fiscalId, tx: cancels.tx, issuedAt: cancels.at.toISOString(), documentNumber: cancels.record.documentNumber,
        },
      });
      out.push({ file, tx: built.tx, record: built.record, at, kind: 'cancellation' });
      return;
    }
    const chain = saft.chainKey({ location: loc, tx: { ...tx, metadata: saft.validateTransaction(tx, { location: loc, environment: 'test', now: at }) } });
    const prev = heads.get(chain);
    const seq = prev ? Number(prev.record.documentNumber!.split('/')[1]) + 1 : 1;
    const built = validatedBuild(saft, loc, tx, {
      transactionId,
      now: at,
      signingKey,
      chain: { seq, previous: prev ? { fingerprint: prev.record.fingerprint, fiscalId: prev.record.fiscalId, issuedAt: prev.at.toISOString() } : null },
    });
    const c: PtGoldenCase = { file, tx: built.tx, record: built.record, at, kind: 'record' };
    heads.set(chain, c);
    out.push(c);
  };
  add('fs-first.xml', draft({ items: [nata, cafe], payment_method: 'cash' }));
  add('fs-chained.xml', draft({ items: [cha], payment_method: 'card' }));
  add('ft-customer.xml', draft({
    customer_context: FT_CUSTOMER,
    payment_method: 'transfer',
    metadata: { document_type: 'FT' },
    items: [
      line({ description: 'Bolo de aniversário', quantity: 1, unit_price: 2500, tax_rate: 6, tax_amount: 150, total_amount: 2650 }),
      line({ description: 'Serviço de catering', quantity: 1, unit_price: 10000, tax_rate: 23, tax_amount: 2300, total_amount: 12300 }),
      line({ description: 'Refeição', quantity: 3, unit_price: 800, tax_rate: 13, tax_amount: 312, total_amount: 2712 }),
      line({ description: 'Formação em pastelaria', quantity: 1, unit_price: 5000, tax_rate: 0, tax_amount: 0, total_amount: 5000 }),
    ],
  }));
  add('nc-refund.xml', draft({
    type: 'refund',
    payment_method: 'cash',
    items: [line({ description: 'Pastel de nata', quantity: 1, unit_price: 100, tax_rate: 13, tax_amount: 13, total_amount: 113 })],
    metadata: { original_invoice_no: 'FS A2026/1', reason: 'Devolução de artigo' },
  }));
  add('cancellation.xml', out[1]!.tx, out[1]);
  return out;
}

/** The month's SAF-T file of the golden documents, made on 1 February. */
export function goldenSaftFile(cases = goldenPtCases()): SaftFile {
  return buildSaftFile({
    location: goldenPtLocation(),
    period: '2026-01',
    records: cases.map((c) => ({ kind: c.kind, body: c.record.body, tx: c.tx })),
    software: SOFTWARE,
    producerName: 'Fiscal API',
    createdAt: new Date('2026-02-01T09:00:00Z'),
  });
}
