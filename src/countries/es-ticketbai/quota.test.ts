/**
 * The quotas of a DetalleIVA (./quota.ts) within 0.01 of base × rate (Araba 10-74, 10-77),
 * however the lines' own rounding adds up; the lines' sum kept when it already is.
 */
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, xsdValidate } from '../../../test/support/xml-tools.ts';
import { draft, fixedSigningKey, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { ticketBai } from './index.ts';
import { detalleQuota } from './quota.ts';

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

  it('writes every quota within 0.01 of base × rate; the lines and the invoice total stay as the transaction says', () => {
    const xml = validatedBuild(ticketBai, location('es-ticketbai'), tx, { signingKey: fixedSigningKey() }).record.body;
    const rows = detalles(xml);
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      expect(coherent(r.quota, r.base, r.rate), JSON.stringify(r)).toBe(true);
      if (r.surchargeRate !== undefined) expect(coherent(r.surchargeQuota!, r.base, r.surchargeRate), JSON.stringify(r)).toBe(true);
    }
    // 21 % alone: base 4.80, lines 1.20, 4.80 × 21 % = 1.008 → 1.01.
    expect(xml).toContain('<BaseImponible>4.80</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>1.01</CuotaImpuesto>');
    // 21 % + 5.2 %: base 3.00, lines 0.75 and 0.25; 0.63 and 0.156 → 0.16.
    expect(xml).toContain('<BaseImponible>3.00</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>0.63</CuotaImpuesto><TipoRecargoEquivalencia>5.20</TipoRecargoEquivalencia><CuotaRecargoEquivalencia>0.16</CuotaRecargoEquivalencia>');
    // 10 %: base 0.60, lines 0.00; 0.06.
    expect(xml).toContain('<BaseImponible>0.60</BaseImponible><TipoImpositivo>10.00</TipoImpositivo><CuotaImpuesto>0.06</CuotaImpuesto>');
    // What the customer paid is unchanged: ImporteTotalFactura and each line's ImporteTotal.
    expect(xml).toContain(`<ImporteTotalFactura>${(tx.total_amount / 100).toFixed(2)}</ImporteTotalFactura>`);
    expect(xml).toContain('<ImporteTotal>0.15</ImporteTotal>');
    if (HAVE_SCHEMAS) expect(xsdValidate(xml, 'es/ticketbai/ticketbaiv1-2-2.xsd').output).toMatch(/validates$/);
  });

  it('a refund writes the same quotas, negative', () => {
    const refund = { ...tx, type: 'refund' as const, metadata: { original_invoice_number: '7', original_issue_date: '14-01-2026' } };
    const xml = validatedBuild(ticketBai, location('es-ticketbai'), refund, { signingKey: fixedSigningKey() }).record.body;
    expect(xml).toContain('<BaseImponible>-4.80</BaseImponible><TipoImpositivo>21.00</TipoImpositivo><CuotaImpuesto>-1.01</CuotaImpuesto>');
    expect(xml).toContain('<CuotaRecargoEquivalencia>-0.16</CuotaRecargoEquivalencia>');
  });
});
