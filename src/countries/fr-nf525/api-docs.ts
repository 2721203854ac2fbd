import { EXAMPLE_LOCATION_ID, configObject, str, twoLineSale, type SystemApiDocs } from '../shared/api-docs-parts.ts';

export const nf525Docs: SystemApiDocs = {
  key: 'fr-nf525',
  title: 'France: NF525 (signed locally, no per-sale submission)',
  configSchema: configObject('NF525', ['legal_name', 'register_id'], {
    legal_name: str('registered company name'),
    register_id: str('SIRET (14 digits) or SIREN'),
  }),
  location: {
    name: 'Café Paris', country: 'FR', address: '1 rue de Rivoli', tax_id: '73282932000074',
    country_config: { legal_name: 'Exemple SAS', register_id: '73282932000074' },
  },
  sale: twoLineSale(EXAMPLE_LOCATION_ID, 'EUR', [
    { description: 'Croissant', quantity: 2, unit_price: 100, tax_rate: 5.5 },
    { description: 'Café', quantity: 1, unit_price: 150, tax_rate: 10 },
  ]),
};
