/**
 * Verifying the service's webhook deliveries (spec "Events", DECISIONS "Events and webhooks").
 * Every delivery carries three signatures of the same body:
 *
 * - `X-Webhook-Timestamp` + `X-Webhook-Signature: sha256=<hex>`: HMAC-SHA256 over
 *   `<timestamp>.<body>`, keyed with the secret string as shown (`whsec_…`, UTF-8);
 * - `X-Fiscalization-Signature: t=<timestamp>,v1=<hex>`: the same HMAC;
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`
 *   (space-separated list), HMAC-SHA256 over `<id>.<timestamp>.<body>` keyed with the
 *   base64-decoding of the secret after `whsec_`.
 *
 * `verifyWebhook` checks every scheme the request carries (at least one) and the
 * timestamp's distance from now (default 5 minutes: a replay later fails), and returns
 * the parsed event. Pass the body exactly as received (the raw text, not re-serialized JSON).
 */
import { constantTimeEqual, fromBase64, hmacSha256, toBase64, toHex } from './hmac.js';

export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

export interface VerifyOptions {
  /** Seconds a timestamp may be away from now (default 300). */
  toleranceSeconds?: number;
  /** Current time in ms (default Date.now()). */
  now?: number;
}

/** A delivery's payload (spec "Delivery": retry-entry shaped, plus the transaction summary). */
export interface WebhookEvent {
  id?: string;
  event: string;
  transaction_id?: string;
  account_id?: string;
  status?: string;
  timestamp?: string;
  transaction?: { id: string; status: string; fiscal_id: string | null };
  [field: string]: unknown;
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : bag[key];
  return Array.isArray(v) ? v[0] : v;
}

const specHex = async (secret: string, ts: string, body: string) => toHex(await hmacSha256(secret, `${ts}.${body}`));

function checkFresh(ts: string, o: VerifyOptions): void {
  if (!/^\d{1,12}$/.test(ts)) throw new WebhookVerificationError('invalid webhook timestamp');
  const now = (o.now ?? Date.now()) / 1000;
  if (Math.abs(now - Number(ts)) > (o.toleranceSeconds ?? 300)) throw new WebhookVerificationError('webhook timestamp outside the tolerance');
}

/** `X-Webhook-Signature: sha256=<hex>` with `X-Webhook-Timestamp`. */
export async function verifySpecSignature(secret: string, timestamp: string, signature: string, body: string, o: VerifyOptions = {}): Promise<void> {
  checkFresh(timestamp, o);
  if (!constantTimeEqual(signature, `sha256=${await specHex(secret, timestamp, body)}`)) throw new WebhookVerificationError('invalid X-Webhook-Signature');
}

/** `X-Fiscalization-Signature: t=<ts>,v1=<hex>` (several v1 values: any one may match). */
export async function verifyFiscalizationSignature(secret: string, signature: string, body: string, o: VerifyOptions = {}): Promise<void> {
  let t: string | undefined;
  const v1: string[] = [];
  for (const part of signature.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    if (k === 't') t = part.slice(eq + 1).trim();
    else if (k === 'v1') v1.push(part.slice(eq + 1).trim());
  }
  if (t === undefined || v1.length === 0) throw new WebhookVerificationError('invalid X-Fiscalization-Signature');
  checkFresh(t, o);
  const expected = await specHex(secret, t, body);
  let ok = false;
  for (const candidate of v1) ok = constantTimeEqual(candidate, expected) || ok;
  if (!ok) throw new WebhookVerificationError('invalid X-Fiscalization-Signature');
}

/** Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). */
export async function verifyStandardWebhook(secret: string, id: string, timestamp: string, signature: string, body: string, o: VerifyOptions = {}): Promise<void> {
  checkFresh(timestamp, o);
  const key = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  const expected = `v1,${toBase64(await hmacSha256(key, `${id}.${timestamp}.${body}`))}`;
  let ok = false;
  for (const candidate of signature.split(' ').filter(Boolean)) ok = constantTimeEqual(candidate, expected) || ok;
  if (!ok) throw new WebhookVerificationError('invalid webhook-signature');
}

/**
 * Verifies a delivery: every signature scheme present must hold (at least one must be),
 * every timestamp must be fresh. Returns the parsed event; throws WebhookVerificationError.
 */
export async function verifyWebhook(secret: string, headers: HeaderBag, body: string, o: VerifyOptions = {}): Promise<WebhookEvent> {
  let checked = 0;
  const xSig = header(headers, 'x-webhook-signature');
  if (xSig !== undefined) {
    await verifySpecSignature(secret, header(headers, 'x-webhook-timestamp') ?? '', xSig, body, o);
    checked++;
  }
  const fSig = header(headers, 'x-fiscalization-signature');
  if (fSig !== undefined) {
    await verifyFiscalizationSignature(secret, fSig, body, o);
    checked++;
  }
  const sSig = header(headers, 'webhook-signature');
  if (sSig !== undefined) {
    await verifyStandardWebhook(secret, header(headers, 'webhook-id') ?? '', header(headers, 'webhook-timestamp') ?? '', sSig, body, o);
    checked++;
  }
  if (checked === 0) throw new WebhookVerificationError('no webhook signature header');
  try {
    return JSON.parse(body) as WebhookEvent;
  } catch {
    throw new WebhookVerificationError('webhook body is not JSON');
  }
}
