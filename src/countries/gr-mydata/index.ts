/**
 * Greece myDATA (AADE): each document is sent at once and gets a MARK. The create call
 * waits up to 5 s for it (spec); on a timeout or outage the document is
 * `offline_pending` and retried for up to 7 days (the spec's default offline grace; longer
 * for the larger tiers, up to a month).
 * Transport and answers: client.ts (SendInvoices / CancelInvoice with the location's
 * header keys), response.ts (ResponseDoc → the spec's categories); test keys answer
 * through the stub AADE (sandbox.ts), which speaks the same ResponseDoc.
 */
import type { FiscalSystem } from '../types.ts';
import { chainKeyOf } from '../shared/chain-key.ts';
import { GREECE_SECRET_FIELDS, validateMyDataConfig } from './config.ts';
import { issuerBranchOf, seriesOf, validateMyDataTransaction } from './metadata.ts';
import { buildMyData, correlateReversal } from './build.ts';
import { myDataStubSubmit } from './sandbox.ts';
import { submitToAade } from './client.ts';
import { MYDATA_CODES } from './codes.ts';
import { MYDATA_OFFLINE, MYDATA_STATUSES } from './offline.ts';
import { verifyMyDataRecord } from './verify.ts';
import { MYDATA_RECEIPT } from './receipt.ts';

const DAY = 24 * 60 * 60;

export const myData: FiscalSystem<'gr-mydata', 'GR'> = {
  key: 'gr-mydata',
  country: 'GR',
  version: '0.1.0',
  capabilities: {
    signsLocally: false,
    chained: false,
    submission: 'realtime',
    inlineWindowSeconds: 5,
    // The spec's "offline grace default 7 days (up to 1 month by tier)": sandbox and starter
    // keep the default; the larger tiers a week more each, enterprise the month.
    offlineGraceSeconds: 7 * DAY,
    offlineGraceByTier: { growth: 14 * DAY, scale: 21 * DAY, enterprise: 30 * DAY },
    // SendInvoices / CancelInvoice with the location's header keys (client.ts).
    authorityTransport: true,
    cancellationJoinsChain: false,
    // A reversal of a document still offline waits for it: sent first, it would stand alone
    // at AADE (a credit note without its sale in the merchant's VAT books) should the original
    // never arrive. docs/decisions.md "Greece: cancelling an offline_pending receipt (F7)".
    cancellationAwaitsOriginal: { authority: 'AADE', error: { category: 'permanent' } },
  },
  validateConfig: validateMyDataConfig,
  secretConfigFields: GREECE_SECRET_FIELDS,
  certificateFields: [],
  // The issuer and establishment its documents were numbered and sent under (the chain key).
  sealedConfigFields: ['afm', 'branch'],
  validateTransaction: validateMyDataTransaction,
  // Documents are numbered (aa) per series, restarting each year (build.ts nextAa). The
  // series is the issuer's (AFM and branch: the spec's default_series is "unique per (afm,
  // year, branch)", and AADE's UID is made of them), so every location of one AFM and
  // branch draws from one numbering (migration 0042 moved the per-location chains).
  chainKey: ({ location, tx }) => chainKeyOf('gr-mydata', issuerBranchOf(location), seriesOf(tx, location)),
  initialStatus: () => 'pending',
  build: buildMyData,
  // verify-chain (src/cli/verify-chain.ts): fingerprint, signature and link of a stored record.
  verifyRecord: verifyMyDataRecord,
  submit: (record, ctx) => (ctx.mode === 'stub' ? myDataStubSubmit(record, ctx) : submitToAade(record, ctx)),
  // Sent after its original, a reversing 11.4 names the original's MARK.
  completeCancellation: correlateReversal,
  codes: MYDATA_CODES,
  statuses: MYDATA_STATUSES,
  offline: MYDATA_OFFLINE,
  events: [MYDATA_OFFLINE.lateEvent, MYDATA_OFFLINE.expiredEvent],
  // The spec's Greek row names the grace expiry's webhook by the status: accepted as a name of the event.
  eventAliases: { [MYDATA_OFFLINE.expiredStatus]: MYDATA_OFFLINE.expiredEvent },
  // The myDATA codes' translations (codes.ts): POST /v1/translations/errors accepts GR.
  errorTranslations: true,
  receipt: MYDATA_RECEIPT,
};
