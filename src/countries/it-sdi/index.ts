/**
 * Italy SDI (Sistema di Interscambio, FatturaPA e-invoicing): invoices are sent to SdI,
 * whose outcome arrives later as a notification; 12 days to transmit (DPR 633/1972
 * art. 21, as amended by DL 119/2018). Not chained. The record is the FatturaPA 1.2.2
 * XML (build.ts). Files to a public administration (FPA12) are signed XAdES-BES with the
 * location's key; FPR12 files are sent unsigned.
 */
import type { FiscalSystem } from '../types.ts';
import { NATURA_LINE_FIELD } from '../it/natura.ts';
import { chainKeyOf } from '../shared/chain-key.ts';
import { validateSdiConfig } from './config.ts';
import { sdiCorrectedSale, sdiIssuedDocument, validateSdiTransaction } from './metadata.ts';
import { buildSdi } from './build.ts';
import { sdiSubmit } from './sandbox.ts';
import { SDI_CODES } from './codes.ts';
import { submitToSdi } from './sdicoop.ts';
import { SDI_STATUSES } from './statuses.ts';
import { SDI_STATUS_EVENT, sdiNotifications } from './notifications.ts';
import { verifySdiRecord } from './verify.ts';
import { SDI_RECEIPT } from './receipt.ts';

export const sdi: FiscalSystem<'it-sdi', 'IT'> = {
  key: 'it-sdi',
  country: 'IT',
  version: '0.1.0',
  capabilities: {
    signsLocally: false,
    chained: false,
    submission: 'notification',
    submissionWindowDays: 12,
    authorityTransport: true,
    cancellationJoinsChain: false,
    // FPA12 files are signed XAdES-BES (build.ts): the core hands build the location's
    // uploaded certificate, or the account's sandbox one on test keys in stub mode.
    // FPR12 files are built unsigned whatever key is handed (docs/decisions.md).
    signsWithCertificate: true,
  },
  validateConfig: validateSdiConfig,
  secretConfigFields: [],
  // The certificate of the SdICoop mutual TLS channel (sdicoop.ts).
  certificateFields: ['certificate_id'],
  lineFields: [NATURA_LINE_FIELD],
  validateTransaction: validateSdiTransaction,
  issuedDocument: ({ tx, location }) => sdiIssuedDocument(tx, location),
  // A refund or void naming a TD07 by its number and date is its simplified credit note, TD08 (metadata.ts).
  correctedSale: sdiCorrectedSale,
  // The merchant numbers its invoices; the key only groups a location's records.
  chainKey: ({ location }) => chainKeyOf('it-sdi', location.id, 'default'),
  // The SdI file progressivo is unique per transmitter (the partita IVA): a gapless
  // counter per account and partita IVA gives it (build.ts progressivoOf).
  numberingKey: ({ location }) =>
    `it-sdi:${location.account_id}:${String(location.config.partita_iva ?? location.tax_id ?? location.id)}`,
  initialStatus: () => 'pending',
  build: buildSdi,
  // verify-chain (src/cli/verify-chain.ts): fingerprint, signature and link of a stored record.
  verifyRecord: verifySdiRecord,
  // Stub mode: `sent`, and the RC or NS a real SdI would send, through the channel (sandbox.ts);
  // authority mode: SdICoop SdIRiceviFile (sdicoop.ts); the outcome arrives later as a notification.
  submit: async (record, ctx) => (ctx.mode === 'stub' ? sdiSubmit(record, ctx) : submitToSdi(record, ctx)),
  codes: SDI_CODES,
  // SdI's notifications (RC, NS, MC, NE, DT, AT) at POST /v1/inbound/sdi (notifications.ts).
  inbound: sdiNotifications,
  statuses: SDI_STATUSES,
  // DECISIONS "Running it": "SDI status change event: `transaction.sdi_status_changed`".
  events: [SDI_STATUS_EVENT],
  errorTranslations: true,
  receipt: SDI_RECEIPT,
};
