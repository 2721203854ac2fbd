import crypto from 'node:crypto';

/**
 * API keys: `svc_test_` or `svc_live_` + 32 random base62 characters (≈190 bits).
 * At rest: only an HMAC-SHA256 of the whole key under a server secret, plus the first
 * 8 random characters as a lookup handle (it finds the row; the HMAC proves the key).
 */
export type Environment = 'test' | 'live';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_RE = /^svc_(test|live)_([0-9A-Za-z]{32})$/;
const LOOKUP_LENGTH = 8;

export const prefixFor = (env: Environment) => `svc_${env}_` as const;

/** 32 base62 characters without modulo bias (bytes >= 248 are drawn again). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

export interface NewApiKey {
  key: string;
  prefix: string;
  lookup: string;
  last4: string;
}

export function generateApiKey(env: Environment): NewApiKey {
  const secret = randomBase62(32);
  return { key: prefixFor(env) + secret, prefix: prefixFor(env), lookup: secret.slice(0, LOOKUP_LENGTH), last4: secret.slice(-4) };
}

export interface ParsedApiKey {
  environment: Environment;
  lookup: string;
}

/** Null when the text is not shaped like one of our keys. */
export function parseApiKey(text: string): ParsedApiKey | null {
  const m = KEY_RE.exec(text);
  if (!m) return null;
  return { environment: m[1] as Environment, lookup: m[2]!.slice(0, LOOKUP_LENGTH) };
}

export function hashApiKey(hmacKey: Buffer, key: string): Buffer {
  return crypto.createHmac('sha256', hmacKey).update(key, 'utf8').digest();
}

/** Constant-time comparison of a presented key's hash with a stored one. */
export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
