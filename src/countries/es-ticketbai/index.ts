/**
 * TicketBAI (Araba, Bizkaia, Gipuzkoa): invoices are signed locally (XAdES) and chained
 * (each names the previous one's signature); Araba and Gipuzkoa receive each invoice in
 * real time, Bizkaia in daily LROE batches (Batuz), hence `pending_batch` there.
 */
import type { FiscalSystem } from '../types.ts';
import { stubOnlySubmit } from '../shared/sandbox.ts';
import { validateTicketBaiConfig } from './config.ts';
import { validateTicketBaiTransaction, seriesOf } from './metadata.ts';
import { buildTicketBai } from './build.ts';
import { ticketBaiSandbox } from './sandbox.ts';
import { TICKETBAI_CODES } from './codes.ts';

export const ticketBai: FiscalSystem = {
  key: 'es-ticketbai',
  country: 'ES',
  version: '0.1.0',
  capabilities: {
    signsLocally: true,
    chained: true,
    submission: 'realtime',
    // Spain: records within 4 calendar days (the spec's ES submission window).
    submissionWindowDays: 4,
    authorityTransport: false,
    // AnulaTicketBai is signed alone and takes no part in the chain (FORMATS §1.5).
    cancellationJoinsChain: false,
  },
  validateConfig: validateTicketBaiConfig,
  secretConfigFields: [],
  validateTransaction: validateTicketBaiTransaction,
  // Each invoice names "the previous invoice issued by the same software" for the issuer,
  // whatever its series (SerieFacturaAnterior is part of the link; FORMATS.md §1.5): one
  // chain per issuer, while numbers run without gaps within each series.
  chainKey: ({ location }) => `es-ticketbai:${location.account_id}:${location.tax_id ?? location.id}`,
  numberingKey: ({ location, tx }) => `es-ticketbai:${location.account_id}:${location.tax_id ?? location.id}:${seriesOf(tx, location)}`,
  initialStatus: (location) => (location.config.territory === 'bizkaia' ? 'pending_batch' : 'pending'),
  build: buildTicketBai,
  submit: stubOnlySubmit(ticketBaiSandbox),
  codes: TICKETBAI_CODES,
};
