/**
 * An EU customer's VAT number in IDOtro 02 (NIF-IVA, no CodigoPais): written in its VIES form,
 * the issuing member state's prefix first (party-id.ts `euVatNumber`), so AEAT can place it.
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { draft, location, txCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { customerId, euVatNumber, vatPrefixMismatch } from './party-id.ts';
import { regFactuRequest } from './soap.ts';
import { verifactu } from './index.ts';

const loc = location('es-verifactu');
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false });
const withCustomer = (customer: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}) =>
  draft({ customer_context: { name: 'Client SARL', ...customer }, ...over });
const recipientOf = (body: string) => parser.parse(body).RegistroAlta.Destinatarios.IDDestinatario;

describe('euVatNumber: the VIES form of an EU VAT number', () => {
  it('a number given without its prefix gets the prefix of the country given; separators go', () => {
    expect(euVatNumber('12345678901', 'FR')).toEqual({ id: 'FR12345678901' });
    expect(euVatNumber('123 456 789', 'DE')).toEqual({ id: 'DE123456789' });
    expect(euVatNumber('U12345678', 'AT')).toEqual({ id: 'ATU12345678' }); // Austria's U is the national part
    expect(euVatNumber('094259216', 'GR')).toEqual({ id: 'EL094259216' }); // Greece's VIES prefix is EL
    expect(euVatNumber('A1123456789', 'FR')).toEqual({ id: 'FRA1123456789' }); // two characters that are no prefix
  });

  it('a number with its own prefix stays (GR written for Greece becomes EL); XI numbers stay', () => {
    expect(euVatNumber('FR12345678901', 'FR')).toEqual({ id: 'FR12345678901' });
    expect(euVatNumber('de 123456789', 'DE')).toEqual({ id: 'DE123456789' });
    expect(euVatNumber('GR094259216', 'GR')).toEqual({ id: 'EL094259216' });
    expect(euVatNumber('XI123456789', 'GB')).toEqual({ id: 'XI123456789' });
  });

  it('another member state\'s prefix is not guessed at', () => {
    expect(euVatNumber('DE123456789', 'FR')).toEqual({ foreignPrefix: 'DE' });
    expect(euVatNumber('EL094259216', 'CY')).toEqual({ foreignPrefix: 'EL' });
  });

  it('customerId writes it so; 04 ids (outside the EU) and Spanish NIFs are untouched', () => {
    expect(customerId('12345678901', 'FR')).toEqual({ idOtro: { idType: '02', id: 'FR12345678901' } });
    expect(customerId('DE123456789', null)).toEqual({ idOtro: { idType: '02', id: 'DE123456789' } });
    expect(customerId('12-3456789', 'US')).toEqual({ idOtro: { codigoPais: 'US', idType: '04', id: '12-3456789' } });
    expect(customerId('A58818501', null)).toEqual({ nif: 'A58818501' });
  });
});

describe('through validation and build', () => {
  it(HAVE_SCHEMAS ? 'a French customer whose number lacks FR: the record names FR…, XSD-valid' : SCHEMAS_MISSING_MESSAGE, () => {
    const { record } = validatedBuild(verifactu, loc, withCustomer({ tax_id: '12345678901', country: 'FR' }));
    expect(recipientOf(record.body)).toEqual({ NombreRazon: 'Client SARL', IDOtro: { IDType: '02', ID: 'FR12345678901' } });
    const greek = validatedBuild(verifactu, loc, withCustomer({ tax_id: '094259216', country_code: 'gr' })).record;
    expect(recipientOf(greek.body).IDOtro).toEqual({ IDType: '02', ID: 'EL094259216' });
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [record.body]), 'es/verifactu/SuministroLR.xsd');
      expect(v.ok, v.output).toBe(true);
    }
  });

  it('a country that contradicts the number\'s prefix is a 400 naming both (sales and R2/R1 refunds)', () => {
    const message = vatPrefixMismatch('FR', 'DE');
    expect(message).toBe("customer_context.country FR does not match the VAT prefix DE of the customer's tax id: an EU VAT number starts with the prefix of the member state that issued it (FR for FR); give that country, or the number with its own prefix");
    expect400(() => verifactu.validateTransaction(withCustomer({ tax_id: 'DE123456789', country: 'FR' }), txCtx(loc)), message);
    expect400(() => verifactu.validateTransaction(withCustomer({ tax_id: 'DE123456789', country: 'FR' }, { type: 'refund' }), txCtx(loc)), message);
    expect(vatPrefixMismatch('GR', 'CY')).toContain('(EL for GR)');
    // The same number with its own country is taken.
    expect(verifactu.validateTransaction(withCustomer({ tax_id: 'DE123456789', country: 'DE' }), txCtx(loc)).invoice_type).toBe('F1');
  });
});
