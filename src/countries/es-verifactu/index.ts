/**
 * VERI*FACTU (RD 1007/2023, Orden HAC/1177/2024): every invoice record is hashed into a
 * chain (huella; no signature is needed in VERI*FACTU mode) and sent to AEAT at once.
 */
import type { FiscalSystem, LocationForFiscal } from '../types.ts';
import { SPAIN_CERTIFICATE_FIELDS } from '../es/common.ts';
import { SURCHARGE_LINE_FIELD } from '../es/surcharge.ts';
import { clientInvoiceNumber, counterNumber, isSeries } from '../es/invoice.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { recordIssueDate, spanishReplacement } from '../es/replacement.ts';
import { createVerifactuClient } from './client.ts';
import { validateVerifactuConfig } from './config.ts';
import { seriesOf, validateVerifactuTransaction } from './metadata.ts';
import { buildVerifactu, numSerieOf } from './build.ts';
import { verifactuStubSubmit, verifactuStubSubmitMany } from './sandbox.ts';
import { VERIFACTU_CODES } from './codes.ts';
import { MAX_RECORDS_PER_REQUEST } from './soap.ts';
import { verifyVerifactuRecord } from './verify.ts';
import { VERIFACTU_RECEIPT } from './receipt.ts';
import { VERIFACTU_CORRECTION } from './correction.ts';

/** The counter of one series of the issuer. */
/** The obligated issuer: `es-verifactu:<account>:<NIF>` (the location's id where it has no tax_id). */
const issuerOf = (location: LocationForFiscal): string => `es-verifactu:${location.account_id}:${location.tax_id ?? location.id}`;
const seriesKey = (location: LocationForFiscal, series: string): string => `${issuerOf(location)}:${series}`;

/** The AEAT client. It keeps no state: AEAT's waits (TiempoEsperaEnvio) go to `ctx.pacing`, the core's, shared by every worker. */
const aeat = createVerifactuClient(VERIFACTU_CODES);

export const verifactu: FiscalSystem<'es-verifactu', 'ES'> = {
  key: 'es-verifactu',
  country: 'ES',
  // 0.2.0: real RegistroAlta / RegistroAnulacion XML and the AEAT SOAP client.
  version: '0.2.0',
  capabilities: {
    signsLocally: false,
    chained: true,
    submission: 'realtime',
    submissionWindowDays: 4,
    authorityTransport: true,
    // RegistroAnulacion carries Encadenamiento like an alta (FORMATS §2.4).
    cancellationJoinsChain: true,
    // SuministroLR.xsd: RegistroFactura maxOccurs 1000 per RegFactuSistemaFacturacion
    // (FORMATS.md §2.5). A chain's queued records travel together (jobs/tasks/submit.ts).
    maxRecordsPerRequest: MAX_RECORDS_PER_REQUEST,
    // A refused number issued again goes as an alta por rechazo (build.ts `reissueFlags`).
    readsEarlierIssues: true,
  },
  validateConfig: validateVerifactuConfig,
  secretConfigFields: [],
  certificateFields: SPAIN_CERTIFICATE_FIELDS,
  // Recargo de equivalencia per line (../es/surcharge.ts): surcharge_rate, surcharge_amount.
  lineFields: [SURCHARGE_LINE_FIELD],
  validateTransaction: validateVerifactuTransaction,
  // An F3 replaces simplified invoices (../es/replacement.ts): each named as AEAT holds it,
  // its NumSerieFactura and the Madrid date of its record (FechaExpedicionFactura).
  // Its tickets' numbers are the issuer's (series run over all of its locations), so a
  // refund at any of them may name one: the refs are the issuer's (its chain's scope).
  replaces: spanishReplacement(
    (sale) => (sale.documentNumber ? { number: sale.documentNumber, issue_date: recordIssueDate(sale) } : null),
    issuerOf,
  ),
  // NumSerieFactura as AEAT reads it, whichever series and number wrote it: series T and
  // number 2026-3 are the document series T-2026's counter writes as its third.
  issuedDocument: ({ tx, location }) => clientInvoiceNumber(tx, seriesOf(tx), numSerieOf, (document) => {
    const dash = document.lastIndexOf('-');
    const number = counterNumber(document.slice(dash + 1));
    const series = document.slice(0, dash);
    return number === undefined || !isSeries(series) ? undefined : { numberingKey: seriesKey(location, series), number };
  }),
  // The chain runs over every record of the obligated issuer, across series and
  // locations, altas and anulaciones in generation order (FORMATS.md §2.4).
  chainKey: ({ location }) => issuerOf(location),
  // …while invoice numbers run without gaps within each series of the issuer; a sale
  // whose request names its number takes none.
  numberingKey: ({ location, tx }) => (metaString(tx, 'invoice_number') === undefined ? seriesKey(location, seriesOf(tx)) : undefined),
  initialStatus: () => 'pending',
  build: buildVerifactu,
  // A record AEAT holds corrected by a subsanación of the same IDFactura (correction.ts).
  correct: VERIFACTU_CORRECTION,
  // verify-chain (src/cli/verify-chain.ts): fingerprint, signature and link of a stored record.
  verifyRecord: verifyVerifactuRecord,
  submit: async (record, ctx) => (ctx.mode === 'stub' ? verifactuStubSubmit(record, ctx) : aeat.submit(record, ctx)),
  submitMany: async (records, ctx) => (ctx.mode === 'stub' ? verifactuStubSubmitMany(records, ctx) : aeat.submitMany(records, ctx)),
  codes: VERIFACTU_CODES,
  errorTranslations: true,
  receipt: VERIFACTU_RECEIPT,
};
