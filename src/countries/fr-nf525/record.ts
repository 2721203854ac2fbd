/**
 * The NF525 record document and its signature.
 *
 * The NF525 référentiel (INFOCERT) is not public, so the field list and the message
 * format below are ours, built on what FORMATS.md §8 says is signed: the document
 * number, the timestamp, the totals excluding and including tax per VAT rate, the
 * operation type, and the previous record's signature; plus the grand totals
 * (totals.ts), so that a changed total breaks the signature. docs/decisions.md
 * "France (issue #14)" is the reference for verifiers; this comment says the same.
 *
 * The record body is JSON (`application/json`), pretty-printed, keys in a fixed order
 * (`Nf525Record`). Amounts are integer euro cents, signed: a refund, a void and a
 * cancellation count negative (a cancellation negates the record it cancels; `lines`
 * stay as the request gave them).
 *
 * The signed message (`nf525Message`) is one line of UTF-8 text (ASCII in practice),
 * 28 fields joined by `|`, no trailing separator, none of which can contain `|`
 * (record version 2, tag `NF525R2`; version 1, `NF525R1`, had fields 1-24, then key_id and
 * previous: 26 fields, no payment method nor reason; its records still verify):
 *
 *    1 `NF525R2`              format tag (record, version 2; closures and the JET get their own)
 *    2 register_id            the location's SIRET/SIREN
 *    3 environment            `test` or `live`
 *    4 seq                    the record's place in the register's chain, decimal, from 1
 *    5 document_number        `<register_id>-<seq, 8 digits>`
 *    6 operation              `sale`, `refund`, `void` or `cancellation`
 *    7 timestamp              issue time, Paris wall time with offset, to the second
 *                             (`2026-01-15T11:00:00+01:00`)
 *    8 vat                    per VAT rate, rate ascending, `;`-separated entries
 *                             `<rate>:<excl>:<tax>:<incl>`; rate in percent with at least
 *                             two decimals (`20.00`, `5.50`, `2.10`); empty when no lines
 *    9-11 excl, tax, incl     the record's totals
 *   12-13 gt_excl, gt_incl    perpetual grand total after this record
 *   14-16 day, excl, incl     day total after this record (`YYYY-MM-DD`, Paris)
 *   17-19 month, excl, incl   month total (`YYYY-MM`)
 *   20-22 year, excl, incl    fiscal-year total (`YYYY`, calendar year)
 *   23 cancels               the cancelled record's document number; empty otherwise
 *   24 lines                 lowercase hex SHA-256 of the lines' text (`linesText`): one
 *                            line per `lines` entry, joined by `\n`, each
 *                            `<quantity>;<unit_price>;<rate>;<tax_amount>;<total_amount>;<description>`
 *                            with the quantity in plain decimal (at most 6 decimals, no
 *                            trailing zeros: `1`, `2.5`), the rate as in field 8, and the
 *                            description base64url (UTF-8, no padding), so the detail of
 *                            the sale cannot change either
 *   25 payment_method        `cash`, `card`, `transfer` or `other` (version 2): the payment
 *                            is the data the law secures first (CGI art. 286-I-3° bis: the
 *                            "règlements" a register records; BOI-TVA-DECLA-30-10-30 § 30:
 *                            "les données liées à la réception du paiement"), so a cash sale
 *                            cannot be turned into a card sale without breaking the signature
 *   26 reason                a cancellation's reason (`cancels.reason`) as base64url of its
 *                            UTF-8, no padding; empty when none (version 2): the reason the
 *                            ticket prints ("Motif") is the one signed
 *   27 key_id                lowercase hex SHA-256 of the signing key's DER SubjectPublicKeyInfo
 *   28 previous              the previous record's signature as written in its body
 *                            (`signature.value`); empty for the register's first record
 *
 * Amounts are decimal integers with a leading `-` when negative, no `+`, no padding.
 *
 * Signature: ECDSA on P-256 with SHA-256 over the message bytes (JWS `ES256`), written
 * base64url without padding of the raw 64-byte `r || s` (each 32 bytes big-endian, IEEE
 * P1363 / JWS form, 86 characters). It is the record's fingerprint: the next record
 * signs it as its last field. To check one with OpenSSL, convert r||s to a DER
 * `ECDSA-Sig-Value` and run `openssl dgst -sha256 -verify pub.pem -signature sig.der
 * message.txt` (`rawToDer` below; the golden test does exactly that).
 *
 * ECDSA signatures are randomized (Node 20 / OpenSSL 3.0 offer no RFC 6979 deterministic
 * nonces): building the same record twice gives two different, equally valid signatures
 * over the same message. The ledger stores whichever build it keeps, with its linkData,
 * so the chain stays consistent.
 */
import crypto from 'node:crypto';
import { inProcessSigner, type Signer } from '../../signing/signer.ts';

export const NF525_FORMAT = 'nf525.record';
/** The version records are built in; a verifier reads every version in `MESSAGE_TAGS`. */
export const NF525_RECORD_VERSION = 2;
export const MESSAGE_TAG = 'NF525R2';
/** Each record version's message tag: version 1 (no payment method, no reason) still verifies. */
export const MESSAGE_TAGS: Readonly<Record<number, string>> = { 1: 'NF525R1', 2: 'NF525R2' };
export type Nf525RecordVersion = 1 | 2;
export const SIGNATURE_ALGORITHM = 'ES256';

export type Nf525Operation = 'sale' | 'refund' | 'void' | 'cancellation';

export interface VatTotal {
  /** Percent with at least two decimals (`20.00`, `5.50`). */
  rate: string;
  excl_tax: number;
  tax: number;
  incl_tax: number;
}

export interface PeriodAmounts {
  period: string;
  excl_tax: number;
  incl_tax: number;
}

/** The record body (JSON, keys in this order). */
export interface Nf525Record {
  format: typeof NF525_FORMAT;
  version: Nf525RecordVersion;
  register_id: string;
  legal_name: string;
  /**
   * The location's name and address as the ticket printed them (its header), not signed, as
   * `legal_name`: a duplicate reprints them from here (a duplicate reproduces the ticket as
   * issued, BOI-TVA-DECLA-30-10-30), not from the location as it is now. Absent from records
   * built before they were kept (a reprint of those prints the location's current ones).
   */
  location?: { name: string; address: string | null } | undefined;
  environment: 'test' | 'live';
  seq: number;
  document_number: string;
  operation: Nf525Operation;
  timestamp: string;
  transaction_id: string;
  /** The record a cancellation cancels, and (version 2) the reason given, null when none. */
  cancels: { document_number: string; transaction_id: string; reason?: string | null } | null;
  currency: string;
  payment_method: string;
  /** The lines as the request gave them (positive amounts; signed through their digest, message field 24). */
  lines: { description: string; quantity: number; unit_price: number; tax_rate: number; tax_amount: number; total_amount: number }[];
  vat: VatTotal[];
  totals: { excl_tax: number; tax: number; incl_tax: number };
  grand_totals: {
    perpetual: { excl_tax: number; incl_tax: number };
    day: PeriodAmounts;
    month: PeriodAmounts;
    fiscal_year: PeriodAmounts;
  };
  software: { name: string; version: string };
  signature: {
    algorithm: typeof SIGNATURE_ALGORITHM;
    key_id: string;
    /** The previous record's `signature.value`; null for the register's first record. */
    previous: string | null;
    /** base64url of the raw r||s. */
    value: string;
  };
}

/** A VAT rate in percent as the message writes it: at least two decimals, no trailing zeros beyond. */
export function rateText(rate: number): string {
  const fixed = rate.toFixed(6).replace(/0+$/, '');
  const [units = '0', decimals = ''] = fixed.split('.');
  return `${units}.${decimals.padEnd(2, '0')}`;
}

/** A quantity in plain decimal: at most 6 decimals, no trailing zeros (`1`, `2.5`, `0.333`). */
export const quantityText = (q: number): string => q.toFixed(6).replace(/\.?0+$/, '');

/** The text whose SHA-256 is message field 24 (see the file comment). */
export const linesText = (lines: Nf525Record['lines']): string =>
  lines
    .map((l) => [quantityText(l.quantity), l.unit_price, rateText(l.tax_rate), l.tax_amount, l.total_amount, Buffer.from(l.description, 'utf8').toString('base64url')].join(';'))
    .join('\n');

/** The exact message a record's signature covers (see the file comment). */
export function nf525Message(r: Omit<Nf525Record, 'signature'> & { signature: Pick<Nf525Record['signature'], 'key_id' | 'previous'> }): string {
  return nf525MessageHead(r) + (r.signature.previous ?? '');
}

/**
 * The message up to its last field, the previous record's signature (which cannot hold
 * `|`: base64url): every field before it and the separator after them. What the ledger's signing
 * thread completes (FiscalSystem.prepare).
 */
export function nf525MessageHead(r: Omit<Nf525Record, 'signature'> & { signature: Pick<Nf525Record['signature'], 'key_id'> }): string {
  const tag = MESSAGE_TAGS[r.version];
  if (tag === undefined) throw new Error(`nf525: no record version ${String(r.version)}`);
  const vat = r.vat.map((v) => `${v.rate}:${v.excl_tax}:${v.tax}:${v.incl_tax}`).join(';');
  const g = r.grand_totals;
  const fields: (string | number)[] = [
    tag,
    r.register_id,
    r.environment,
    r.seq,
    r.document_number,
    r.operation,
    r.timestamp,
    vat,
    r.totals.excl_tax,
    r.totals.tax,
    r.totals.incl_tax,
    g.perpetual.excl_tax,
    g.perpetual.incl_tax,
    g.day.period,
    g.day.excl_tax,
    g.day.incl_tax,
    g.month.period,
    g.month.excl_tax,
    g.month.incl_tax,
    g.fiscal_year.period,
    g.fiscal_year.excl_tax,
    g.fiscal_year.incl_tax,
    r.cancels?.document_number ?? '',
    crypto.createHash('sha256').update(linesText(r.lines), 'utf8').digest('hex'),
    // Version 2: the payment and the cancellation's reason are signed too.
    ...(r.version >= 2 ? [r.payment_method, Buffer.from(r.cancels?.reason ?? '', 'utf8').toString('base64url')] : []),
    r.signature.key_id,
  ];
  for (const f of fields) {
    if (String(f).includes('|')) throw new Error(`nf525: a signed field contains "|": ${String(f)}`);
  }
  return `${fields.join('|')}|`;
}

/**
 * ES256 over the message: base64url of the raw r||s. Through the key's signer
 * (signing/signer.ts): in process, or the PKCS#11 token in HardwareDevice mode, which
 * returns the same r||s form. A bare KeyObject signs in process.
 */
export const signMessage = (message: string, key: crypto.KeyObject | Signer): string =>
  (key instanceof crypto.KeyObject ? inProcessSigner(key) : key).sign('sha256', Buffer.from(message, 'utf8')).toString('base64url');

/** Checks an ES256 signature (base64url r||s) over the message. */
export function verifyMessage(message: string, signature: string, publicKey: crypto.KeyObject): boolean {
  const raw = Buffer.from(signature, 'base64url');
  if (raw.length !== 64 || raw.toString('base64url') !== signature) return false;
  return crypto.verify('sha256', Buffer.from(message, 'utf8'), { key: publicKey, dsaEncoding: 'ieee-p1363' }, raw);
}

/** A raw r||s signature as the DER `ECDSA-Sig-Value` OpenSSL reads (`SEQUENCE { INTEGER r, INTEGER s }`). */
export function rawToDer(raw: Buffer): Buffer {
  if (raw.length !== 64) throw new Error('an ES256 signature is 64 bytes');
  const int = (b: Buffer): Buffer => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    let v = b.subarray(i);
    if (v[0]! & 0x80) v = Buffer.concat([Buffer.from([0]), v]);
    return Buffer.concat([Buffer.from([0x02, v.length]), v]);
  };
  const body = Buffer.concat([int(raw.subarray(0, 32)), int(raw.subarray(32))]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

/**
 * The signature extract printed on the receipt (render hint `signature_extract`): the
 * 3rd, 7th, 13th and 19th characters of the base64url signature. The référentiel fixes
 * the printed extract; four characters at these positions is the practice reported for
 * certified registers, to be confirmed against it (docs/decisions.md).
 */
export const SIGNATURE_EXTRACT_POSITIONS = [3, 7, 13, 19] as const;
export const signatureExtract = (signature: string): string => SIGNATURE_EXTRACT_POSITIONS.map((p) => signature.charAt(p - 1)).join('');
