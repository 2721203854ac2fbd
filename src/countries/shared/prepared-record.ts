/**
 * A record a plug-in prepares up to its chained signature (FiscalSystem.prepare), built
 * whole on this thread: what the plug-in's `build` is for such systems, so that `build`
 * and the ledger's signing thread make the same record from the same input.
 */
import { signChainInline } from '../../signing/chain-signer.ts';
import type { BuildInput, FiscalRecord, PreparedRecord } from '../types.ts';

export function buildPrepared(prepared: PreparedRecord, input: Pick<BuildInput, 'chain'>): FiscalRecord {
  const previous = input.chain.previous?.fingerprint ?? null;
  const [signature] = signChainInline([prepared.signing], previous);
  return prepared.finish(signature!, previous);
}
