/**
 * verify-chain for the Documento Commerciale (countries/types.ts `verifyRecord`): the
 * document's XAdES-BES seal verifies (the certificate of its KeyInfo), its fingerprint is
 * the SHA-256 of its SignatureValue (build.ts `dcFingerprint`), and the signed chain
 * property (`fc:Link`, xml.ts `chainPropertyXml`) names its sequence and the previous
 * document's fingerprint.
 */
import type { RecordFault, VerifyRecordInput } from '../types.ts';
import { findElement, signatureFault, signatureValueOf, xmlRoot } from '../shared/record-verify.ts';
import { dcFingerprint } from './build.ts';

export function verifyDcRecord({ record, previous }: VerifyRecordInput): RecordFault | null {
  const parsed = xmlRoot(record.body);
  if ('fault' in parsed) return parsed.fault;
  const signed = signatureFault(record.body);
  if (signed) return signed;
  const value = signatureValueOf(parsed.root);
  if (value === undefined || dcFingerprint(value) !== record.fingerprint) {
    return { kind: 'body_changed', reason: 'fingerprint mismatch: the stored fingerprint is not the SHA-256 of the document\'s SignatureValue' };
  }
  const link = findElement(parsed.root, 'Link');
  const sequence = link ? findElement(link, 'Sequence')?.textContent : undefined;
  if (sequence !== String(record.seq)) return { kind: 'link_broken', reason: `the signed chain link names sequence ${sequence ?? '(none)'}, the record is stored at seq ${record.seq}` };
  const named = link ? (findElement(link, 'Previous')?.textContent ?? null) : null;
  const expected = previous?.fingerprint ?? null;
  if (named !== expected) return { kind: 'link_broken', reason: `the signed chain link names previous ${named ?? '(none)'}, the previous document's fingerprint is ${expected ?? '(none)'}` };
  return null;
}
