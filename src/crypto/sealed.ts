import crypto from 'node:crypto';

/**
 * Sealed secrets: AES-256-GCM with a random 96-bit IV. The associated data binds a
 * ciphertext to where it belongs (e.g. `location:<id>:<config field>`), so a sealed
 * value copied into another row or field does not open.
 * Format: `sealed:v1:<base64url(iv | tag | ciphertext)>`.
 */
const PREFIX = 'sealed:v1:';

export function seal(key: Buffer, plaintext: string, aad: string): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url');
}

export function isSealed(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

export function unseal(key: Buffer, sealed: string, aad: string): string {
  if (!isSealed(sealed)) throw new Error('not a sealed value');
  const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}

/** How a secret is shown when read back: never the value, only its last 4 characters. */
export function maskSecret(plaintext: string): string {
  return plaintext.length <= 8 ? '********' : `********${plaintext.slice(-4)}`;
}
