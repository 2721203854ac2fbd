/**
 * The quotas of a DetalleIVA (./quota.ts) within 0.01 of base × rate (Araba 10-74, 10-77),
 * however the lines' own rounding adds up; the lines' sum kept when it already is.
 */
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, xsdValidate } from '../../../test/support/xml-tools.ts';
import { draft, fixedSigningKey, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { ticketBai } from './index.ts';
import { detalleAmounts, detalleQuota } from './quota.ts';
import { TICKETBAI_RECEIPT } from './receipt.ts';

describe('detalleQuota', () => {
  it('keeps the lines’ sum within one cent of round(base × rate), else writes that product', () => {
    // 5 × 0.12 at 21 %: lines 0.03 each = 0.15; 0.60 × 21 % = 0.126 → 0.13.
    expect(detalleQuota(60, 21, 15)).toBe(13);
    // Within a cent: kept (0.14 for 0.13, and the exact case).
    expect(detalleQuota(60, 21, 14)).toBe(14);
    expect(detalleQuota(60, 21, 13)).toBe(13);
    expect(detalleQuota(2000, 21, 420)).toBe(420);
    // Drifting below: 10 × 0.02 at 10 % → 0.00 each, 0.20 × 10 % = 0.02.
    expect(detalleQuota(20, 10, 0)).toBe(2);
    // Surcharge rates have two decimals: 5 × 0.12 at 5.2 % → 0.01 each = 0.05, 0.60 × 5.2 % = 0.0312 → 0.03.
    expect(detalleQuota(60, 5.2, 5)).toBe(3);
    // Half up: 0.50 × 21 % = 0.105 → 0.11.
    expect(detalleQuota(50, 21, 0)).toBe(11);
    expect(detalleQuota(0, 21, 0)).toBe(0);
  });
});

/** Every DetalleIVA of a record as the Araba validator reads it (10-74 / 10-77). */
function detalles(xml: string): { base: number; rate: number; quota: number; surchargeRate?: number; surchargeQuota?: number }[] {
  return [...xml.matchAll(/<DetalleIVA>(.*?)<\/DetalleIVA>/g)].map(([, d]) => {
    const num = (tag: string) => {
      const m = new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(d!);
      return m ? Number(m[1]) : undefined;
    };
    return { base: num('BaseImponible')!, rate: num('TipoImpositivo')!, quota: num('CuotaImpuesto')!, surchargeRate: num('TipoRecargoEquivalencia'), surchargeQuota: num('CuotaRecargoEquivalencia') };
  });
}
const coherent = (quota: number, base: number, rate: number) => Math.abs(quota - Math.round((base * rate) / 100 * 100) / 100) <= 0.010001;

/** Base + quotas of every DetalleIVA and exempt detail, in cents: what Araba 10-78/10-79 add up. */
const breakdownCents = (xml: string) =>
  Math.round(
    detalles(xml).reduce((s, r) => s + r.base + r.quota + (r.surchargeQuota ?? 0), 0) * 100 +
      [...xml.matchAll(/<DetalleExenta>.*?<BaseImponible>([^<]*)<\/BaseImponible>/g)].reduce((s, m) => s + Number(m[1]) * 100, 0),
  );
const linesCents = (xml: string) => Math.round([...xml.matchAll(/<ImporteTotal>([^<]*)<\/ImporteTotal>/g)].reduce((s, m) => s + Number(m[1]) * 100, 0));
const totalCents = (xml: string) => Math.round(Number(/<ImporteTotalFactura>([^<]*)</.exec(xml)![1]) * 100);

describe('a TicketBAI record of many lines that round badly', () => {
  // 40 sweets at 0.12 (21 %: 0.0252 → 0.03 each), 30 stamps at 0.02 (10 %: 0.002 → 0.00 each),
  // 25 at 0.12 with recargo 5.2 % (0.00624 → 0.01 each) beside their 21 %.
  const items = [
    ...Array.from({ length: 40 }, (_, i) => line({ description: `Caramelo ${i + 1}`, quantity: 1, unit_price: 12, tax_rate: 21, tax_amount: 3, total_amount: 15 })),
    ...Array.from({ length: 30 }, (_, i) => line({ description: `Sello ${i + 1}`, quantity: 1, unit_price: 2, tax_rate: 10, tax_amount: 0, total_amount: 2 })),
    ...Array.from({ length: 25 }, (_, i) =>
      line({ description: `Chicle ${i + 1}`, quantity: 1, unit_price: 12, tax_rate: 21, tax_amount: 3, total_amount: 15, surcharge_rate: 5.2, surcharge_amount: 1 })),
  ];
  const tx = draft({ items, total_amount: items.reduce((s, l) => s + l.total_amount + (l.surcharge_amount as number | undefined ?? 0), 0), customer_context: { nif: 'B95123451', name: 'Ultramarinos Ejemplo SL' } });

  it('writes every quota within 0.01 of base × rate, and base + quotas add up to what the lines charged; lines and total unchanged', () => {
    const xml = validatedBuild(ticketBai, location('es-ticketbai'), tx, { signingKey: fixedSigningKey() }).record.body;
    const rows = detalles(xml);
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      expect(coherent(r.quota, r.base, r.rate), JSON.stringify(r)).toBe(true);
      if (r.surchargeRate !== undefined) expect(coherent(r.surchargeQuota!, r.base, r.surchargeRate), JSON.stringify(r)).toBe(true);
    }
    // 21 % alone: the lines charged 6.00 (net 4.80, tax 1.20, 0.03 a line where 0.0252 was
    // due); split again: base 4.96, 4.96 × 21 % = 1.0416 → 1.04; 4.96 + 1.04 = 6.00.
    expect(xml).toContain('<BaseImponible>4.96</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>1.04</CuotaImpuesto>');
    // 21 % + 5.2 %: 4.00 charged; base 3.17, 0.6657 → 0.67, surcharge 0.16 (0.1648); 3.17 + 0.67 + 0.16 = 4.00.
    expect(xml).toContain('<BaseImponible>3.17</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>0.67</CuotaImpuesto><TipoRecargoEquivalencia>5.20</TipoRecargoEquivalencia><CuotaRecargoEquivalencia>0.16</CuotaRecargoEquivalencia>');
    // 10 %: 0.60 charged, no tax on any line; base 0.55, quota 0.05 (0.055 → 0.06, within a cent).
    expect(xml).toContain('<BaseImponible>0.55</BaseImponible><TipoImpositivo>10.00</TipoImpositivo><CuotaImpuesto>0.05</CuotaImpuesto>');
    // What the customer paid is unchanged: ImporteTotalFactura and each line's ImporteTotal;
    // the breakdown adds up to it to the cent (it fell 0.46 short before).
    expect(totalCents(xml)).toBe(tx.total_amount);
    expect(xml).toContain('<ImporteTotal>0.15</ImporteTotal>');
    expect(breakdownCents(xml)).toBe(tx.total_amount);
    if (HAVE_SCHEMAS) expect(xsdValidate(xml, 'es/ticketbai/ticketbaiv1-2-2.xsd').output).toMatch(/validates$/);
  });

  it('a refund writes the same amounts, negative', () => {
    const refund = { ...tx, type: 'refund' as const, metadata: { original_invoice_number: '7', original_issue_date: '14-01-2026' } };
    const xml = validatedBuild(ticketBai, location('es-ticketbai'), refund, { signingKey: fixedSigningKey() }).record.body;
    expect(xml).toContain('<BaseImponible>-4.96</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>-1.04</CuotaImpuesto>');
    expect(xml).toContain('<CuotaRecargoEquivalencia>-0.16</CuotaRecargoEquivalencia>');
    expect(breakdownCents(xml)).toBe(-tx.total_amount);
  });
});

describe('a rectificativa whose lines round otherwise than their rate (the breakdown, the total and the receipt agree)', () => {
  // Seven coffees at 1.15 (10 %: 0.115 → 0.12 each, 0.84; 8.05 × 10 % = 0.805 → 0.81), five
  // pastries at 0.85 (21 %: 0.1785 → 0.18 each) and four sweets at 0.12 (0.0252 → 0.03 each):
  // 1.02 at 21 % where 4.73 × 21 % = 0.9933 → 0.99. Per line 1.86 of tax, per rate 1.80.
  const items = [
    ...Array.from({ length: 7 }, (_, i) => line({ description: `Café ${i + 1}`, quantity: 1, unit_price: 115, tax_rate: 10, tax_amount: 12, total_amount: 127 })),
    ...Array.from({ length: 5 }, (_, i) => line({ description: `Pastel ${i + 1}`, quantity: 1, unit_price: 85, tax_rate: 21, tax_amount: 18, total_amount: 103 })),
    ...Array.from({ length: 4 }, (_, i) => line({ description: `Caramelo ${i + 1}`, quantity: 1, unit_price: 12, tax_rate: 21, tax_amount: 3, total_amount: 15 })),
  ];
  const total = items.reduce((s, l) => s + l.total_amount, 0);
  const refund = draft({
    type: 'refund', items, total_amount: total,
    customer_context: { nif: 'B95123451', name: 'Cafetería Ejemplo SL', address: 'Calle Mayor 1, Donostia', postal_code: '20001' },
    metadata: { original_invoice_number: '41', original_issue_date: '14-01-2026' },
  });

  it('writes a breakdown that adds up to ImporteTotalFactura and the lines, each quota within a cent; the receipt prints the same base and quota', () => {
    const { tx: stored, record } = validatedBuild(ticketBai, location('es-ticketbai'), refund, { signingKey: fixedSigningKey() });
    const xml = record.body;
    expect(xml).toContain('<FacturaRectificativa><Codigo>R1</Codigo><Tipo>I</Tipo></FacturaRectificativa>');
    for (const r of detalles(xml)) expect(coherent(Math.abs(r.quota), Math.abs(r.base), r.rate), JSON.stringify(r)).toBe(true);
    // 21 %: the lines charged 5.15 + 0.60 = 5.75 (net 4.73, tax 1.02; 4.73 × 21 % = 0.9933 → 0.99,
    // 3 cents off): base 4.75, quota 1.00. 10 %: 8.89 charged (tax 0.84 for 0.805): base 8.08, 0.81.
    expect(xml).toContain('<BaseImponible>-4.75</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>-1.00</CuotaImpuesto>');
    expect(xml).toContain('<BaseImponible>-8.08</BaseImponible><TipoImpositivo>10.00</TipoImpositivo><CuotaImpuesto>-0.81</CuotaImpuesto>');
    expect(totalCents(xml)).toBe(-total);
    expect(linesCents(xml)).toBe(-total);
    expect(breakdownCents(xml)).toBe(-total);
    if (HAVE_SCHEMAS) expect(xsdValidate(xml, 'es/ticketbai/ticketbaiv1-2-2.xsd').output).toMatch(/validates$/);

    // The receipt's summary: the record's rows (unsigned; printed negative), the subtotal their bases make.
    const summary = TICKETBAI_RECEIPT.taxSummary!({ kind: 'refund', tx: stored, original: null, hints: record.renderHints, fiscalId: record.fiscalId, record: record.body, cancelledBy: null });
    expect(summary?.rows).toEqual([{ rate: 10, base: 808, tax: 81 }, { rate: 21, base: 475, tax: 100 }]);
    expect(summary?.subtotal).toBe(808 + 475);
    expect(summary!.subtotal! + summary!.rows.reduce((s, r) => s + r.tax, 0)).toBe(total);
  });
});

describe('detalleAmounts', () => {
  it('keeps the lines’ sums while within a cent, else splits what was paid so that base + quotas = paid and each quota is within a cent', () => {
    expect(detalleAmounts(2000, 21, 420, undefined, 0)).toEqual({ base: 2000, quota: 420, surcharge: 0 });
    expect(detalleAmounts(60, 21, 15, undefined, 0)).toEqual({ base: 62, quota: 13, surcharge: 0 });
    // Every IVA rate (and its surcharges) for many lines drifting either way.
    const pairs: [number, number | undefined][] = [[21, undefined], [10, undefined], [5, undefined], [4, undefined], [2, undefined], [7.5, undefined], [21, 5.2], [21, 1.75], [10, 1.4], [4, 0.5], [5, 0.62], [7.5, 1], [2, 0.26]];
    const round = (v: number) => Math.floor(v + 0.5);
    for (const [rate, sRate] of pairs) {
      for (let unit = 1; unit <= 60; unit++) {
        for (const n of [1, 7, 40, 333]) {
          const net = unit * n;
          const tax = round((unit * rate) / 100) * n;
          const sur = sRate === undefined ? 0 : round((unit * sRate) / 100) * n;
          const a = detalleAmounts(net, rate, tax, sRate, sur);
          expect(a.base + a.quota + a.surcharge, `${rate}/${sRate} ${unit}×${n}`).toBe(net + tax + sur);
          expect(Math.abs(a.quota - round((a.base * rate) / 100)), `${rate} ${unit}×${n}`).toBeLessThanOrEqual(1);
          if (sRate !== undefined) expect(Math.abs(a.surcharge - round((a.base * sRate) / 100)), `${sRate} ${unit}×${n}`).toBeLessThanOrEqual(1);
        }
      }
    }
  });
});
