/**
 * Test fixtures (not a test file): one issuer's VERI*FACTU chain on the fixed clock, the
 * records the golden files hold. Each record is built with the previous one's huella and
 * linkData, as the core hands them, so the chain is the one AEAT would receive.
 */
import type { BuildInput, FiscalRecord, TransactionDraft } from '../types.ts';
import { NOW, SOFTWARE, draft, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { verifactu } from './index.ts';

export interface GoldenCase {
  /** File name under golden/. */
  file: string;
  kind: 'record' | 'cancellation';
  transactionId: string;
  tx: TransactionDraft;
  record: FiscalRecord;
}

const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const customer = { nif: 'B64717838', name: 'Cliente Ejemplo SA' };

/** The chain, in generation order: F2, F2, F1 (two VAT rates), R5, R1, RegistroAnulacion, F2 with an exempt line. */
export function goldenChain(loc = location('es-verifactu')): GoldenCase[] {
  const out: GoldenCase[] = [];
  const previous = (): BuildInput['chain']['previous'] => {
    const last = out.at(-1);
    return last ? { fingerprint: last.record.fingerprint, fiscalId: null, issuedAt: NOW.toISOString(), linkData: last.record.linkData } : null;
  };
  const alta = (file: string, tx: TransactionDraft, seconds: number) => {
    const seq = out.length + 1;
    const transactionId = `00000000-0000-4000-8000-00000000000${seq}`;
    const built = validatedBuild(verifactu, loc, tx, { transactionId, now: at(seconds), chain: { seq, previous: previous() } });
    out.push({ file, kind: 'record', transactionId, tx: built.tx, record: built.record });
  };

  alta('alta-first.xml', draft(), 0);
  alta('alta-chained.xml', draft({ items: [line({ description: 'Croissant', unit_price: 250, tax_rate: 10, tax_amount: 25, total_amount: 275 })] }), 60);
  alta(
    'alta-f1-customer.xml',
    draft({ customer_context: customer, items: [line(), line({ description: 'Pan', unit_price: 300, tax_rate: 4, tax_amount: 12, total_amount: 312 })] }),
    120,
  );
  alta('alta-r5-refund.xml', draft({ type: 'refund' }), 180);
  alta('alta-r1-refund.xml', draft({ type: 'refund', customer_context: customer, metadata: { original_invoice_number: 'A-3', original_issue_date: '15-01-2026' } }), 240);

  // The annulment of the first invoice.
  const first = out[0]!;
  const seq = out.length + 1;
  const transactionId = `00000000-0000-4000-8000-00000000000${seq}`;
  const record = verifactu.build({
    transactionId,
    kind: 'cancellation',
    tx: first.tx,
    original: { transactionId: first.transactionId, fiscalId: null, tx: first.tx, issuedAt: NOW.toISOString(), documentNumber: first.record.documentNumber },
    location: loc,
    environment: 'test',
    now: at(300),
    chain: { seq, previous: previous() },
    software: SOFTWARE,
  });
  out.push({ file: 'anulacion.xml', kind: 'cancellation', transactionId, tx: first.tx, record });

  // After the annulment, so the records above keep their bytes: an exempt operation (E1,
  // e.g. a medical service) beside a taxed line, one DetalleDesglose each.
  alta(
    'alta-exempt.xml',
    draft({
      metadata: { exemption_code: 'E1' },
      items: [line({ description: 'Consulta médica', unit_price: 6000, tax_rate: 0, tax_amount: 0, total_amount: 6000 }), line()],
    }),
    360,
  );
  return out;
}
