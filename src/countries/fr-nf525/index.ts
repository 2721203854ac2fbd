/**
 * France NF525 (certified POS, CGI art. 286-I-3° bis): records are signed (ES256, the
 * location's record key) and chained locally per register, which makes them final
 * (`success` at creation); nothing is sent per transaction. build.ts builds them,
 * record.ts says exactly what is signed, totals.ts carries the grand totals along the
 * chain, verify.ts checks a run of records. closures/: the `france/closures` processor,
 * the closures and the JET (signed, chained), their inspector lists, and the archives of
 * each closed month and year (archive.ts, closures/archives.ts; archive-verify.ts checks one).
 */
import type { FiscalSystem } from '../types.ts';
import { chainKeyOf } from '../shared/chain-key.ts';
import { stubOnlySubmit } from '../shared/sandbox.ts';
import { validateNf525Config } from './config.ts';
import { validateNf525Transaction } from './metadata.ts';
import { buildNf525, prepareNf525 } from './build.ts';
import { nf525Sandbox } from './sandbox.ts';
import { NF525_CODES } from './codes.ts';
import { ARCHIVES_FILE } from './closures/archives.ts';
import { CLOSURES_FILE, JET_FILE } from './closures/files.ts';
import { createClosuresProcessor, journalSoftwareStart, journalSoftwareStop } from './closures/processor.ts';
import { journalLocationChange } from './closures/location-changes.ts';
import { verifyNf525Record } from './verify-record.ts';
import { NF525_RECEIPT } from './receipt.ts';

export const nf525: FiscalSystem<'fr-nf525', 'FR'> = {
  key: 'fr-nf525',
  country: 'FR',
  version: '1.0.0',
  capabilities: {
    signsLocally: true,
    chained: true,
    submission: 'none',
    authorityTransport: false,
    cancellationJoinsChain: true,
    // Signed by the installation: the location's ECDSA P-256 key, generated on first use
    // and sealed with MASTER_KEY (services/signing-keys.ts `recordKey`).
    recordKey: 'ec-p256',
  },
  validateConfig: validateNf525Config,
  secretConfigFields: [],
  certificateFields: [],
  // The register's identity is signed in every record, closure and JET event and names
  // every document number; the verifier refuses a chain whose register changes
  // (inaltérabilité, BOI-TVA-DECLA-30-10-30). So it is fixed once the register has records:
  // another SIRET is another register, i.e. a new location (its own chain from seq 1).
  sealedConfigFields: ['register_id'],
  validateTransaction: validateNf525Transaction,
  // One chain per register; a location is one register.
  chainKey: ({ location }) => chainKeyOf('fr-nf525', location.id, 'default'),
  initialStatus: () => 'success',
  build: buildNf525,
  prepare: prepareNf525,
  // verify-chain (src/cli/verify-chain.ts): fingerprint, signature and link of a stored record.
  verifyRecord: verifyNf525Record,
  submit: stubOnlySubmit(nf525Sandbox),
  codes: NF525_CODES,
  errorTranslations: true,
  // Daily, monthly and annual closures (closures/processor.ts), journaled in the JET.
  processors: (deps) => [createClosuresProcessor(deps)],
  // The inspectors' files: closures, the JET, and the signed archives (one per closed month and year).
  locationFiles: [CLOSURES_FILE, JET_FILE, ARCHIVES_FILE],
  // The JET journals the software's start (the first record a process signs for a register)
  // and that process's clean stop.
  afterFirstRecord: journalSoftwareStart,
  beforeProcessStop: journalSoftwareStop,
  // The JET journals a change of the register's parameters or status, and its deletion,
  // in the change's own database transaction (closures/location-changes.ts).
  onLocationChanged: journalLocationChange,
  receipt: NF525_RECEIPT,
};
