import { EXAMPLE_LOCATION_ID, configObject, str, twoLineSale, type SystemApiDocs } from '../shared/api-docs-parts.ts';

export const dcDocs: SystemApiDocs = {
  key: 'it-dc',
  title: 'Italy: Documento Commerciale (retail receipt)',
  configSchema: configObject('Documento Commerciale', ['system', 'codice_fiscale', 'legal_name', 'cau_code', 'pem_matricola', 'seal_certificate_id'], {
    system: { const: 'dc' },
    codice_fiscale: str('11-16 alphanumeric', { pattern: '^[A-Za-z0-9]{11,16}$' }),
    legal_name: str('registered company name'),
    cau_code: str('4 alphanumeric characters', { pattern: '^[A-Za-z0-9]{4}$' }),
    pem_matricola: str('register id, XXXX-XXXXXX (11 characters)'),
    seal_certificate_id: str('electronic seal certificate (POST /v1/certificates)'),
    partita_iva: str('11-digit VAT number'),
  }),
  location: {
    name: 'Bar Milano', country: 'IT', tax_id: '01234567897',
    country_config: { system: 'dc', codice_fiscale: '01234567897', legal_name: 'Esempio Srl', cau_code: 'A1B2', pem_matricola: '99AB-123456', seal_certificate_id: 'seal_1', partita_iva: '01234567897' },
  },
  sale: twoLineSale(EXAMPLE_LOCATION_ID, 'EUR', [
    { description: 'Caffè', quantity: 2, unit_price: 100, tax_rate: 10 },
    { description: 'Cornetto', quantity: 2, unit_price: 120, tax_rate: 10 },
  ], { payment_method: 'cash' }),
  itemProperties: {
    natura: { type: 'string', description: 'exemption code N1…N6 (and subcodes, e.g. N2.2); required when tax_rate is 0' },
  },
  metadata: 'cash_amount, electronic_amount, is_return, is_cancellation, original_*',
};
