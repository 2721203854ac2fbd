import { EXAMPLE_LOCATION_ID, configObject, str, twoLineSale, type SystemApiDocs } from '../shared/api-docs-parts.ts';
import { SII_TAX_CONFIG_DOC, SPAIN_ITEM_PROPERTIES, operationDateMetadataDoc, vatRegimeConfigDoc } from '../es/api-docs.ts';

export const siiDocs: SystemApiDocs = {
  key: 'es-sii',
  title: 'Spain: SII (Suministro Inmediato de Información)',
  configSchema: configObject('SII', ['system', 'legal_name'], {
    system: { const: 'sii' },
    legal_name: str('registered company name'),
    certificate_id: str('an uploaded certificate (POST /v1/certificates); not needed with test keys'),
    tax: SII_TAX_CONFIG_DOC,
    vat_regime: vatRegimeConfigDoc('sii'),
  }),
  location: {
    name: 'Bar Pepe Sevilla', country: 'ES', tax_id: 'B12345674',
    country_config: { system: 'sii', legal_name: 'Ejemplo SL', certificate_id: 'cert_1' },
  },
  // A simplified invoice (F2): no counterparty needed. A standard F1 names the buyer
  // (metadata counterparty_nif, counterparty_name).
  sale: twoLineSale(EXAMPLE_LOCATION_ID, 'EUR', [
    { description: 'Menú del día', quantity: 1, unit_price: 1200, tax_rate: 10 },
    { description: 'Vino', quantity: 2, unit_price: 300, tax_rate: 21 },
  ], { metadata: { simplified: true } }),
  metadata: `invoice_number, series, simplified, regime_key, counterparty_nif, counterparty_name…; ${operationDateMetadataDoc('FacturaExpedida/FechaOperacion', 'the invoice\'s issue date (metadata.issue_date, else today); not on a void')}; `
    + 'POST /v1/transactions/{id}/correct changes description and counterparty_* of an accepted invoice (sent to AEAT as a modification, TipoComunicacion A1; customer_context is not in the SII record)',
  itemProperties: SPAIN_ITEM_PROPERTIES,
};
