/**
 * verify-chain for NF525 (countries/types.ts `verifyRecord`): each stored record, closure
 * or journal entry is checked by the auditor's verifiers of this folder (verify.ts for
 * records, closures/verify.ts for closures and the JET), given the record before it:
 * its ES256 signature over its own data with the location's record key, its link to the
 * previous signature, its number and, for records, its running totals. The stored
 * fingerprint is the signature value the body carries.
 */
import type { RecordFault, VerifyRecordInput } from '../types.ts';
import { verifyNf525Chain } from './verify.ts';
import { verifyClosures, verifyJet } from './closures/verify.ts';

const signatureValueOf = (body: string): string | null => {
  try {
    const v = (JSON.parse(body) as { signature?: { value?: unknown } }).signature?.value;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
};

export function verifyNf525Record({ record, previous, recordPublicKey }: VerifyRecordInput): RecordFault | null {
  if (signatureValueOf(record.body) !== record.fingerprint) return { kind: 'body_changed', reason: 'fingerprint mismatch: the stored fingerprint is not the signature value the body carries' };
  if (recordPublicKey === undefined) return { kind: 'signature_invalid', reason: 'the location has no record key to verify with' };
  const before = previous?.body;
  const verify = record.kind === 'closure' ? verifyClosures : record.kind === 'journal' ? verifyJet : verifyNf525Chain;
  const out = verify([record.body], recordPublicKey, { before });
  if (out.ok) return null;
  const reason = out.break.reason;
  if (/previous signature|follows seq|first (record|document)/.test(reason)) return { kind: 'link_broken', reason };
  if (/signature does not verify|another key|no ES256 signature/.test(reason)) return { kind: 'signature_invalid', reason };
  return { kind: 'body_changed', reason };
}
