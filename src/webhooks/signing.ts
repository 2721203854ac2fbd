import crypto from 'node:crypto';

/**
 * Webhook secrets and signatures.
 *
 * Secret format: `whsec_` + 32 random base62 characters (≈190 bits). 32 characters of
 * [0-9A-Za-z] are also valid base64 (standard and url-safe alphabets alike, no padding
 * needed), so the one secret defines both signing schemes without ambiguity:
 *
 * - The spec's scheme (`X-Webhook-Signature: sha256=<hex>` and
 *   `X-Fiscalization-Signature: t=<ts>,v1=<hex>`): HMAC-SHA256 over `<timestamp>.<body>`
 *   keyed with the secret string exactly as shown to the client, `whsec_` included
 *   (its UTF-8 bytes) — what "with the webhook secret" means to anyone reading the spec.
 * - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`):
 *   HMAC-SHA256 over `<id>.<timestamp>.<body>` keyed with the base64-decoding of the part
 *   after `whsec_` (24 bytes), as the Standard Webhooks libraries do.
 */
export const SECRET_PREFIX = 'whsec_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_RE = /^whsec_[0-9A-Za-z]{32}$/;

/** 32 base62 characters without modulo bias (bytes >= 248 are drawn again). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBase62(32);
}

export const isWebhookSecret = (s: string): boolean => SECRET_RE.test(s);

/** The Standard Webhooks key: the base64 part of the secret, decoded. */
export function standardWebhooksKey(secret: string): Buffer {
  const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(b64, 'base64');
}

/** Hex HMAC-SHA256 of `<timestamp>.<body>` under the whole secret string (the spec's scheme). */
export function specSignature(secret: string, timestamp: number, body: string): string {
  return crypto.createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/** Base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` under the decoded secret (Standard Webhooks). */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return crypto.createHmac('sha256', standardWebhooksKey(secret)).update(`${id}.${timestamp}.${body}`, 'utf8').digest('base64');
}

export interface SignInput {
  secret: string;
  /**
   * Standard Webhooks' `webhook-id`: the delivery's id, the same on every retry of it.
   * Not the event's: one fact goes out under both its names (two deliveries to one
   * endpoint, DECISIONS), and a receiver deduplicating by `webhook-id` must keep both.
   */
  messageId: string;
  /** Unix seconds of this attempt. */
  timestamp: number;
  /** The exact bytes sent. */
  body: string;
}

/** Every signature header of one delivery attempt. */
export function signatureHeaders(s: SignInput): Record<string, string> {
  const hex = specSignature(s.secret, s.timestamp, s.body);
  return {
    'x-webhook-timestamp': String(s.timestamp),
    'x-webhook-signature': `sha256=${hex}`,
    'x-fiscalization-signature': `t=${s.timestamp},v1=${hex}`,
    'webhook-id': s.messageId,
    'webhook-timestamp': String(s.timestamp),
    'webhook-signature': `v1,${standardSignature(s.secret, s.messageId, s.timestamp, s.body)}`,
  };
}

const safeEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
};

/**
 * Receiver-side check of the spec's headers (for integrators and our docs). `signature`
 * is either `X-Webhook-Signature` (`sha256=<hex>`, with `timestamp` from
 * `X-Webhook-Timestamp`) or `X-Fiscalization-Signature` (`t=<ts>,v1=<hex>`, which
 * carries its own timestamp). The timestamp must be within `toleranceSeconds` of
 * `nowSeconds`; the HMAC is compared in constant time.
 */
export function verifySpecSignature(
  secret: string,
  headers: { timestamp?: string | undefined; signature: string | undefined },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const sig = headers.signature ?? '';
  let tsText = headers.timestamp;
  let hex: string | undefined;
  const plain = /^sha256=([0-9a-f]{64})$/.exec(sig);
  if (plain) hex = plain[1];
  else {
    const parts = Object.fromEntries(sig.split(',').map((p) => p.split('=', 2) as [string, string]));
    tsText = parts.t;
    hex = /^[0-9a-f]{64}$/.test(parts.v1 ?? '') ? parts.v1 : undefined;
  }
  if (!hex || !tsText || !/^\d{1,12}$/.test(tsText)) return false;
  const ts = Number(tsText);
  if (Math.abs(nowSeconds - ts) > toleranceSeconds) return false;
  return safeEqual(hex, specSignature(secret, ts, body));
}
