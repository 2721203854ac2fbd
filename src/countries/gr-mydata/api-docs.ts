import { EXAMPLE_LOCATION_ID, configObject, str, twoLineSale, type SystemApiDocs } from '../shared/api-docs-parts.ts';

export const myDataDocs: SystemApiDocs = {
  key: 'gr-mydata',
  title: 'Greece: myDATA (AADE returns a MARK)',
  configSchema: configObject('myDATA', ['afm', 'branch', 'legal_name', 'aade_user_id', 'subscription_key', 'env', 'document_class', 'default_series'], {
    afm: str('9-digit tax id', { pattern: '^[0-9]{9}$' }),
    branch: { type: 'integer', minimum: 0, maximum: 2147483647, description: '0 = primary establishment' },
    legal_name: str('registered company name'),
    aade_user_id: str('the merchant\'s AADE user id (printable ASCII: sent as an HTTP header)', { pattern: '^[\\x20-\\x7E]+$' }),
    subscription_key: str('AADE subscription key (printable ASCII: sent as an HTTP header); sealed at rest, masked when read', { pattern: '^[\\x20-\\x7E]+$' }),
    env: { type: 'string', enum: ['sandbox', 'production', 'provider_sandbox', 'provider_production'] },
    document_class: { type: 'string', enum: ['TypeA', 'TypeB'], description: 'TypeA single leg; TypeB invoice plus income classification' },
    default_series: str('series, unique per (afm, year, branch); 1-50 characters without spaces, ":" or "#"', { maxLength: 50, pattern: '^[^\\s:#]+$' }),
  }),
  location: {
    name: 'Καφενείο Αθήνα', country: 'GR', tax_id: '094259216',
    country_config: {
      afm: '094259216', branch: 0, legal_name: 'Παράδειγμα ΑΕ', aade_user_id: 'user1', subscription_key: 'aade-subscription-key-0123456789abcdef',
      env: 'sandbox', document_class: 'TypeA', default_series: 'A',
    },
  },
  // myDATA has VAT categories for the Greek rates only (24, 13, 6 … %).
  sale: twoLineSale(EXAMPLE_LOCATION_ID, 'EUR', [
    { description: 'Μεζέδες', quantity: 1, unit_price: 1200, tax_rate: 13 },
    { description: 'Κρασί', quantity: 2, unit_price: 300, tax_rate: 24 },
  ]),
};
