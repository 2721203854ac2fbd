import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, hashesEqual, parseApiKey } from './api-key.ts';
import { deriveKeys } from './master-key.ts';
import { maskSecret, seal, unseal } from './sealed.ts';

const keys = deriveKeys(Buffer.alloc(32, 1));

describe('API keys', () => {
  it('are prefix + 32 base62 characters, parse back, and hash under the server key', () => {
    const k = generateApiKey('live');
    expect(k.key).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    expect(parseApiKey(k.key)).toEqual({ environment: 'live', lookup: k.key.slice(9, 17) });
    expect(parseApiKey('svc_live_' + 'x'.repeat(31))).toBeNull();
    const h = hashApiKey(keys.apiKeyHash, k.key);
    expect(hashesEqual(h, hashApiKey(keys.apiKeyHash, k.key))).toBe(true);
    expect(hashesEqual(h, hashApiKey(deriveKeys(Buffer.alloc(32, 2)).apiKeyHash, k.key))).toBe(false);
  });

  it('are random: 1,000 keys, no repeats, every base62 character used', () => {
    const seen = new Set(Array.from({ length: 1000 }, () => generateApiKey('test').key));
    expect(seen.size).toBe(1000);
    const chars = new Set([...seen].join('').slice(0));
    expect([...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'].every((c) => chars.has(c))).toBe(true);
  });
});

describe('sealed secrets', () => {
  it('round-trip, and do not open with another key or under another context', () => {
    const s = seal(keys.seal, 'my-subscription-key', 'location:1:subscription_key');
    expect(s).toMatch(/^sealed:v1:/);
    expect(s).not.toContain('my-subscription-key');
    expect(unseal(keys.seal, s, 'location:1:subscription_key')).toBe('my-subscription-key');
    expect(() => unseal(keys.seal, s, 'location:2:subscription_key')).toThrow();
    expect(() => unseal(deriveKeys(Buffer.alloc(32, 2)).seal, s, 'location:1:subscription_key')).toThrow();
    expect(seal(keys.seal, 'x', 'a')).not.toBe(seal(keys.seal, 'x', 'a')); // random IV
  });

  it('are masked to their last 4 characters, or fully when short', () => {
    expect(maskSecret('abcdefghijkl')).toBe('********ijkl');
    expect(maskSecret('short')).toBe('********');
  });
});
