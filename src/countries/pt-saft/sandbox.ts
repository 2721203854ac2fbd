/**
 * Portugal has no per-transaction authority (submission `none`): the core never submits
 * these records. The stub answers as the shared sandbox does.
 */
import type { SandboxSpec } from '../shared/sandbox.ts';
import { SAFT_CODES } from './codes.ts';

export const saftSandbox: SandboxSpec = {
  system: 'pt-saft',
  authority: 'the Autoridade Tributária',
  codes: SAFT_CODES,
  accept: (record) => ({
    response: { note: 'SAF-T PT documents are final once signed; they are reported in the monthly SAF-T file', atcud: record.fiscalId },
  }),
};
