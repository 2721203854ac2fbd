/**
 * Italy Documento Commerciale: the retail receipt whose data reach the Agenzia delle
 * Entrate (D.Lgs. 127/2015 art. 2), sent in real time; 12 days is the Italian
 * transmission window. Each document is sealed with the merchant's seal certificate and
 * chained per register (build.ts, xml.ts); it is sent to AdE, which takes it and judges
 * it later: its result is polled (client.ts, response.ts). docs/decisions.md "Italy:
 * Documento Commerciale" gives the legal route and its limits.
 */
import type { AuthorityOutcome, FiscalSystem } from '../types.ts';
import { NATURA_LINE_FIELD } from '../it/natura.ts';
import { chainKeyOf } from '../shared/chain-key.ts';
import { configString } from '../shared/config-fields.ts';
import { DC_CERTIFICATE_FIELDS, validateDcConfig } from './config.ts';
import { validateDcTransaction } from './metadata.ts';
import { buildDc } from './build.ts';
import { dcAnnulledDocument } from './annulment.ts';
import { dcStubPoll, dcStubSubmit } from './sandbox.ts';
import { pollAde, submitToAde } from './client.ts';
import { DC_CODES } from './codes.ts';
import { DC_POLL_ATTEMPTS } from './response.ts';
import { corrispettivi } from './corrispettivi/index.ts';
import { verifyDcRecord } from './verify.ts';
import { DC_RECEIPT } from './receipt.ts';

/**
 * The spec's Italy DC transitions: a document AdE refuses goes `pending` → `failed`
 * (Statuses: "`pending` (Italy DC) | authority result polling | rejected | `failed`"),
 * not `failed_permanent` as other systems' rejections do. It is not retried all the same
 * (Errors: 0100, 0200, 0403 "Retried: no"): its queue entry is dead at once.
 */
const failedWhenRejected = (o: AuthorityOutcome): AuthorityOutcome => (o.kind === 'rejected' ? { ...o, status: 'failed' } : o);

export const documentoCommerciale: FiscalSystem<'it-dc', 'IT'> = {
  key: 'it-dc',
  country: 'IT',
  version: '1.0.0',
  capabilities: {
    signsLocally: true,
    chained: true,
    submission: 'realtime',
    submissionWindowDays: 12,
    // A result that does not come is asked for 48 h (response.ts DC_POLL_ATTEMPTS, with
    // growing waits), not the send job's attempts at 60 s (50 minutes).
    pollAttempts: DC_POLL_ATTEMPTS,
    authorityTransport: true,
    // A documento di annullo is a new document with its own number on the register.
    cancellationJoinsChain: true,
    // Sealed with the location's seal certificate (seal_certificate_id), or the account's
    // sandbox certificate on test keys in stub mode.
    signsWithCertificate: true,
  },
  validateConfig: validateDcConfig,
  secretConfigFields: [],
  // The seal certificate: it seals every document and authenticates the TLS channel.
  certificateFields: DC_CERTIFICATE_FIELDS,
  lineFields: [NATURA_LINE_FIELD],
  validateTransaction: validateDcTransaction,
  // One chain per register (PEM matricola): its documents are numbered and linked in order.
  chainKey: ({ location }) => chainKeyOf('it-dc', location.id, configString(location.config, 'pem_matricola') ?? 'default'),
  initialStatus: () => 'pending',
  build: buildDc,
  // An annullo names its document: the core lets each document be annulled once (annulment.ts).
  annulledDocument: dcAnnulledDocument,
  // verify-chain (src/cli/verify-chain.ts): fingerprint, signature and link of a stored record.
  verifyRecord: verifyDcRecord,
  submit: async (record, ctx) => failedWhenRejected(await (ctx.mode === 'stub' ? dcStubSubmit(record, ctx) : submitToAde(record, ctx))),
  poll: async (record, ctx) => failedWhenRejected(await (ctx.mode === 'stub' ? dcStubPoll(record, ctx) : pollAde(record, ctx))),
  codes: DC_CODES,
  errorTranslations: true,
  ...corrispettivi,
  receipt: DC_RECEIPT,
};
