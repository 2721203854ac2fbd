import { EXAMPLE_LOCATION_ID, configObject, str, twoLineSale, type SystemApiDocs } from '../shared/api-docs-parts.ts';
import { SPAIN_ITEM_PROPERTIES, operationDateMetadataDoc, taxConfigDoc, vatRegimeConfigDoc } from '../es/api-docs.ts';

export const ticketBaiDocs: SystemApiDocs = {
  key: 'es-ticketbai',
  title: 'Spain: TicketBAI (Araba, Bizkaia, Gipuzkoa)',
  configSchema: configObject('TicketBAI', ['system', 'legal_name', 'territory', 'tbai_license'], {
    system: { const: 'ticketbai' },
    legal_name: str('registered company name'),
    certificate_id: str('an uploaded certificate (POST /v1/certificates); not needed with test keys'),
    tax: taxConfigDoc(false),
    vat_regime: vatRegimeConfigDoc('ticketbai'),
    territory: str('gipuzkoa, araba or bizkaia (codes 20, 01, 48 accepted)'),
    territory_code: str('01 Araba, 20 Gipuzkoa, 48 Bizkaia'),
    tbai_license: str('software licence code registered with the Hacienda Foral'),
    tsa_url: str('timestamp authority (https) for the XAdES signature', { format: 'uri' }),
    series: str('invoice series'),
    lroe_epigrafe: str('Bizkaia natural persons: IAE heading, 1-7 digits', { pattern: '^\\d{1,7}$' }),
  }),
  location: {
    name: 'Bar Pepe Donostia', country: 'ES', address: 'Calle Mayor 1, Donostia', tax_id: 'B12345674',
    country_config: { system: 'ticketbai', legal_name: 'Ejemplo SL', certificate_id: 'cert_1', territory: 'gipuzkoa', tbai_license: 'TBAIGIPRE00000000123' },
  },
  sale: twoLineSale(EXAMPLE_LOCATION_ID, 'EUR', [
    { description: 'Menú del día', quantity: 1, unit_price: 1200, tax_rate: 10 },
    { description: 'Vino', quantity: 2, unit_price: 300, tax_rate: 21 },
  ]),
  metadata: operationDateMetadataDoc('DatosFactura/FechaOperacion', 'the issue date (today, Madrid)'),
  itemProperties: SPAIN_ITEM_PROPERTIES,
};
