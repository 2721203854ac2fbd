import crypto from 'node:crypto';

/**
 * The billing provider's event signature (spec "Inbound billing-provider receiver"):
 * header `Billing-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
 * `<t>.<raw body>` with BILLING_WEBHOOK_SECRET. The provider's own scheme (its header
 * carries a brand) may list several `v1` values while it rolls its secret: any one
 * matching is enough. The timestamp is part of the signed text, so an old delivery
 * replayed outside the tolerance fails even with its genuine signature.
 */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

export function signBillingPayload(secret: string, timestamp: number, payload: string): string {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.${payload}`, 'utf8').digest('hex');
}

/** The header value a sender puts on `payload` at `timestamp` (tests, the fake provider). */
export function billingSignatureHeader(secret: string, timestamp: number, payload: string): string {
  return `t=${timestamp},v1=${signBillingPayload(secret, timestamp, payload)}`;
}

export function verifyBillingSignature(header: string | undefined, payload: string, secret: string, nowMs: number): SignatureCheck {
  if (!header) return { ok: false, reason: 'missing Billing-Signature header' };
  let t: string | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't') t = v;
    else if (k === 'v1') v1.push(v);
  }
  if (t === undefined || !/^[0-9]{1,12}$/.test(t) || v1.length === 0) return { ok: false, reason: 'invalid Billing-Signature header' };
  const ts = Number(t);
  if (Math.abs(nowMs / 1000 - ts) > SIGNATURE_TOLERANCE_SECONDS) return { ok: false, reason: 'signature timestamp outside the tolerance' };
  const expected = Buffer.from(signBillingPayload(secret, ts, payload), 'hex');
  let match = false;
  for (const candidate of v1) {
    if (!/^[0-9a-fA-F]{64}$/.test(candidate)) continue;
    // Every candidate compared in constant time, and all of them, so timing tells nothing.
    if (crypto.timingSafeEqual(Buffer.from(candidate, 'hex'), expected)) match = true;
  }
  return match ? { ok: true } : { ok: false, reason: 'invalid signature' };
}
