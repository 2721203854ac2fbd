/**
 * verify-chain for TicketBAI (countries/types.ts `verifyRecord`): the record's XAdES
 * signature verifies (the certificate of its KeyInfo; shared/record-verify.ts `signatureFault`), its SignatureValue is the stored
 * fingerprint, and an invoice's `EncadenamientoFacturaAnterior` repeats the first 100
 * characters of the previous invoice's SignatureValue (FORMATS.md §1.5; the first invoice
 * of a chain has none). Annulments (`AnulaTicketBai`) stand outside the chain: only their
 * signature is checked.
 */
import type { RecordFault, VerifyRecordInput } from '../types.ts';
import { findElement, signatureFault, signatureValueOf, xmlRoot } from '../shared/record-verify.ts';
import { signatureExcerpt } from './xml.ts';

export function verifyTicketBaiRecord({ record, previous }: VerifyRecordInput): RecordFault | null {
  const parsed = xmlRoot(record.body);
  if ('fault' in parsed) return parsed.fault;
  const signed = signatureFault(record.body);
  if (signed) return signed;
  if (record.fingerprint === null) return null; // an annulment: outside the chain
  const value = signatureValueOf(parsed.root);
  if (value !== record.fingerprint) return { kind: 'body_changed', reason: 'fingerprint mismatch: the stored fingerprint is not the record\'s SignatureValue' };
  const link = findElement(parsed.root, 'SignatureValueFirmaFacturaAnterior')?.textContent ?? null;
  const expected = previous?.fingerprint ?? null;
  if (expected === null) {
    if (link !== null) return { kind: 'link_broken', reason: 'the first invoice of the chain names a previous invoice' };
  } else if (link !== signatureExcerpt(expected)) {
    return { kind: 'link_broken', reason: 'EncadenamientoFacturaAnterior does not repeat the previous invoice\'s SignatureValue' };
  }
  return null;
}
