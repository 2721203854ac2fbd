import { describe, expect, it } from 'vitest';
import { draft } from '../shared/test-fixtures.ts';
import { customerOf, money, productOf, quantityText, splitVatPrefix, taxOf } from './document.ts';
import { decodeWindows1252, encodeWindows1252Xml } from './windows-1252.ts';

describe('SAF-T (PT) document helpers', () => {
  it('money: cents with 2 decimals; fractional cents keep their digits', () => {
    expect(money(1210)).toBe('12.10');
    expect(money(5)).toBe('0.05');
    expect(money(12.5)).toBe('0.125');
    expect(money(1000.25)).toBe('10.0025');
  });

  it('quantities and percentages without exponent or trailing zeros', () => {
    expect(quantityText(1.5)).toBe('1.5');
    expect(quantityText(3)).toBe('3');
    expect(taxOf(5.5)).toEqual({ code: 'OUT', percentage: '5.5', description: 'Outra taxa (5.5 %)', region: 'PT' });
    expect(taxOf(23).code).toBe('NOR');
    expect(taxOf(6).code).toBe('RED');
    expect(taxOf(13).code).toBe('INT');
    expect(taxOf(0).code).toBe('ISE');
  });

  it('customers: the final consumer without a tax id; a NIF alone is a Portuguese customer', () => {
    expect(customerOf(draft())).toMatchObject({ id: '999999990', taxId: '999999990', name: 'Consumidor final', country: 'Desconhecido' });
    expect(customerOf(draft({ customer_context: { nif: '123456789' } }))).toMatchObject({ id: '123456789', name: 'Desconhecido', country: 'PT' });
    expect(customerOf(draft({ customer_context: { tax_id: 'ESB12345674', legal_name: 'Ejemplo SL', country: 'es' } }))).toMatchObject({ id: 'ESB12345674', name: 'Ejemplo SL', country: 'ES' });
  });

  it('products: the description, at least 2 characters, code at most 60', () => {
    expect(productOf({ description: '  Pão   de  forma ', quantity: 1, unit_price: 1, tax_rate: 6, tax_amount: 0, total_amount: 1 })).toEqual({ code: 'Pão de forma', description: 'Pão de forma' });
    expect(productOf({ description: 'X', quantity: 1, unit_price: 1, tax_rate: 6, tax_amount: 0, total_amount: 1 }).description).toBe('Artigo X');
    expect(productOf({ description: 'y'.repeat(300), quantity: 1, unit_price: 1, tax_rate: 6, tax_amount: 0, total_amount: 1 }).code).toHaveLength(60);
  });

  it('Windows-1252: Latin-1 as is, the 0x80-0x9F characters by the code page, others as character references', () => {
    const bytes = encodeWindows1252Xml('<a>€ “ç” — ž Ω</a>');
    expect([...bytes.subarray(3, 14)]).toEqual([0x80, 0x20, 0x93, 0xe7, 0x94, 0x20, 0x97, 0x20, 0x9e, 0x20, 0x26]);
    expect(decodeWindows1252(bytes)).toBe('<a>€ “ç” — ž &#937;</a>');
  });
});

describe('splitVatPrefix: CustomerTaxID "sem o prefixo do país" (SAF-T (PT) 2.2.4)', () => {
  it('takes a known VAT prefix off, and names its country', () => {
    expect(splitVatPrefix('PT503504564')).toEqual({ taxId: '503504564', prefixCountry: 'PT' });
    expect(splitVatPrefix('pt 503 504 564')).toEqual({ taxId: '503504564', prefixCountry: 'PT' });
    expect(splitVatPrefix('EL094259216')).toEqual({ taxId: '094259216', prefixCountry: 'GR' });
    expect(splitVatPrefix('ATU12345678')).toEqual({ taxId: 'U12345678', prefixCountry: 'AT' });
    expect(splitVatPrefix('ESB12345674')).toEqual({ taxId: 'B12345674', prefixCountry: 'ES' });
  });
  it('leaves anything else as given', () => {
    expect(splitVatPrefix('503504564')).toEqual({ taxId: '503504564', prefixCountry: undefined });
    expect(splitVatPrefix('XX123456')).toEqual({ taxId: 'XX123456', prefixCountry: undefined });
    expect(splitVatPrefix('PTABCDEF')).toEqual({ taxId: 'PTABCDEF', prefixCountry: undefined });
  });
});

describe('encodeWindows1252Xml: a lone surrogate', () => {
  it('is written as U+FFFD, never as a reference XML refuses (&#55357;)', () => {
    const bytes = encodeWindows1252Xml('<a>Name\ud83d \udc00x 😀</a>');
    expect(bytes.toString('latin1')).toBe('<a>Name&#65533; &#65533;x &#128512;</a>');
  });
});
