/**
 * France has no per-transaction authority: the core never submits NF525 records
 * (submission `none`). The stub exists so `submit` behaves like every system's, and
 * answers as the shared sandbox does.
 */
import type { SandboxSpec } from '../shared/sandbox.ts';
import { NF525_CODES } from './codes.ts';

export const nf525Sandbox: SandboxSpec = {
  system: 'fr-nf525',
  authority: 'the French tax administration',
  codes: NF525_CODES,
  accept: (record) => ({ response: { note: 'NF525 records are final once signed; nothing is transmitted', number: record.fiscalId } }),
};
