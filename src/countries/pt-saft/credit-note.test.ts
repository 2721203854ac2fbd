import { describe, it, expect } from 'vitest';
import type { CorrectedSale } from '../types.ts';
import { saft } from './index.ts';
import { goldenProducerKey } from './golden-cases.ts';
import { creditAboveOriginal, debitedCancelled, debitedNotIssued, originalNotIssued } from './credit-note.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { NOW, draft, line, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';

const loc = location('pt-saft');
const lookup = saft.correctedSale!;
const credit = (original: string, total = 1210) => {
  const request = draft({ type: 'refund', items: [line({ total_amount: total, tax_amount: 0, unit_price: total })], metadata: { original_invoice_no: original } });
  return { ...request, metadata: saft.validateTransaction(request, txCtx(loc)) };
};
const sale = (documentNumber: string, total: number, corrections: number[] = []): CorrectedSale => ({
  transactionId: `sale ${documentNumber}`,
  tx: draft({ items: [line({ total_amount: total, tax_amount: 0, unit_price: total })] }),
  documentNumber,
  issuedAt: NOW.toISOString(),
  corrections: corrections.map((amount, i) => ({
    transactionId: `nc ${i}`, tx: draft({ type: 'refund', total_amount: amount }), documentNumber: `NC C2026/${i + 1}`, issuedAt: NOW.toISOString(),
  })),
});
const resolve = (tx: ReturnType<typeof credit>, sales: CorrectedSale[]) => lookup.resolve({ tx, request: tx, ctx: txCtx(loc) }, sales);

describe('pt-saft credit note against its original', () => {
  it('looks the original up at its place in the location\'s chain of its type and series; a number we never write at no place', () => {
    expect(lookup.cumulative).toBe(true);
    const named = (no: string) => lookup.named({ tx: credit(no), request: credit(no), location: loc });
    expect(named('FS A2026/35')).toEqual({ scope: `pt-saft:${loc.id}`, documents: [], positions: [{ chainKey: `pt-saft:${loc.id}:FS A2026`, seq: 35 }] });
    expect(named('FT A/1')?.positions).toEqual([{ chainKey: `pt-saft:${loc.id}:FT A`, seq: 1 }]);
    // Another program's code, a leading zero: never one of this location's documents.
    expect(named('FX A2026/1')?.positions).toEqual([]);
    expect(named('FS A2026/01')?.positions).toEqual([]);
    // A sale names nothing to look up.
    expect(lookup.named({ tx: draft(), request: draft(), location: loc })).toBeNull();
  });

  it('refuses a document this location did not issue (none found, or a record under another number)', () => {
    expect400(() => resolve(credit('FS A2026/9'), []), originalNotIssued('FS A2026/9'));
    expect400(() => resolve(credit('FS A2026/9'), [sale('FS A2026/8', 5000)]), originalNotIssued('FS A2026/9'));
  });

  it('credits at most the gross total less what the standing credit notes credited', () => {
    const tx = credit('FS A2026/9', 3000);
    expect(resolve(tx, [sale('FS A2026/9', 3000)])).toEqual(tx.metadata);
    expect(resolve(tx, [sale('FS A2026/9', 5000, [2000])])).toEqual(tx.metadata);
    expect400(() => resolve(tx, [sale('FS A2026/9', 2999)]), creditAboveOriginal('FS A2026/9', 3000, 2999, 0));
    expect400(() => resolve(tx, [sale('FS A2026/9', 5000, [1000, 1001])]), creditAboveOriginal('FS A2026/9', 3000, 5000, 2001));
    expect(creditAboveOriginal('FS A2026/9', 3000, 5000, 2001)).toBe(
      'total_amount 30.00 EUR is more than document FS A2026/9 has left to credit: 29.99 EUR (its gross total 50.00 EUR, 20.01 EUR credited by earlier credit notes) (CIVA art. 29 and 78)',
    );
  });

  it('finds every document where build numbered it: the InvoiceNo build writes is the place named() reads, for each type and series', () => {
    // The lookup reads the record at the chain place the number gives (no index of numbers):
    // this pins build.ts (n = the chain's sequence) and index.ts chainKey to credit-note.ts.
    const series = {
      FS: { prefix: 'A2026', atcud_code: 'CSDF7T5H' }, FT: { prefix: 'B-2026.1', atcud_code: 'AAJFJMVNTN' },
      FR: { prefix: 'B-2026.1', atcud_code: 'FRJFJMVNTN' }, ND: { prefix: 'D_9', atcud_code: 'DDJFJMVNTN' }, NC: { prefix: 'C2026', atcud_code: 'JFJMVNTX' },
    };
    const here = location('pt-saft', { series });
    const cases = [
      [draft(), 1], [draft(), 987654321], [draft({ metadata: { document_type: 'FT' } }), 12],
      [draft({ metadata: { document_type: 'FR' } }), 12], [draft({ metadata: { document_type: 'ND', original_invoice_no: 'FT B-2026.1/3' } }), 4],
    ] as const;
    for (const [tx, seq] of cases) {
      const built = validatedBuild(saft, here, tx, { chain: { seq, previous: null }, signingKey: goldenProducerKey() });
      const no = built.record.documentNumber!;
      const nc = { ...credit(no), metadata: { ...credit(no).metadata, original_invoice_no: no } };
      expect(lookup.named({ tx: nc, request: nc, location: here })?.positions, no).toEqual([{ chainKey: saft.chainKey({ location: here, tx: built.tx }), seq }]);
    }
  });

  it('a debit note (ND) names the document it adds to: looked up too, unknown or cancelled 400, no limit on its amount', () => {
    expect(lookup.sales).toBe(true);
    const withNd = location('pt-saft', { series: { ...(loc.config.series as object), ND: { prefix: 'D', atcud_code: 'DDJFJMVNTN' } } });
    const request = draft({ items: [line({ total_amount: 9000, tax_amount: 0, unit_price: 9000 })], metadata: { document_type: 'ND', original_invoice_no: 'FS A2026/9' } });
    const nd = { ...request, metadata: saft.validateTransaction(request, txCtx(withNd)) };
    expect(lookup.named({ tx: nd, request: nd, location: withNd })?.positions).toEqual([{ chainKey: `pt-saft:${loc.id}:FS A2026`, seq: 9 }]);
    const resolveNd = (sales: CorrectedSale[]) => lookup.resolve({ tx: nd, request: nd, ctx: txCtx(withNd) }, sales);
    expect400(() => resolveNd([]), debitedNotIssued('FS A2026/9'));
    expect400(() => resolveNd([{ ...sale('FS A2026/9', 1000), cancelled: true }]), debitedCancelled('FS A2026/9', 'sale FS A2026/9'));
    // 90.00 EUR added to a 10.00 EUR document already credited in full: a debit takes nothing.
    expect(resolveNd([sale('FS A2026/9', 1000, [1000])])).toEqual(nd.metadata);
  });
});
