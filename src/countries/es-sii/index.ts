/**
 * SII (Suministro Inmediato de Información, RD 596/2016): the VAT books are kept at AEAT;
 * each issued invoice is reported within 4 days (Sundays and holidays excluded). Not
 * signed, not chained.
 */
import type { FiscalSystem } from '../types.ts';
import { chainKeyOf, metaString } from '../shared/placeholder.ts';
import { stubOnlySubmit } from '../shared/sandbox.ts';
import { validateSiiConfig } from './config.ts';
import { validateSiiTransaction } from './metadata.ts';
import { buildSii } from './build.ts';
import { siiSandbox } from './sandbox.ts';
import { SII_CODES } from './codes.ts';

export const sii: FiscalSystem = {
  key: 'es-sii',
  country: 'ES',
  version: '0.1.0',
  capabilities: {
    signsLocally: false,
    chained: false,
    submission: 'realtime',
    submissionWindowDays: 4,
    authorityTransport: false,
    cancellationJoinsChain: false,
  },
  validateConfig: validateSiiConfig,
  secretConfigFields: [],
  validateTransaction: validateSiiTransaction,
  chainKey: ({ location, tx }) => chainKeyOf('es-sii', location.id, metaString(tx, 'series') ?? 'default'),
  initialStatus: () => 'pending',
  build: buildSii,
  submit: stubOnlySubmit(siiSandbox),
  codes: SII_CODES,
};
