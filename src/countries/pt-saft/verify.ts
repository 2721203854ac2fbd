/**
 * verify-chain for SAF-T (PT) (countries/types.ts `verifyRecord`): the document's `Hash`
 * is the stored fingerprint, and verifies (RSA-SHA1, signature.ts `verifyHash`) over the
 * message rebuilt from the document and the previous document's Hash (signature.ts
 * `documentHashMessage`, Portaria 363/2010) with the key that signs this location's
 * documents: its uploaded producer key when it names one, else the sandbox key for test
 * documents and the service's configured producer key for live ones (signature.ts
 * `producerKey`). Its InvoiceNo carries its sequence. A status change (a cancellation) is
 * outside the chain and unsigned: nothing to check.
 */
import crypto from 'node:crypto';
import type { RecordFault, VerifyRecordInput } from '../types.ts';
import { configuredProducerKey, documentHashMessage, verifyHash } from './signature.ts';
import { sandboxProducerKey } from './sandbox-key.ts';
import { signerOf } from '../../signing/signer.ts';

export function verifySaftRecord({ record, previous, environment, signingKey, software }: VerifyRecordInput): RecordFault | null {
  if (record.fingerprint === null) return null;
  const hash = /<Hash>([^<]*)<\/Hash>/.exec(record.body)?.[1];
  if (hash !== record.fingerprint) return { kind: 'body_changed', reason: 'fingerprint mismatch: the document\'s Hash is not the stored fingerprint' };
  const number = /<InvoiceNo>[^<]*\/([0-9]+)<\/InvoiceNo>/.exec(record.body)?.[1];
  if (number !== String(record.seq)) return { kind: 'link_broken', reason: `the document's InvoiceNo has number ${number ?? '(none)'}, the record is stored at seq ${record.seq}` };
  let message: string;
  try {
    message = documentHashMessage(record.body, previous?.fingerprint ?? null);
  } catch (err) {
    return { kind: 'body_changed', reason: (err as Error).message };
  }
  const keys: crypto.KeyObject[] = [];
  // The public half of the key `producerKey` (signature.ts) signs with: in process or in a PKCS#11 token.
  if (signingKey?.source === 'uploaded') keys.push(signerOf(signingKey).publicKey);
  else if (environment === 'test') keys.push(crypto.createPublicKey(sandboxProducerKey));
  else {
    const configured = configuredProducerKey(software);
    if (configured) keys.push(signerOf(configured).publicKey);
  }
  if (keys.length === 0) return { kind: 'signature_invalid', reason: 'no producer key to verify live documents with (PT_SOFTWARE_KEY_FILE)' };
  if (!keys.some((k) => verifyHash(message, hash, k))) {
    return { kind: 'signature_invalid', reason: 'the Hash does not verify over the document\'s InvoiceDate, SystemEntryDate, InvoiceNo, GrossTotal and the previous Hash' };
  }
  return null;
}
