/**
 * What AEAT's VERI*FACTU validation refuses that a transaction could ask for, refused at
 * validation (create and preview) or written as AEAT asks:
 * - amount-limits.ts: Macrodato S from 100,000,000.00 EUR (AEAT 1139); nothing beyond the
 *   schema's 12 integer digits (a SOAP Fault 4102 for the whole request);
 * - dated-rates.ts: the temporary IVA rates 5 / 2 / 7.5 outside their months (1194, 1235,
 *   1236), a surcharge on a 0 % line outside 2023-01 … 2024-09 (1165/1170);
 * - party-id.ts: the recipient (1191, 1192, 1193).
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { inGuideForm } from '../../core/transaction-request.ts';
import { ValidationError } from '../../core/errors.ts';
import type { TxLine } from '../types.ts';
import { draft, line, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { CUSTOMER_COUNTRY_REQUIRED } from '../es/party.ts';
import { AMOUNT_TOO_LARGE, MAX_RECORD_AMOUNT_MINOR } from './amount-limits.ts';
import { CUSTOMER_IS_ISSUER, CUSTOMER_NIF_INVALID, R2_NEEDS_NIF_OR_VAT, r3NeedsNif } from './party-id.ts';
import { regFactuRequest } from './soap.ts';
import { OPERATION_DATE_FUTURE, OPERATION_DATE_TOO_OLD } from './metadata.ts';
import { OPERATION_DATE_INVALID } from '../es/operation-date.ts';
import { verifactu } from './index.ts';

const loc = location('es-verifactu');
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false });
const xsdTitle = (title: string) => (HAVE_SCHEMAS ? title : `${title}: ${SCHEMAS_MISSING_MESSAGE}`);
/** The message of the 400 `fn` throws (for the checks by pattern). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    expect((e as ValidationError).status).toBe(400);
    return (e as ValidationError).message;
  }
  throw new Error('expected a 400');
}
const validate = (tx: Parameters<typeof draft>[0], at?: Date) => verifactu.validateTransaction(draft(tx), txCtx(loc, at));

/** One line of `units` × `price` at 21 %, and the transaction's totals to match. */
function sale(units: number, price: number, over: Parameters<typeof draft>[0] = {}) {
  const net = units * price;
  const tax = Math.round(net * 0.21);
  const items: TxLine[] = [line({ description: 'Maquinaria industrial', quantity: units, unit_price: price, tax_rate: 21, tax_amount: tax, total_amount: net + tax })];
  return { items, pretax_amount: net, tax_amount: tax, total_amount: net + tax, customer_context: { nif: 'A58818501', name: 'Cliente SA' }, ...over };
}

describe('Macrodato and the 12 integer digits (amount-limits.ts)', () => {
  it(xsdTitle('an invoice of 100,000,000.00 EUR or more says Macrodato S (AEAT 1139), before Destinatarios; XSD-valid'), () => {
    // 82,644,628.10 + 21 % = 100,000,000.00 exactly (the threshold is included, as OCA compares >=).
    const { record } = validatedBuild(verifactu, loc, draft(sale(1, 8_264_462_810)));
    const alta = parser.parse(record.body).RegistroAlta;
    expect(alta.ImporteTotal).toBe('100000000.00');
    expect(alta.Macrodato).toBe('S');
    expect(record.body).toContain('</sf:DescripcionOperacion><sf:Macrodato>S</sf:Macrodato><sf:Destinatarios>');
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [record.body]), 'es/verifactu/SuministroLR.xsd');
      expect(v.ok, v.output).toBe(true);
    }
  });

  it('a refund (R1, negative amounts) of that size too; below the threshold no Macrodato', () => {
    const refund = validatedBuild(verifactu, loc, draft({ ...sale(1, 8_264_462_810), type: 'refund' })).record;
    expect(parser.parse(refund.body).RegistroAlta).toMatchObject({ ImporteTotal: '-100000000.00', Macrodato: 'S' });
    const below = validatedBuild(verifactu, loc, draft(sale(1, 8_264_462_809))).record;
    expect(parser.parse(below.body).RegistroAlta.ImporteTotal).toBe('99999999.99');
    expect(below.body).not.toContain('Macrodato');
  });

  it('a total beyond 12 integer digits is a 400 (the schema cannot carry it: AEAT would fault the whole request); the largest one is taken', () => {
    expect(AMOUNT_TOO_LARGE).toBe(
      'total_amount must be at most 999,999,999,999.99 EUR: VERI*FACTU records carry amounts of at most 12 integer digits (SuministroInformacion.xsd ImporteSgn12.2Type)');
    expect400(() => validate(sale(1, 90_000_000_000_000)), AMOUNT_TOO_LARGE);
    expect400(() => validate({ ...sale(1, 90_000_000_000_000), type: 'refund' }), AMOUNT_TOO_LARGE);
    // 826,446,280,991.73 + 21 % = 999,999,999,999.99 (MAX_RECORD_AMOUNT_MINOR).
    const largest = sale(1, 82_644_628_099_173);
    expect(largest.total_amount).toBe(MAX_RECORD_AMOUNT_MINOR);
    const { record } = validatedBuild(verifactu, loc, draft(largest));
    expect(parser.parse(record.body).RegistroAlta).toMatchObject({ ImporteTotal: '999999999999.99', Macrodato: 'S' });
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [record.body]), 'es/verifactu/SuministroLR.xsd');
      expect(v.ok, v.output).toBe(true);
    }
  });
});

describe('the temporary IVA rates, dated by the issue date (dated-rates.ts)', () => {
  const at = (rate: number, surcharge?: number) => {
    const tax = Math.round(1000 * rate / 100);
    return line({ tax_rate: rate, tax_amount: tax, total_amount: 1000 + tax, ...(surcharge === undefined ? {} : { surcharge_rate: surcharge, surcharge_amount: Math.round(1000 * surcharge / 100) }) });
  };
  const withItems = (items: TxLine[]) => ({
    items,
    total_amount: items.reduce((s, l) => s + l.total_amount + (typeof l.surcharge_amount === 'number' ? l.surcharge_amount : 0), 0),
  });

  it('5 % is refused on an invoice issued after 30-09-2024 (AEAT 1194), with the line and the window named', () => {
    expect400(() => validate(withItems([at(21), at(5)])),
      'items[1].tax_rate 5 is refused by AEAT on an invoice issued on 15-01-2026: VERI*FACTU takes that IVA rate only for operations from 01-07-2022 to 30-09-2024 (AEAT error 1194)');
    // A refund (R5) is dated its own issue date too: the record carries no FechaOperacion.
    expect(refusal(() => validate({ type: 'refund', ...withItems([at(5)]) }))).toMatch(/^items\[0\]\.tax_rate 5 is refused by AEAT .*\(AEAT error 1194\)$/);
  });

  it('2 % and 7.5 % only from 01-10-2024 to 31-12-2024 (1235/1236), in Madrid days', () => {
    expect(refusal(() => validate(withItems([at(2)])))).toMatch(/^items\[0\]\.tax_rate 2 is refused .* from 01-10-2024 to 31-12-2024 \(AEAT error 1235\/1236\)$/);
    expect(refusal(() => validate(withItems([at(7.5)])))).toMatch(/^items\[0\]\.tax_rate 7\.5 is refused .* from 01-10-2024 to 31-12-2024 \(AEAT error 1235\/1236\)$/);
    // 31-12-2024 23:30 in Madrid (22:30 UTC): still inside; 00:30 on 01-01-2025 in Madrid: outside.
    expect(() => validate(withItems([at(7.5), at(2)]), new Date('2024-12-31T22:30:00Z'))).not.toThrow();
    expect(refusal(() => validate(withItems([at(7.5)]), new Date('2024-12-31T23:30:00Z')))).toMatch(/issued on 01-01-2025/);
  });

  it('the guide form reads the rate in hundredths of a percent', () => {
    let thrown: unknown;
    try {
      validate(withItems([at(5)]));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    expect(inGuideForm(thrown as ValidationError).message).toMatch(/^line_items\[0\]\.vat_rate 500 is refused by AEAT/);
  });

  it('a recargo de equivalencia on a 0 % line only from 01-01-2023 to 30-09-2024 (1165; 1170 afterwards)', () => {
    expect400(() => validate(withItems([at(0, 0)])),
      'items[0].surcharge_rate is refused by AEAT with tax_rate 0 on an invoice issued on 15-01-2026: VERI*FACTU takes a recargo de equivalencia on a 0 % line only for operations from 01-01-2023 to 30-09-2024 (AEAT error 1165)');
    expect(() => validate(withItems([at(0)]))).not.toThrow();
    expect(() => validate(withItems([at(21, 5.2), at(10, 1.4), at(4, 0.5)]))).not.toThrow();
  });

  it('with metadata.operation_date the rates are dated by it, as AEAT dates them by FechaOperacion (the refund in 2026 of a sale of 2024 at 5 %)', () => {
    const refund = (operation_date: string) =>
      validate({ type: 'refund', ...withItems([at(5)]), metadata: { original_invoice_number: 'A-77', original_issue_date: '20-09-2024', operation_date } });
    expect(refund('20-09-2024')).toMatchObject({ invoice_type: 'R5', operation_date: '20-09-2024' });
    expect(refusal(() => refund('01-10-2024'))).toBe(
      'items[0].tax_rate 5 is refused by AEAT for an operation of 01-10-2024 (metadata.operation_date): VERI*FACTU takes that IVA rate only for operations from 01-07-2022 to 30-09-2024 (AEAT error 1194)');
    // 2 % / 7.5 % of the last quarter of 2024 and a 0 % line's surcharge likewise.
    expect(() => validate({ ...withItems([at(7.5), at(2)]), metadata: { operation_date: '15-11-2024' } })).not.toThrow();
    expect(() => validate({ ...withItems([at(0, 0)]), metadata: { operation_date: '15-06-2024' } })).not.toThrow();
    expect(refusal(() => validate({ ...withItems([at(0, 0)]), metadata: { operation_date: '15-10-2024' } }))).toMatch(/for an operation of 15-10-2024 .*\(AEAT error 1165\)$/);
  });

  it('IGIC and IPSI are not dated (IPSI has a 2 % rate of its own)', () => {
    expect(() => verifactu.validateTransaction(draft(withItems([at(2)])), txCtx(location('es-verifactu', { tax: 'ipsi' })))).not.toThrow();
  });
});

describe('metadata.operation_date (FechaOperacion): AEAT validation §7, 1125 and 1134', () => {
  it('an earlier day is kept; the issue day (Madrid) is dropped; later (1125), twenty years back (1134) or malformed is a 400', () => {
    const sale = (operation_date: unknown, at?: Date) => validate({ metadata: { operation_date } }, at);
    expect(sale('09-01-2026')).toMatchObject({ operation_date: '09-01-2026' });
    expect(sale('15-01-2026')).not.toHaveProperty('operation_date');
    expect400(() => sale('16-01-2026'), OPERATION_DATE_FUTURE);
    // 23:30 UTC on the 15th is the 16th in Madrid: the record is issued that day.
    expect(sale('16-01-2026', new Date('2026-01-15T23:30:00Z'))).not.toHaveProperty('operation_date');
    expect(sale('15-01-2006')).toMatchObject({ operation_date: '15-01-2006' });
    expect400(() => sale('14-01-2006'), OPERATION_DATE_TOO_OLD);
    expect400(() => sale('2026-01-09'), OPERATION_DATE_INVALID);
  });
});

describe('the recipient AEAT must identify (party-id.ts)', () => {
  const withCustomer = (customer: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}) => ({ customer_context: { name: 'Cliente SA', ...customer }, ...over });

  it('a Spanish NIF with a wrong control character is a 400 naming it (was: IDOtro 02 without a country, refused by AEAT)', () => {
    expect400(() => validate(withCustomer({ nif: 'A58818502' })), CUSTOMER_NIF_INVALID);
    expect400(() => validate(withCustomer({ tax_id: '12345678A' })), CUSTOMER_NIF_INVALID);
    expect400(() => validate(withCustomer({ nif: 'ESX1234567A' })), CUSTOMER_NIF_INVALID);
    // Any id the country ES calls Spanish.
    expect400(() => validate(withCustomer({ tax_id: 'PASAPORTE-123', country: 'ES' })), CUSTOMER_NIF_INVALID);
    // A foreign id without a country keeps its own message; a valid NIF passes.
    expect400(() => validate(withCustomer({ tax_id: '12-3456789' })), CUSTOMER_COUNTRY_REQUIRED);
    expect(validate(withCustomer({ nif: 'A58818501' })).invoice_type).toBe('F1');
    expect(validate(withCustomer({ nif: 'ES12345678Z', country: 'ES' })).invoice_type).toBe('F1');
  });

  it('a NIF written with separators goes out as the NIF (NIFType), not in IDOtro', () => {
    const { record } = validatedBuild(verifactu, loc, draft(withCustomer({ nif: 'A-58818501' })));
    expect(parser.parse(record.body).RegistroAlta.Destinatarios.IDDestinatario).toEqual({ NombreRazon: 'Cliente SA', NIF: 'A58818501' });
  });

  it('the issuer cannot be its own recipient (AEAT 1193), however the NIF is written', () => {
    expect(CUSTOMER_IS_ISSUER).toBe("the customer's tax id is the issuer's own NIF (the location tax_id): AEAT refuses an invoice whose recipient is its issuer (error 1193)");
    expect400(() => validate(withCustomer({ nif: 'B12345674' })), CUSTOMER_IS_ISSUER);
    expect400(() => validate(withCustomer({ tax_id: 'ES-B12345674' }, { type: 'refund' })), CUSTOMER_IS_ISSUER);
    // A simplified invoice names no recipient: nothing to refuse.
    expect(() => validate(withCustomer({ nif: 'B12345674' }, { metadata: { invoice_type: 'F2' } }))).not.toThrow();
  });

  it('R3 names its customer by NIF only (1191), R2 by NIF or EU VAT number (1192)', () => {
    const refund = (customer: Record<string, unknown>, type: string) => withCustomer(customer, { type: 'refund', metadata: { invoice_type: type } });
    expect400(() => validate(refund({ tax_id: 'DE123456789' }, 'R3')), r3NeedsNif('R3'));
    expect400(() => validate(refund({ tax_id: '12-3456789', country: 'US' }, 'R3')), r3NeedsNif('R3'));
    expect400(() => validate(refund({ tax_id: '12-3456789', country: 'US' }, 'R2')), R2_NEEDS_NIF_OR_VAT);
    expect(validate(refund({ tax_id: 'DE123456789' }, 'R2')).invoice_type).toBe('R2');
    expect(validate(refund({ nif: 'A58818501' }, 'R3')).invoice_type).toBe('R3');
    expect(validate(refund({ tax_id: '12-3456789', country: 'US' }, 'R1')).invoice_type).toBe('R1');
  });
});
