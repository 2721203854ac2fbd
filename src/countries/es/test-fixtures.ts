/**
 * A Spanish sale the three systems' tests share: a wholesaler's invoice to a retailer in
 * recargo de equivalencia (LIVA arts. 154-163, ./surcharge.ts). Goods at 21 % + 5.2 % and
 * 10 % + 1.4 %, a service (transport) at 21 % without a surcharge; the total counts the
 * surcharges (40.00 + 6.75 + 1.25 = 48.00). Each system adds its customer.
 */
import type { BuildInput, FiscalRecord, FiscalSystem, LocationForFiscal, ReplacedSale, TransactionDraft } from '../types.ts';
import { buildInput, fixedSigningKey, line, txCtx } from '../shared/test-fixtures.ts';

export const RECARGO_SALE: Pick<TransactionDraft, 'items' | 'pretax_amount' | 'tax_amount' | 'total_amount'> = {
  items: [
    line({ description: 'Aceite de oliva 1 l', quantity: 2, unit_price: 1000, tax_rate: 21, tax_amount: 420, total_amount: 2420, surcharge_rate: 5.2, surcharge_amount: 104 }),
    line({ description: 'Arroz 1 kg', quantity: 10, unit_price: 150, tax_rate: 10, tax_amount: 150, total_amount: 1650, surcharge_rate: 1.4, surcharge_amount: 21 }),
    line({ description: 'Transporte', quantity: 1, unit_price: 500, tax_rate: 21, tax_amount: 105, total_amount: 605 }),
  ],
  pretax_amount: 4000,
  tax_amount: 675,
  total_amount: 4800,
};

/**
 * A full invoice replacing simplified ones (F3, ./replacement.ts) as the core makes it:
 * validated, the replaced sales read (`FiscalSystem.replaces`: each its stored draft, record
 * number and issue time), their identification stored, then built.
 */
export function replacingBuild(
  system: FiscalSystem, loc: LocationForFiscal, tx: TransactionDraft,
  replaced: readonly { transactionId: string; tx: TransactionDraft; record: FiscalRecord; issuedAt: Date }[],
  over: Partial<BuildInput> = {},
) {
  const validated = { ...tx, metadata: system.validateTransaction(tx, txCtx(loc)) };
  const sales: ReplacedSale[] = replaced.map((r) => ({
    transactionId: r.transactionId, tx: r.tx, documentNumber: r.record.documentNumber ?? null, issuedAt: r.issuedAt.toISOString(),
  }));
  for (const s of sales) {
    const refusal = system.replaces!.refusal(s);
    if (refusal !== null) throw new Error(refusal);
  }
  const resolved = { ...validated, metadata: system.replaces!.resolve(validated, sales) };
  const signing = system.capabilities.signsWithCertificate ? { signingKey: fixedSigningKey() } : {};
  return { tx: resolved, record: system.build(buildInput(loc, resolved, { ...signing, ...over })) };
}
