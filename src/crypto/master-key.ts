import crypto from 'node:crypto';

/**
 * MASTER_KEY is the one root secret. Purpose keys are derived from it with HKDF so
 * that the key sealing secrets never doubles as the key hashing API keys.
 */
export interface DerivedKeys {
  /** HMAC key for API key hashes. */
  apiKeyHash: Buffer;
  /** AES-256-GCM key for sealed secrets (location secrets, certificate keys…). */
  seal: Buffer;
  /** A non-secret value that identifies the master key (stored to detect a wrong key at start). */
  checkValue: string;
}

const derive = (master: Buffer, info: string) => Buffer.from(crypto.hkdfSync('sha256', master, Buffer.alloc(0), info, 32));

export function deriveKeys(master: Buffer): DerivedKeys {
  if (master.length !== 32) throw new Error('MASTER_KEY must be 32 bytes');
  return {
    apiKeyHash: derive(master, 'fiscalization/api-key-hash/v1'),
    seal: derive(master, 'fiscalization/seal/v1'),
    checkValue: derive(master, 'fiscalization/key-check/v1').toString('hex').slice(0, 16),
  };
}

/** Parses MASTER_KEY: 32 bytes as base64 (44 chars) or hex (64 chars). */
export function parseMasterKey(text: string): Buffer {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const buf = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (buf.length === 32) return buf;
  }
  throw new Error('MASTER_KEY must be 32 random bytes, base64- or hex-encoded (e.g. `openssl rand -base64 32`)');
}

export function generateMasterKey(): string {
  return crypto.randomBytes(32).toString('base64');
}
