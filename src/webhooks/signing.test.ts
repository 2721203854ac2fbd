import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  generateWebhookSecret, isWebhookSecret, signatureHeaders, specSignature, standardSignature, standardWebhooksKey, verifySpecSignature,
} from './signing.ts';

describe('webhook secrets', () => {
  it('are whsec_ + 32 base62 characters, distinct, and decode to a 24-byte Standard Webhooks key', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const s = generateWebhookSecret();
      expect(s).toMatch(/^whsec_[0-9A-Za-z]{32}$/);
      expect(isWebhookSecret(s)).toBe(true);
      expect(standardWebhooksKey(s)).toHaveLength(24);
      // Both base64 alphabets read the same bytes: the key is well defined.
      expect(Buffer.from(s.slice(6), 'base64url').equals(standardWebhooksKey(s))).toBe(true);
      seen.add(s);
    }
    expect(seen.size).toBe(200);
  });
});

describe('signatures', () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = '{"id":"evt","event":"fiscalization.completed"}';

  it('the spec scheme: hex HMAC-SHA256 of "<ts>.<body>" keyed with the whole secret string', () => {
    const expected = crypto.createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex');
    expect(specSignature(secret, 1700000000, body)).toBe(expected);
  });

  it('Standard Webhooks: base64 HMAC-SHA256 of "<id>.<ts>.<body>" keyed with the decoded secret', () => {
    // The Standard Webhooks specification's published example.
    const sig = standardSignature(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}',
    );
    expect(sig).toBe('g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('every header of an attempt', () => {
    const h = signatureHeaders({ secret, messageId: 'evt_1', timestamp: 1700000000, body });
    const hex = specSignature(secret, 1700000000, body);
    expect(h).toEqual({
      'x-webhook-timestamp': '1700000000',
      'x-webhook-signature': `sha256=${hex}`,
      'x-fiscalization-signature': `t=1700000000,v1=${hex}`,
      'webhook-id': 'evt_1',
      'webhook-timestamp': '1700000000',
      'webhook-signature': `v1,${standardSignature(secret, 'evt_1', 1700000000, body)}`,
    });
  });

  it('verifySpecSignature accepts either spec header, and refuses a wrong secret, a changed body or a stale time', () => {
    const h = signatureHeaders({ secret, messageId: 'evt_1', timestamp: 1700000000, body });
    const now = 1700000100;
    expect(verifySpecSignature(secret, { timestamp: h['x-webhook-timestamp'], signature: h['x-webhook-signature'] }, body, now)).toBe(true);
    expect(verifySpecSignature(secret, { signature: h['x-fiscalization-signature'] }, body, now)).toBe(true);
    expect(verifySpecSignature(generateWebhookSecret(), { signature: h['x-fiscalization-signature'] }, body, now)).toBe(false);
    expect(verifySpecSignature(secret, { signature: h['x-fiscalization-signature'] }, body + ' ', now)).toBe(false);
    expect(verifySpecSignature(secret, { signature: h['x-fiscalization-signature'] }, body, now + 301)).toBe(false);
    expect(verifySpecSignature(secret, { signature: h['x-fiscalization-signature'] }, body, 1700000000 - 301)).toBe(false);
    expect(verifySpecSignature(secret, { signature: 'garbage' }, body, now)).toBe(false);
  });
});
