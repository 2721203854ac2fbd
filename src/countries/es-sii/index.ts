/**
 * SII (Suministro Inmediato de Información, RD 596/2016): the VAT books are kept at AEAT;
 * each issued invoice is reported within 4 days, Saturdays, Sundays and national
 * holidays excluded (deadline.ts). Not signed, not chained; AEAT's CSV is the fiscal id.
 */
import type { FiscalSystem, LocationForFiscal } from '../types.ts';
import { SPAIN_CERTIFICATE_FIELDS } from '../es/common.ts';
import { SURCHARGE_LINE_FIELD } from '../es/surcharge.ts';
import { clientInvoiceNumber } from '../es/invoice.ts';
import { chainKeyOf, escapeKeyPart } from '../shared/chain-key.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { recordIssueDate, spanishReplacement } from '../es/replacement.ts';
import { runSandbox } from '../shared/sandbox.ts';
import { validateSiiConfig } from './config.ts';
import { validateSiiTransaction } from './metadata.ts';
import { buildSii } from './build.ts';
import { siiSandboxFor } from './sandbox.ts';
import { SII_CODES } from './codes.ts';
import { submitToAeat } from './client.ts';
import { siiSubmissionDeadline } from './deadline.ts';
import { SII_RECEIPT } from './receipt.ts';
import { SII_CORRECTION } from './correction.ts';

/** The issuer, where AEAT keys its numbers (NIF, number, date): `es-sii:<account>:<NIF>` (the location's id without tax_id). */
const issuerOf = (location: LocationForFiscal): string => `es-sii:${location.account_id}:${location.tax_id ?? location.id}`;

export const sii: FiscalSystem<'es-sii', 'ES'> = {
  key: 'es-sii',
  country: 'ES',
  version: '0.2.0',
  capabilities: {
    signsLocally: false,
    chained: false,
    submission: 'realtime',
    // The alert window in calendar days; the exact deadline is submissionDeadline.
    submissionWindowDays: 4,
    authorityTransport: true,
    cancellationJoinsChain: false,
  },
  validateConfig: validateSiiConfig,
  secretConfigFields: [],
  certificateFields: SPAIN_CERTIFICATE_FIELDS,
  // Recargo de equivalencia per line (../es/surcharge.ts): surcharge_rate, surcharge_amount.
  lineFields: [SURCHARGE_LINE_FIELD],
  validateTransaction: validateSiiTransaction,
  // NumSerieFacturaEmisor: the series prefixed to the number, as AEAT reads it.
  // Unique per issuer, not per location's chain: AEAT keys a duplicate by NIF, number and date.
  issuedDocument: ({ tx, location }) => {
    const issued = clientInvoiceNumber(tx, metaString(tx, 'series') ?? '', (series, number) => `${series}${number}`);
    return issued && { ...issued, scope: issuerOf(location) };
  },
  // An F3 replaces simplified invoices (../es/replacement.ts): each named as it was reported,
  // its NumSerieFacturaEmisor and FechaExpedicionFacturaEmisor (metadata.issue_date). The
  // numbers are the issuer's: a refund at any of its locations may name a ticket.
  replaces: spanishReplacement(
    (sale) => (sale.documentNumber
      ? { number: sale.documentNumber, issue_date: metaString(sale.tx, 'issue_date') ?? recordIssueDate(sale) }
      : null),
    issuerOf,
  ),
  // The series is the merchant's free text (metadata.ts: printable ASCII), `:` and `#` too:
  // escaped, so that a test series `A:live` or a series `A#annulments` keys a chain of its own
  // (the numbers are the merchant's, so a stored chain such a series moves loses none).
  chainKey: ({ location, tx }) => chainKeyOf('es-sii', location.id, escapeKeyPart(metaString(tx, 'series') ?? 'default')),
  initialStatus: () => 'pending',
  build: buildSii,
  // An invoice AEAT holds corrected by a modification (A1) of the same IDFactura (correction.ts).
  correct: SII_CORRECTION,
  submissionDeadline: siiSubmissionDeadline,
  submit: async (record, ctx) => (ctx.mode === 'stub' ? runSandbox(record, ctx, siiSandboxFor(record)) : submitToAeat(record, ctx)),
  codes: SII_CODES,
  errorTranslations: true,
  receipt: SII_RECEIPT,
};
