/**
 * Italy Documento Commerciale: the retail receipt whose data reach the Agenzia delle
 * Entrate (D.Lgs. 127/2015 art. 2), sent in real time; 12 days is the Italian
 * transmission window. Numbered per register; not hash-chained.
 */
import type { FiscalSystem } from '../types.ts';
import { NATURA_LINE_FIELD } from '../it/natura.ts';
import { chainKeyOf } from '../shared/chain-key.ts';
import { configString } from '../shared/config-fields.ts';
import { stubOnlySubmit } from '../shared/sandbox.ts';
import { DC_CERTIFICATE_FIELDS, validateDcConfig } from './config.ts';
import { validateDcTransaction } from './metadata.ts';
import { buildDc } from './build.ts';
import { dcSandbox } from './sandbox.ts';
import { DC_CODES } from './codes.ts';
import { corrispettivi } from './corrispettivi/index.ts';

export const documentoCommerciale: FiscalSystem<'it-dc', 'IT'> = {
  key: 'it-dc',
  country: 'IT',
  version: '0.1.0',
  capabilities: {
    signsLocally: false,
    chained: false,
    submission: 'realtime',
    submissionWindowDays: 12,
    authorityTransport: false,
    // A documento di annullo is a new document with its own number on the register.
    cancellationJoinsChain: true,
  },
  validateConfig: validateDcConfig,
  secretConfigFields: [],
  certificateFields: DC_CERTIFICATE_FIELDS,
  lineFields: [NATURA_LINE_FIELD],
  validateTransaction: validateDcTransaction,
  // The register (PEM matricola) numbers its documents.
  chainKey: ({ location }) => chainKeyOf('it-dc', location.id, configString(location.config, 'pem_matricola') ?? 'default'),
  initialStatus: () => 'pending',
  build: buildDc,
  submit: stubOnlySubmit(dcSandbox),
  codes: DC_CODES,
  errorTranslations: true,
  ...corrispettivi,
};
