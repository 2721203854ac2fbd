import { EXAMPLE_LOCATION_ID, configObject, str, twoLineSale, type SystemApiDocs } from '../shared/api-docs-parts.ts';

export const saftDocs: SystemApiDocs = {
  key: 'pt-saft',
  title: 'Portugal: certified invoicing (ATCUD, QR, monthly SAF-T)',
  configSchema: configObject('SAF-T PT', ['series'], {
    software_certificate_number: str('AT software certificate number (set before going live)'),
    at_certificate_id: str('an uploaded certificate'),
    series: {
      type: 'object',
      description: 'by document type (FT invoice, FS simplified invoice, NC credit note…): the series prefix and its ATCUD validation code from the AT',
      additionalProperties: { type: 'object', required: ['prefix', 'atcud_code'], properties: { prefix: str('series prefix: no spaces, "/", "^", ":", "#" or "*"', { maxLength: 46, pattern: '^[^\\s/^:#*]+$' }), atcud_code: str('validation code the AT gave the series', { minLength: 8, maxLength: 59, pattern: '^[A-Za-z0-9]+$' }) } },
    },
    tax_region: { type: 'string', enum: ['PT', 'PT-AC', 'PT-MA'] },
    retail: { type: 'boolean', description: 'retail seller: simplified invoices (FS) for sales to consumers' },
  }),
  location: {
    name: 'Café Lisboa', country: 'PT', tax_id: '123456789',
    country_config: {
      software_certificate_number: '1234',
      // FT invoices, FS simplified invoices (a sale to a consumer without a tax id), NC credit notes.
      series: { FT: { prefix: 'A', atcud_code: 'AAJFJMVNTN' }, FS: { prefix: 'B', atcud_code: 'BBJFJMVNTN' }, NC: { prefix: 'C', atcud_code: 'CCJFJMVNTN' } },
    },
  },
  sale: twoLineSale(EXAMPLE_LOCATION_ID, 'EUR', [
    { description: 'Pastel de nata', quantity: 2, unit_price: 110, tax_rate: 13 },
    { description: 'Bica', quantity: 2, unit_price: 70, tax_rate: 23 },
  ]),
};
