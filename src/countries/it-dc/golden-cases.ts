/**
 * Test fixtures (not a test file): the commercial documents the golden files hold, one
 * register's chain on the fixed clock and key: a sale paid by card, a sale with a lottery
 * code paid in cash, card and meal vouchers, a return naming an earlier document, and the
 * documento di annullo of the first sale.
 */
import type { FiscalRecord, TransactionDraft } from '../types.ts';
import { NOW, draft, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { documentoCommerciale as dc } from './index.ts';

export interface DcGoldenCase {
  file: string;
  tx: TransactionDraft;
  record: FiscalRecord;
}

export const goldenDcLocation = () => location('it-dc', { legal_name: 'Bar Roma di Rossi Mario' });

const iva10 = line({ description: 'Cappuccino e cornetto', quantity: 2, unit_price: 200, tax_rate: 10, tax_amount: 40, total_amount: 440 });
const iva22 = line({ description: 'Acqua minerale', quantity: 1, unit_price: 100, tax_rate: 22, tax_amount: 22, total_amount: 122 });

export function goldenDcCases(loc = goldenDcLocation()): DcGoldenCase[] {
  const out: DcGoldenCase[] = [];
  const add = (file: string, tx: TransactionDraft, cancels?: DcGoldenCase) => {
    const n = out.length + 1;
    const prev = out[out.length - 1];
    const at = new Date(NOW.getTime() + n * 60_000);
    const built = validatedBuild(dc, loc, tx, {
      transactionId: `00000000-0000-4000-8000-0000000000d${n}`,
      now: at,
      chain: {
        seq: n,
        previous: prev ? { fingerprint: prev.record.fingerprint, fiscalId: prev.record.fiscalId, issuedAt: NOW.toISOString(), linkData: prev.record.linkData } : null,
      },
      ...(cancels
        ? {
            kind: 'cancellation' as const,
            original: {
              transactionId: '00000000-0000-4000-8000-0000000000d1', fiscalId: cancels.record.fiscalId, tx: cancels.tx,
              issuedAt: new Date(NOW.getTime() + 60_000).toISOString(), documentNumber: cancels.record.documentNumber,
            },
          }
        : {}),
    });
    out.push({ file, tx: built.tx, record: built.record });
  };
  add('sale.xml', draft({ items: [iva10], payment_method: 'card' }));
  add('sale-lottery-split.xml', draft({
    items: [iva10, iva22],
    payment_method: 'cash',
    metadata: { lottery_code: 'AB12CD34', cash_amount: 200, electronic_amount: 162, ticket_amount: 200, ticket_count: 1 },
  }));
  add('return.xml', draft({
    type: 'refund',
    items: [iva22],
    metadata: { original_matricola: 'ABCD-123456', original_date: '2026-01-14', original_number: '0007-0012' },
  }));
  add('annullo.xml', out[0]!.tx, out[0]);
  return out;
}
