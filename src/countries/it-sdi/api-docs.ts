import { EXAMPLE_LOCATION_ID, configObject, str, twoLineSale, type SystemApiDocs } from '../shared/api-docs-parts.ts';
import { decimal } from '../shared/amounts.ts';
import { SEMPLIFICATA_MAX_TOTAL, TIPI_DOCUMENTO } from './metadata.ts';
import { BOLLO_AMOUNT, BOLLO_NATURE, BOLLO_THRESHOLD } from './bollo.ts';

/**
 * What the create body's `metadata` description says of SDI (the quickstart says the same,
 * docs/quickstart/it-sdi.md): the fields, the document types a request may name, and the
 * rules of the fattura semplificata (metadata.ts `checkSemplificata`, `semplificataTipo`),
 * with the values the rules use, so the reference cannot drift from them.
 */
export const SDI_METADATA_DOC =
  'invoice_number (required), invoice_date, codice_destinatario, buyer_denomination, buyer_country, tipo_documento, pec_destinatario, bollo_virtuale; ' +
  'codice_destinatario (FPR12) defaults to 0000000, XXXXXXX for a buyer_country other than IT, 2R4GTO8 for SM, 0000000 with a pec_destinatario; ' +
  `tipo_documento: ${TIPI_DOCUMENTO.join(', ')} (default TD01 for a sale, TD04 for a refund or void); ` +
  'refunds (TD04): original_invoice_number, original_invoice_date (DatiFattureCollegate). ' +
  `stamp duty (imposta di bollo, DPR 642/1972): DatiBollo (BolloVirtuale SI, ImportoBollo ${BOLLO_AMOUNT}) is written when the lines not subject to VAT ` +
  `(Natura ${BOLLO_NATURE.join(', ')}; not N3.1, N3.2, N3.3, N5, N6.x) exceed ${decimal(BOLLO_THRESHOLD)} EUR, on credit notes too; ` +
  'it is not added to ImportoTotaleDocumento (recharge it with a line of its own, N1); bollo_virtuale true forces it, false suppresses it. ' +
  `TD07, the fattura semplificata (DPR 633/1972 art. 21-bis), is sent in the simplified format FSM10: a sale of at most ${decimal(SEMPLIFICATA_MAX_TOTAL)} EUR in total ` +
  '(no ceiling for a seller in regime RF19), not to a public administration (FPA12), without reverse-charge (N6.x) or intra-EU (N3.2) lines; ' +
  'cancelling a TD07 issues a nota di credito semplificata (TD08, FSM10) naming it, cancelling a TD08 a nota di debito semplificata (TD09); ' +
  'TD07 on a refund or void issues a TD08 (stored as tipo_documento TD08, no amount ceiling) and requires original_invoice_number and original_invoice_date (DatiFatturaRettificata); ' +
  'a refund or void without tipo_documento whose original_invoice_number and original_invoice_date name a TD07 of its partita IVA (any location of the account with that partita IVA) issues that TD08 too; ' +
  'original_invoice_number alone names it when exactly one invoice of that partita IVA holds the number, the TD08 taking its date (SdI numbers may restart each year: a number held by two invoices stays TD04) ' +
  '(a TD04 where the simplified format cannot carry it: FPA12, N6.x or N3.2 lines)';

export const sdiDocs: SystemApiDocs = {
  key: 'it-sdi',
  title: 'Italy: SDI electronic invoice (FatturaPA)',
  configSchema: configObject('SDI', ['codice_fiscale', 'formato_trasmissione', 'regime_fiscale'], {
    system: { const: 'sdi', description: 'optional: a config with formato_trasmissione is SDI' },
    codice_fiscale: str('11-16 uppercase alphanumeric', { pattern: '^[A-Z0-9]{11,16}$' }),
    formato_trasmissione: { type: 'string', enum: ['FPA12', 'FPR12'], description: 'FPA12 government, FPR12 B2B' },
    regime_fiscale: str('RF01 to RF19', { pattern: '^RF(0[1-9]|1[0-9])$' }),
    api_credential_id: str('credential of the transmission channel'),
    certificate_id: str('an uploaded certificate (POST /v1/certificates)'),
    progressivo_invio: str('file sequence prefix; generated when empty'),
    partita_iva: str('11-digit VAT number'),
    legal_name: str('1-80 Latin characters'),
    indirizzo: str('seller address, 1-60 Latin characters'),
    cap: str('5 digits', { pattern: '^[0-9]{5}$' }),
    comune: str('1-60 Latin characters'),
    provincia: str('2 capital letters (e.g. RM)', { pattern: '^[A-Z]{2}$' }),
  }),
  location: {
    name: 'Trattoria Roma', country: 'IT', address: 'Via Roma 1', tax_id: '01234567897',
    country_config: { codice_fiscale: '01234567897', formato_trasmissione: 'FPR12', regime_fiscale: 'RF01' },
  },
  sale: twoLineSale(EXAMPLE_LOCATION_ID, 'EUR', [
    { description: 'Consulenza', quantity: 1, unit_price: 10000, tax_rate: 22 },
    { description: 'Libro', quantity: 1, unit_price: 2000, tax_rate: 4 },
  ], { payment_method: 'transfer', metadata: { invoice_number: 'FT-2026-0001', codice_destinatario: '0000000' } }),
  itemProperties: {
    natura: { type: 'string', description: 'exemption code N1…N6 (and subcodes, e.g. N2.2); required when tax_rate is 0' },
  },
  metadata: SDI_METADATA_DOC,
};
