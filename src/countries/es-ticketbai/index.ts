/**
 * TicketBAI (Araba, Bizkaia, Gipuzkoa): invoices are signed locally (XAdES) and chained
 * (each names the previous one's signature); Araba and Gipuzkoa receive each invoice in
 * real time, Bizkaia in daily LROE batches (Batuz), hence `pending_batch` there.
 */
import type { FiscalSystem, StoredRecord, SubmitContext } from '../types.ts';
import { SPAIN_CERTIFICATE_FIELDS } from '../es/common.ts';
import { SURCHARGE_LINE_FIELD } from '../es/surcharge.ts';
import { clientInvoiceNumber, counterNumber } from '../es/invoice.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { recordIssueDate, spanishReplacement } from '../es/replacement.ts';
import { runSandbox } from '../shared/sandbox.ts';
import { TransportError } from '../types.ts';
import { submitTicketBaiRealtime } from './rest-client.ts';
import { validateTicketBaiConfig } from './config.ts';
import { issuerTerritoryOf, validateTicketBaiTransaction, seriesOf } from './metadata.ts';
import { buildTicketBai } from './build.ts';
import { ticketBaiSandboxFor } from './sandbox.ts';
import { TICKETBAI_CODES } from './codes.ts';
import { TICKETBAI_STATUSES } from './statuses.ts';
import { createLroeProcessor } from './lroe/processor.ts';
import { verifyTicketBaiRecord } from './verify.ts';
import { TICKETBAI_RECEIPT } from './receipt.ts';

export const ticketBai: FiscalSystem<'es-ticketbai', 'ES'> = {
  key: 'es-ticketbai',
  country: 'ES',
  version: '0.2.0',
  capabilities: {
    signsLocally: true,
    chained: true,
    submission: 'realtime',
    // Spain: records within 4 calendar days (the spec's ES submission window).
    submissionWindowDays: 4,
    // Araba and Gipuzkoa: the REST client (rest-client.ts); Bizkaia: the LROE batch (lroe/processor.ts).
    authorityTransport: true,
    // AnulaTicketBai is signed alone and takes no part in the chain (FORMATS §1.5).
    cancellationJoinsChain: false,
    // Every record is signed XAdES-EPES with the issuer's certificate (FORMATS §1.4).
    signsWithCertificate: true,
  },
  validateConfig: validateTicketBaiConfig,
  secretConfigFields: [],
  certificateFields: SPAIN_CERTIFICATE_FIELDS,
  // Each Diputación holds its own invoices: an annulment goes to the one that has the original.
  sealedConfigFields: ['territory'],
  // Recargo de equivalencia per line (../es/surcharge.ts): surcharge_rate, surcharge_amount.
  lineFields: [SURCHARGE_LINE_FIELD],
  validateTransaction: validateTicketBaiTransaction,
  // SerieFactura and NumFactura are separate fields (a series has no spaces).
  // The counter of the series writes its numbers as NumFactura.
  issuedDocument: ({ tx, location }) => {
    const series = seriesOf(tx, location);
    return clientInvoiceNumber(tx, series, (s, number) => `${s} ${number}`, (document) => {
      const number = counterNumber(document.slice(series.length + 1));
      return number === undefined ? undefined : { numberingKey: `${issuerTerritoryOf(location)}:${series}`, number };
    });
  },
  // Each invoice names "the previous invoice issued by the same software" for the issuer,
  // whatever its series (SerieFacturaAnterior is part of the link; FORMATS.md §1.5): one
  // chain per issuer and territory, while numbers run without gaps within each series.
  // Per territory: each Diputación certifies the software under its own licence (TBAIGI…,
  // TBAIAR…, TBAIBI…) and holds only its own invoices, so an Araba invoice never names a
  // Gipuzkoa one as its previous (migration 0044 split the chains that did).
  // An F3 replaces simplified invoices (../es/replacement.ts): each named as its record was,
  // SerieFactura, NumFactura and the Madrid date of its record (FechaExpedicionFactura).
  // Numbered per issuer and territory (numberingKey): a rectificativa at any location of
  // that issuer and territory may name a ticket of another.
  replaces: spanishReplacement((sale) => {
    const series = metaString(sale.tx, 'series');
    return sale.documentNumber
      ? { ...(series === undefined ? {} : { series }), number: sale.documentNumber, issue_date: recordIssueDate(sale) }
      : null;
  }, issuerTerritoryOf),
  chainKey: ({ location }) => issuerTerritoryOf(location),
  // A sale whose request names its number takes none from the counter.
  numberingKey: ({ location, tx }) => (metaString(tx, 'invoice_number') === undefined ? `${issuerTerritoryOf(location)}:${seriesOf(tx, location)}` : undefined),
  initialStatus: (location) => (location.config.territory === 'bizkaia' ? 'pending_batch' : 'pending'),
  build: buildTicketBai,
  // verify-chain (src/cli/verify-chain.ts): fingerprint, signature and link of a stored record.
  verifyRecord: verifyTicketBaiRecord,
  submit: submitTicketBai,
  codes: TICKETBAI_CODES,
  statuses: TICKETBAI_STATUSES,
  // Bizkaia's `pending_batch` records go to Batuz in the daily LROE batch (`spain/lroe`).
  processors: (deps) => [createLroeProcessor(deps)],
  errorTranslations: true,
  receipt: TICKETBAI_RECEIPT,
};

/** Araba and Gipuzkoa take each record in real time; Bizkaia only in LROE batches. */
async function submitTicketBai(record: StoredRecord, ctx: SubmitContext) {
  if (ctx.mode === 'stub') return runSandbox(record, ctx, ticketBaiSandboxFor(record, ctx.location));
  const territory = ctx.location.config.territory;
  if (territory === 'gipuzkoa' || territory === 'araba') return submitTicketBaiRealtime(record, ctx, territory);
  // Never reached through the core: Bizkaia records wait as pending_batch, with no submit job.
  throw new TransportError('batch_only', 'Bizkaia TicketBAI records are sent in LROE batches (POST /v1/admin/process-pending)');
}
