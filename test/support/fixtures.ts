/**
 * Valid location bodies for every fiscal system, for the API tests.
 * Tax ids carry valid check digits (Spanish NIF, partita IVA, SIRET, Portuguese NIF, AFM).
 */
export const ES_NIF = 'B12345674';
export const IT_PIVA = '01234567897';
export const FR_SIRET = '73282932000074';
export const PT_NIF = '123456789';
export const GR_AFM = '094259216';
export const GR_SUBSCRIPTION_KEY = 'aade-subscription-key-0123456789abcdef';

export const configs = {
  ticketbai: { system: 'ticketbai', legal_name: 'Ejemplo SL', certificate_id: 'cert_1', territory: 'gipuzkoa', tbai_license: 'TBAIGIPRE00000000123' },
  verifactu: { system: 'verifactu', legal_name: 'Ejemplo SL', certificate_id: 'cert_1', software_nif: 'B12345674' },
  sii: { system: 'sii', legal_name: 'Ejemplo SL', certificate_id: 'cert_1' },
  sdi: { codice_fiscale: IT_PIVA, formato_trasmissione: 'FPR12', regime_fiscale: 'RF01' },
  dc: {
    system: 'dc', codice_fiscale: IT_PIVA, legal_name: 'Esempio Srl', cau_code: 'A1B2',
    pem_matricola: '99AB-123456', seal_certificate_id: 'seal_1', partita_iva: IT_PIVA,
  },
  nf525: { legal_name: 'Exemple SAS', register_id: FR_SIRET },
  saft: { software_certificate_number: '1234', series: { FT: { prefix: 'A', atcud_code: 'AAJFJMVNTN' } } },
  mydata: {
    afm: GR_AFM, branch: 0, legal_name: 'Παράδειγμα ΑΕ', aade_user_id: 'user1', subscription_key: GR_SUBSCRIPTION_KEY,
    env: 'sandbox', document_class: 'TypeA', default_series: 'A',
  },
} as const;

/** A complete, valid create body per system. */
export const locationBodies = {
  'es-ticketbai': { name: 'Bar Pepe Donostia', country: 'ES', address: 'Calle Mayor 1, Donostia', tax_id: ES_NIF, country_config: configs.ticketbai },
  'es-verifactu': { name: 'Bar Pepe Madrid', country: 'ES', address: 'Gran Vía 2, Madrid', tax_id: ES_NIF, country_config: configs.verifactu },
  'es-sii': { name: 'Bar Pepe Sevilla', country: 'ES', tax_id: ES_NIF, country_config: configs.sii },
  'it-sdi': { name: 'Trattoria Roma', country: 'IT', address: 'Via Roma 1', tax_id: IT_PIVA, country_config: configs.sdi },
  'it-dc': { name: 'Bar Milano', country: 'IT', tax_id: IT_PIVA, country_config: configs.dc },
  'fr-nf525': { name: 'Café Paris', country: 'FR', address: '1 rue de Rivoli', tax_id: FR_SIRET, country_config: configs.nf525 },
  'pt-saft': { name: 'Café Lisboa', country: 'PT', tax_id: PT_NIF, country_config: configs.saft },
  'gr-mydata': { name: 'Καφενείο Αθήνα', country: 'GR', tax_id: GR_AFM, country_config: configs.mydata },
} as const;

export type SystemKey = keyof typeof locationBodies;

/** A UUID no row will ever have. */
export const RANDOM_UUID = '00000000-0000-4000-8000-000000000000';
