import { describe, expect, it } from 'vitest';
import { billingSignatureHeader, verifyBillingSignature } from './signature.ts';

const SECRET = 'whsec_test_secret_0123456789';
const body = '{"id":"evt_1","type":"invoice.payment_failed"}';
const now = Date.UTC(2026, 0, 15, 10, 0, 0);
const t = now / 1000;

describe('billing signature', () => {
  it('accepts the signature of the payload at the given time', () => {
    expect(verifyBillingSignature(billingSignatureHeader(SECRET, t, body), body, SECRET, now)).toEqual({ ok: true });
  });
  it('accepts any of several v1 values (secret roll-over)', () => {
    const good = billingSignatureHeader(SECRET, t, body).split(',')[1]!;
    expect(verifyBillingSignature(`t=${t},v1=${'0'.repeat(64)},${good}`, body, SECRET, now)).toEqual({ ok: true });
  });
  it('refuses a changed body, another secret, a missing or malformed header', () => {
    const h = billingSignatureHeader(SECRET, t, body);
    expect(verifyBillingSignature(h, body + ' ', SECRET, now).ok).toBe(false);
    expect(verifyBillingSignature(h, body, 'another-secret-0123456', now).ok).toBe(false);
    expect(verifyBillingSignature(undefined, body, SECRET, now)).toEqual({ ok: false, reason: 'missing Billing-Signature header' });
    expect(verifyBillingSignature('v1=abc', body, SECRET, now).ok).toBe(false);
    expect(verifyBillingSignature(`t=${t},v1=zz`, body, SECRET, now).ok).toBe(false);
    expect(verifyBillingSignature(`t=x${t},v1=${'0'.repeat(64)}`, body, SECRET, now).ok).toBe(false);
  });
  it('5 minutes of tolerance either way, not more', () => {
    expect(verifyBillingSignature(billingSignatureHeader(SECRET, t - 300, body), body, SECRET, now).ok).toBe(true);
    expect(verifyBillingSignature(billingSignatureHeader(SECRET, t + 300, body), body, SECRET, now).ok).toBe(true);
    expect(verifyBillingSignature(billingSignatureHeader(SECRET, t - 301, body), body, SECRET, now))
      .toEqual({ ok: false, reason: 'signature timestamp outside the tolerance' });
    expect(verifyBillingSignature(billingSignatureHeader(SECRET, t + 301, body), body, SECRET, now).ok).toBe(false);
  });
});
