/**
 * verify-chain for SdI (countries/types.ts `verifyRecord`): an FPA12 file carries its
 * XAdES-BES signature, which must verify; an FPR12 file is sent unsigned (docs/decisions.md
 * "FPA12 signature"). FatturaPA files have no fingerprint and no link to each other: their
 * chain is their numbering, which the shared verifier checks.
 */
import type { RecordFault, VerifyRecordInput } from '../types.ts';
import { signatureFault, xmlRoot } from '../shared/record-verify.ts';

export function verifySdiRecord({ record }: VerifyRecordInput): RecordFault | null {
  const parsed = xmlRoot(record.body);
  if ('fault' in parsed) return parsed.fault;
  if (parsed.root.getAttribute('versione') !== 'FPA12') return null;
  return signatureFault(record.body);
}
