import { describe, it, expect } from 'vitest';
import type { CorrectedSale } from '../types.ts';
import { saft } from './index.ts';
import { creditAboveOriginal, originalNotIssued } from './credit-note.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { NOW, draft, line, location, txCtx } from '../shared/test-fixtures.ts';

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
});
