import { describe, expect, it } from 'vitest';
import { sii } from './index.ts';
import { siiRequestOf } from './client.ts';
import { titularFor, titularOf } from './soap.ts';
import { MISSING_TAX_ID } from '../shared/issuer-tax-id.ts';
import { draft, location, stored, validatedBuild } from '../shared/test-fixtures.ts';

const loc = location('es-sii', { legal_name: 'Ejemplo SL' });
const { tx, record } = validatedBuild(sii, loc, draft({ metadata: { simplified: true, invoice_number: 'T-1' } }));
const titularIn = (xml: string) => /<sii:Titular>[\s\S]*?<\/sii:Titular>/.exec(xml)![0].replace(/\s+/g, '');

describe('SII Titular: the holder the invoice was issued by', () => {
  // The location as it stands at send time: renamed and with another NIF since the sale.
  const renamed = { ...loc, name: 'Renamed shop', tax_id: 'A13585625', config: { ...loc.config, legal_name: 'Nombre Nuevo SL' } };

  it('NombreRazon from the issuer kept beside the record (legal name, else name); NIF from the record\'s IDEmisorFactura', () => {
    const kept = { ...stored(record, tx), issuer: { name: 'Shop', address: null, legalName: 'Ejemplo SL' } };
    expect(titularFor(kept, renamed)).toEqual({ name: 'Ejemplo SL', nif: loc.tax_id });
    expect(titularFor({ ...kept, issuer: { name: 'Shop', address: null, legalName: null } }, renamed)).toEqual({ name: 'Shop', nif: loc.tax_id });
    expect(titularIn(siiRequestOf(kept, { location: renamed }))).toBe(`<sii:Titular><sii:NombreRazon>EjemploSL</sii:NombreRazon><sii:NIF>${loc.tax_id}</sii:NIF></sii:Titular>`);
  });

  it('a cancellation\'s baja: NombreRazon of the invoice it withdraws as issued (cancelledIssuer), not the cancellation\'s own; its own when the original kept none', () => {
    const cancellation = {
      ...stored(record, tx), kind: 'cancellation' as const,
      issuer: { name: 'Renamed shop', address: null, legalName: 'Nombre Nuevo SL' },
      cancelledIssuer: { name: 'Shop', address: null, legalName: 'Ejemplo SL' },
    };
    expect(titularFor(cancellation, renamed)).toEqual({ name: 'Ejemplo SL', nif: loc.tax_id });
    expect(titularFor({ ...cancellation, cancelledIssuer: undefined }, renamed)).toEqual({ name: 'Nombre Nuevo SL', nif: loc.tax_id });
  });

  it('a record stored before the issuer was kept: the location\'s current name; the NIF still the record\'s', () => {
    expect(titularFor(stored(record, tx), renamed)).toEqual({ name: 'Nombre Nuevo SL', nif: loc.tax_id });
  });

  it('a record without an issuer NIF (not an SII record): the location\'s, else the placeholder', () => {
    const other = { ...stored(record, tx), body: '<x/>' };
    expect(titularFor(other, renamed)).toEqual(titularOf(renamed));
    expect(titularFor(other, { ...renamed, tax_id: null }).nif).toBe(MISSING_TAX_ID);
  });
});
