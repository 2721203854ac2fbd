/**
 * The SAF-T (PT) document signature (`Hash`), Portaria 363/2010 art. 6 (FORMATS.md §7.1).
 *
 * The message is five fields joined by `;`:
 *   InvoiceDate (YYYY-MM-DD) ; SystemEntryDate (YYYY-MM-DDThh:mm:ss) ; InvoiceNo ;
 *   GrossTotal (2 decimals, `.`) ; the Hash of the previous document of the same series
 *   and type (empty for the first one; the last `;` stays).
 * It is signed RSA-SHA1 (PKCS#1 v1.5) with the software producer's private key and
 * written in base64 on one line: 172 characters for the 1024-bit key AT certifies,
 * which is also the most SAF-T's `Hash` holds (SAFPTtextTypeMandatoryMax172Car).
 *
 * Which key (docs/decisions.md "Portugal (issue #14)"): the core hands `build` the key
 * of the uploaded certificate the location names in `country_config.at_certificate_id`
 * (the producer's key pair whose public key AT holds), or, on test keys without one, the
 * account's sandbox certificate. That one is RSA-2048 and cannot make a SAF-T Hash, so
 * sandbox documents are signed with the published sandbox producer key (sandbox-key.ts).
 * An uploaded key that is not RSA-1024 is refused (400): its Hash would not fit SAF-T.
 */
import crypto from 'node:crypto';
import { badRequest } from '../../core/errors.ts';
import type { SigningKey } from '../types.ts';
import { sandboxProducerKey } from './sandbox-key.ts';

export interface HashMessageFields {
  /** YYYY-MM-DD */
  invoiceDate: string;
  /** YYYY-MM-DDThh:mm:ss, local time, no fraction, no zone */
  systemEntryDate: string;
  /** SAF-T InvoiceNo, e.g. `FT AB2019/0035` */
  invoiceNo: string;
  /** 2 decimals, `.` */
  grossTotal: string;
  /** The previous document's Hash in the same series and type; null or '' for the first. */
  previousHash: string | null;
}

export function hashMessage(f: HashMessageFields): string {
  return [f.invoiceDate, f.systemEntryDate, f.invoiceNo, f.grossTotal, f.previousHash ?? ''].join(';');
}

/** RSA-SHA1 (PKCS#1 v1.5) over the UTF-8 message, base64 on one line. */
export function signHashMessage(message: string, key: crypto.KeyObject): string {
  return crypto.sign('sha1', Buffer.from(message, 'utf8'), { key, padding: crypto.constants.RSA_PKCS1_PADDING }).toString('base64');
}

/** Checks a Hash against its message with the producer's public key (or private key, or a certificate PEM). */
export function verifyHash(message: string, hash: string, key: crypto.KeyObject | string): boolean {
  return crypto.verify('sha1', Buffer.from(message, 'utf8'), { key: typeof key === 'string' ? crypto.createPublicKey(key) : key, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.from(hash, 'base64'));
}

/**
 * `HashControl`: the version of the producer's private key (SAF-T PT 1.04_01, 4.1.4.4).
 * One key version is known to the service (a producer that changes its key pair gives
 * AT the new public key and numbers it 2): documents carry `1`.
 */
export const HASH_CONTROL = '1';

export const PRODUCER_KEY_SIZE_ERROR =
  'the SAF-T PT signing key (country_config.at_certificate_id) must be a 1024-bit RSA key: AT certifies 1024-bit keys and the SAF-T Hash holds a 1024-bit signature';

const isRsa1024 = (key: crypto.KeyObject): boolean =>
  key.asymmetricKeyType === 'rsa' && key.asymmetricKeyDetails?.modulusLength === 1024;

/** The producer key a document is signed with (see the file comment). */
export function producerKey(signingKey: SigningKey | undefined): crypto.KeyObject {
  if (signingKey === undefined) {
    throw new Error('pt-saft: no signing key: SAF-T PT documents are signed with the producer key (capabilities.signsWithCertificate)');
  }
  if (isRsa1024(signingKey.privateKey)) return signingKey.privateKey;
  if (signingKey.source === 'sandbox') return sandboxProducerKey;
  throw badRequest(PRODUCER_KEY_SIZE_ERROR);
}

/** What the document prints after the 4 characters (FORMATS.md §7.1). */
export const certifiedProgramText = (certificateNumber: string): string => `Processado por programa certificado n.º ${certificateNumber}/AT`;

/**
 * The message a stored document's Hash signs, rebuilt from the document (its InvoiceDate,
 * SystemEntryDate, InvoiceNo and GrossTotal) and the previous document's Hash: what an
 * auditor checks a chain with. Reads our own `Invoice` layout (xml.ts).
 */
export function documentHashMessage(invoiceXml: string, previousHash: string | null): string {
  const tag = (name: string): string => {
    const v = new RegExp(`<${name}>([^<]*)</${name}>`).exec(invoiceXml)?.[1];
    if (v === undefined) throw new Error(`pt-saft: the document has no ${name}`);
    return v;
  };
  return hashMessage({ invoiceDate: tag('InvoiceDate'), systemEntryDate: tag('SystemEntryDate'), invoiceNo: tag('InvoiceNo'), grossTotal: tag('GrossTotal'), previousHash });
}
