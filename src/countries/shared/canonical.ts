/**
 * Canonical JSON and hashing for records that must be byte-for-byte reproducible.
 *
 * A fiscal record is stored, hashed into a chain and shown to auditors; building it
 * twice from the same input must give the same bytes. `JSON.stringify` keeps insertion
 * order, which depends on how each object was assembled, so keys are sorted here
 * (the RFC 8785 idea, without its number rules: our numbers are integers and short
 * decimals, which JavaScript already prints in one way).
 */
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new Error('canonicalJson: non-finite number');
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
    }
    default:
      throw new Error(`canonicalJson: cannot encode a ${typeof value}`);
  }
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
export const sha256Base64 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('base64');
