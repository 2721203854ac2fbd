import { EXAMPLE_LOCATION_ID, configObject, str, twoLineSale, type SystemApiDocs } from '../shared/api-docs-parts.ts';
import { SPAIN_ITEM_PROPERTIES, operationDateMetadataDoc, taxConfigDoc, vatRegimeConfigDoc } from '../es/api-docs.ts';

export const verifactuDocs: SystemApiDocs = {
  key: 'es-verifactu',
  title: 'Spain: VERI*FACTU (AEAT)',
  configSchema: configObject('VERI*FACTU', ['system', 'legal_name', 'software_nif'], {
    system: { const: 'verifactu' },
    legal_name: str('registered company name'),
    certificate_id: str('an uploaded certificate (POST /v1/certificates); not needed with test keys'),
    tax: taxConfigDoc(true),
    vat_regime: vatRegimeConfigDoc('verifactu'),
    software_nif: str('tax id of the software developer'),
    installation_number: str('installation number of the software'),
  }),
  location: {
    name: 'Bar Pepe Madrid', country: 'ES', address: 'Gran Vía 2, Madrid', tax_id: 'B12345674',
    country_config: { system: 'verifactu', legal_name: 'Ejemplo SL', certificate_id: 'cert_1', software_nif: 'B12345674' },
  },
  sale: twoLineSale(EXAMPLE_LOCATION_ID, 'EUR', [
    { description: 'Café con leche', quantity: 2, unit_price: 150, tax_rate: 10 },
    { description: 'Periódico', quantity: 1, unit_price: 200, tax_rate: 4 },
  ]),
  metadata: `${operationDateMetadataDoc('RegistroAlta/FechaOperacion (not in the huella)', 'the issue date (today, Madrid; AEAT 1125) nor twenty years before it (AEAT 1134)')}; the temporary IVA rates (5 %, 2 %, 7.5 %) are dated by it when given, else by the issue date`,
  itemProperties: SPAIN_ITEM_PROPERTIES,
};
