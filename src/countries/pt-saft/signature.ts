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
 * Which key (docs/decisions.md "Portugal: the software producer key"), first that applies:
 * 1. the uploaded certificate the location names in `country_config.at_certificate_id`
 *    (the core hands it to `build` as `signingKey`), HashControl 1;
 * 2. live: the service's configured producer key, `PT_SOFTWARE_KEY_FILE` with its version
 *    `PT_SOFTWARE_KEY_VERSION` as HashControl (`software.producerKeys.PT`, config.ts);
 * 3. test keys: the published sandbox producer key (sandbox-key.ts), HashControl 1 (the
 *    account's sandbox certificate is RSA-2048 and cannot make a SAF-T Hash). Never the
 *    configured key: a test document signed by the certified program's key could pass
 *    for a real one, and anyone with a test key could make them.
 * Live without 1 or 2 is refused (400), never signed with the sandbox key. A key that is
 * not RSA-1024 is refused (400): its Hash would not fit SAF-T.
 */
import crypto from 'node:crypto';
import { badRequest } from '../../core/errors.ts';
import { inProcessSigner, signerOf, type Signer } from '../../signing/signer.ts';
import type { BuildInput, LocationForFiscal, ProducerKey, SoftwareIdentity } from '../types.ts';
import { configString } from '../shared/config-fields.ts';
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

/**
 * RSA-SHA1 (PKCS#1 v1.5) over the UTF-8 message, base64 on one line. Through the key's
 * signer (signing/signer.ts: in process, or CKM_SHA1_RSA_PKCS in the PKCS#11 token); a
 * bare KeyObject signs in process.
 */
export function signHashMessage(message: string, key: crypto.KeyObject | Signer): string {
  return (key instanceof crypto.KeyObject ? inProcessSigner(key) : key).sign('sha1', Buffer.from(message, 'utf8')).toString('base64');
}

/** Checks a Hash against its message with the producer's public key (or private key, or a certificate PEM). */
export function verifyHash(message: string, hash: string, key: crypto.KeyObject | string): boolean {
  return crypto.verify('sha1', Buffer.from(message, 'utf8'), { key: typeof key === 'string' ? crypto.createPublicKey(key) : key, padding: crypto.constants.RSA_PKCS1_PADDING }, Buffer.from(hash, 'base64'));
}

/** `HashControl` (SAF-T PT 1.04_01, 4.1.4.4): the version of the producer's private key, 1 unless configured. */
export const HASH_CONTROL = '1';

export const PRODUCER_KEY_SIZE_ERROR =
  'the SAF-T PT signing key (country_config.at_certificate_id) must be a 1024-bit RSA key: AT certifies 1024-bit keys and the SAF-T Hash holds a 1024-bit signature';
export const CONFIGURED_KEY_SIZE_ERROR =
  'the SAF-T PT producer key (PT_SOFTWARE_KEY_FILE) must be a 1024-bit RSA key: AT certifies 1024-bit keys and the SAF-T Hash holds a 1024-bit signature';
export const LIVE_NEEDS_PRODUCER_KEY =
  'live SAF-T PT documents are signed with the certified software key: the service has none configured (PT_SOFTWARE_KEY_FILE) and the location names none (country_config.at_certificate_id)';

const isRsa1024 = (signer: Signer): boolean =>
  signer.publicKey.asymmetricKeyType === 'rsa' && signer.publicKey.asymmetricKeyDetails?.modulusLength === 1024;

/** The key a document is signed with, and its version (HashControl). */
export interface ProducerSigner {
  key: Signer;
  hashControl: string;
  source: 'location' | 'configured' | 'sandbox';
}

/** The producer key a document is signed with (see the file comment for the order). */
export function producerKey(input: Pick<BuildInput, 'signingKey' | 'software' | 'environment'>): ProducerSigner {
  const { signingKey } = input;
  if (signingKey?.source === 'uploaded') {
    const signer = signerOf(signingKey);
    if (!isRsa1024(signer)) throw badRequest(PRODUCER_KEY_SIZE_ERROR);
    return { key: signer, hashControl: HASH_CONTROL, source: 'location' };
  }
  if (input.environment === 'test') return { key: inProcessSigner(sandboxProducerKey), hashControl: HASH_CONTROL, source: 'sandbox' };
  const configured = configuredProducerKey(input.software);
  if (configured === undefined) throw badRequest(LIVE_NEEDS_PRODUCER_KEY);
  // The configured key: in process (PT_SOFTWARE_KEY_FILE) or in the PKCS#11 token (HardwareDevice mode).
  const signer = signerOf(configured);
  if (!isRsa1024(signer)) throw badRequest(CONFIGURED_KEY_SIZE_ERROR);
  return { key: signer, hashControl: configured.version, source: 'configured' };
}

/** The service's configured producer key for Portugal (config.ts `producerKeys`, `PT_SOFTWARE_*`). */
export const configuredProducerKey = (software: SoftwareIdentity): ProducerKey | undefined => software.producerKeys?.PT;

/**
 * The program's AT certificate number printed on documents, in QR field R and in the
 * SAF-T header: the location's `software_certificate_number` when set (an override), else
 * the service's `PT_SOFTWARE_CERTIFICATE_NUMBER`; undefined before certification.
 */
export function certificateNumberOf(location: LocationForFiscal, software: SoftwareIdentity): string | undefined {
  return configString(location.config, 'software_certificate_number') ?? configuredProducerKey(software)?.certificateNumber;
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
