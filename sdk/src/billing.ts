/**
 * The billing provider's event signature, as the service's billing receiver
 * (`POST /v1/webhooks/stripe`, spec "Inbound billing-provider receiver") checks it:
 * header `Billing-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over `<t>.<raw body>`
 * with the billing webhook secret, within 5 minutes of the receiver's clock. Any one of
 * several `v1` values may match (a provider rolling its secret sends two).
 *
 * `billingSignatureHeader` signs an event (a billing bridge forwarding events, or a test);
 * `verifyBillingSignature` is the receiver's check, for a service of the integrator's own.
 */
import { constantTimeEqual, hmacSha256, toHex } from './hmac.js';

export const BILLING_SIGNATURE_HEADER = 'Billing-Signature';
export const BILLING_SIGNATURE_TOLERANCE_SECONDS = 300;

export async function signBillingPayload(secret: string, timestamp: number, payload: string): Promise<string> {
  return toHex(await hmacSha256(secret, `${timestamp}.${payload}`));
}

/** The `Billing-Signature` value for `payload` at `timestamp` (unix seconds, default now). */
export async function billingSignatureHeader(secret: string, payload: string, timestamp = Math.floor(Date.now() / 1000)): Promise<string> {
  return `t=${timestamp},v1=${await signBillingPayload(secret, timestamp, payload)}`;
}

export type BillingSignatureCheck = { ok: true } | { ok: false; reason: string };

export async function verifyBillingSignature(
  header: string | undefined,
  payload: string,
  secret: string,
  o: { now?: number; toleranceSeconds?: number } = {},
): Promise<BillingSignatureCheck> {
  if (!header) return { ok: false, reason: 'missing Billing-Signature header' };
  let t: string | undefined;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    if (k === 't') t = part.slice(eq + 1).trim();
    else if (k === 'v1') v1.push(part.slice(eq + 1).trim());
  }
  if (t === undefined || !/^[0-9]{1,12}$/.test(t) || v1.length === 0) return { ok: false, reason: 'invalid Billing-Signature header' };
  const ts = Number(t);
  if (Math.abs((o.now ?? Date.now()) / 1000 - ts) > (o.toleranceSeconds ?? BILLING_SIGNATURE_TOLERANCE_SECONDS)) {
    return { ok: false, reason: 'signature timestamp outside the tolerance' };
  }
  const expected = await signBillingPayload(secret, ts, payload);
  let match = false;
  for (const candidate of v1) match = constantTimeEqual(candidate.toLowerCase(), expected) || match;
  return match ? { ok: true } : { ok: false, reason: 'invalid signature' };
}
