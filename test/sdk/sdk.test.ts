import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FiscalApiError, WebhookVerificationError, billingSignatureHeader, createFiscalClient, verifyBillingSignature, verifyWebhook,
  type CreateTransactionData, type CreateLocationData,
} from '../../sdk/src/index.ts';
import { SYSTEM_API_DOCS } from '../../src/countries/api-docs.ts';
import { billingSignatureHeader as serviceBillingHeader, verifyBillingSignature as serviceVerify } from '../../src/billing/signature.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import type { RateLimiter } from '../../src/ratelimit/limiter.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { exportP12, generateCert } from '../support/p12.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * The SDK (sdk/) against the real service, listening on 127.0.0.1 (both stores): every call
 * goes over HTTP through the generated client and the SDK's own layer.
 */
const BILLING_SECRET = 'whsec_billing_sdk_test_secret';

let t: TestApp;
let baseUrl: string;
let receiver: WebhookReceiver;
let proxy: FaultProxy;

const docs = (key: string) => SYSTEM_API_DOCS.find((d) => d.key === key)!;
const locationBody = (key: string) => docs(key).location as CreateLocationData['body'];
const saleBody = (key: string, locationId: string, over: Record<string, unknown> = {}) =>
  ({ ...docs(key).sale, location_id: locationId, ...over }) as CreateTransactionData['body'];

async function listen(app: TestApp['app']): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** Records every attempt the SDK makes (under its retries): method, path, status, time, headers. */
function spyFetch() {
  const calls: { method: string; path: string; status: number; at: number; headers: Headers; retryAfter: string | null }[] = [];
  const fetchSpy = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const headers = new Headers(req.headers);
    const res = await fetch(req);
    calls.push({ method: req.method, path: new URL(req.url).pathname, status: res.status, at: Date.now(), headers, retryAfter: res.headers.get('retry-after') });
    return res;
  }) as typeof fetch;
  return { calls, fetch: fetchSpy };
}

/**
 * A tiny HTTP proxy in front of the service that fails on purpose: `before` answers 503
 * without forwarding (nothing happened); `after` forwards, drops the service's answer and
 * answers 502 (the work was done, the answer lost: what an idempotency key is for).
 */
interface FaultProxy {
  url: string;
  seen: { method: string; path: string; idempotencyKey: string | undefined }[];
  fail(n: number, mode: 'before' | 'after'): void;
  close(): Promise<void>;
}

/**
 * Headers the proxy does not pass on: fetch computes the body's own length, and undici
 * refuses a request that carries a second content-length (seen in CI once another file
 * in the worker had loaded the undici package, whose agent then served fetch).
 */
const HOP_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding']);

async function startFaultProxy(target: string): Promise<FaultProxy> {
  let failures = 0;
  let mode: 'before' | 'after' = 'before';
  const seen: FaultProxy['seen'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const key = req.headers['idempotency-key'];
      seen.push({ method: req.method ?? '', path: req.url ?? '', idempotencyKey: Array.isArray(key) ? key[0] : key });
      const failing = failures > 0;
      if (failing) failures--;
      if (failing && mode === 'before') {
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' }).end(JSON.stringify({ error: 'service temporarily unavailable' }));
        return;
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && !HOP_HEADERS.has(k)) headers[k] = v;
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(`${target}${req.url}`, { method: req.method, headers, ...(body ? { body } : {}) });
      const text = Buffer.from(await answer.arrayBuffer());
      if (failing) {
        res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'bad gateway' }));
        return;
      }
      const out: Record<string, string> = {};
      answer.headers.forEach((v, k) => {
        if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
      });
      res.writeHead(answer.status, out).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    fail(n, m) {
      failures = n;
      mode = m;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

beforeAll(async () => {
  t = await startTestApp({ config: { billingWebhookSecret: BILLING_SECRET } });
  baseUrl = await listen(t.app);
  receiver = await startWebhookReceiver();
  proxy = await startFaultProxy(baseUrl);
});
afterAll(async () => {
  await proxy?.close();
  await receiver?.close();
  await t?.close();
});

/** Signs up through the SDK (public operation), returns a client on the new root key. */
async function signUp(o: { fetch?: typeof fetch; url?: string; retry?: Parameters<typeof createFiscalClient>[0]['retry'] } = {}) {
  const anonymous = createFiscalClient({ baseUrl });
  const signup = await anonymous.createAccount({ body: { name: 'SDK Merchant SL', billing_email: `sdk-${crypto.randomUUID()}@example.com` } });
  const key = signup.api_key.key as string;
  return {
    signup, key,
    fiscal: createFiscalClient({ baseUrl: o.url ?? baseUrl, apiKey: key, retry: o.retry ?? { baseDelayMs: 5, maxDelayMs: 20 }, ...(o.fetch ? { fetch: o.fetch } : {}) }),
  };
}

describe('SDK against the running service', () => {
  it('creates an account, a restricted key, a location and a sale; the create carries a generated idempotency key', async () => {
    const { signup, fiscal } = await signUp();
    expect(signup.account.status).toBe('active');
    expect(signup.api_key.key).toMatch(/^svc_test_/);

    const restricted = await fiscal.createApiKey({ body: { name: 'pos', permissions: ['transactions:read', 'transactions:write', 'locations:read', 'locations:write'] } });
    expect(restricted.key).toMatch(/^svc_test_/);
    const spy = spyFetch();
    const pos = createFiscalClient({ baseUrl, apiKey: restricted.key as string, fetch: spy.fetch });

    const location = await pos.createLocation({ body: locationBody('fr-nf525') });
    expect(location).toMatchObject({ country: 'FR', system: 'fr-nf525', status: 'active' });

    const sale = await pos.createTransaction({ body: saleBody('fr-nf525', location.id) });
    expect(sale).toMatchObject({ location_id: location.id, status: 'success', amount: (docs('fr-nf525').sale as { total_amount: number }).total_amount, environment: 'test' });
    const sent = spy.calls.find((c) => c.method === 'POST' && c.path === '/v1/transactions')!;
    expect(sent.headers.get('idempotency-key')).toMatch(/^[0-9a-f-]{36}$/);
    expect(sale.idempotency_key).toBe(sent.headers.get('idempotency-key'));
    // Other creates take no key (the document declares it for transactions only).
    expect(spy.calls.find((c) => c.path === '/v1/locations')!.headers.has('idempotency-key')).toBe(false);

    // A key the caller gives wins, and the same key again is the same transaction (200).
    const again1 = await pos.createTransaction({ body: saleBody('fr-nf525', location.id), headers: { 'Idempotency-Key': 'order-42' } });
    const again2 = await pos.createTransaction({ body: saleBody('fr-nf525', location.id), headers: { 'Idempotency-Key': 'order-42' } });
    expect(again1.idempotency_key).toBe('order-42');
    expect(again2.id).toBe(again1.id);

    expect((await pos.getTransaction({ path: { id: sale.id } })).render_hints.length).toBeGreaterThan(0);
    const list = await pos.listTransactions({ query: { limit: 10 } });
    expect(list.total).toBe(2);
  });

  it('a 400 is a FiscalApiError with the spec\'s message, sent once (never retried); so is a 404', async () => {
    const spy = spyFetch();
    const { fiscal } = await signUp({ fetch: spy.fetch });
    const location = await fiscal.createLocation({ body: locationBody('fr-nf525') });
    const before = spy.calls.length;
    const err = await fiscal.createTransaction({ body: saleBody('fr-nf525', location.id, { items: [] }) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FiscalApiError);
    expect(err).toMatchObject({ status: 400, message: 'items must be a non-empty array', body: { error: 'items must be a non-empty array' } });
    expect((err as FiscalApiError).requestId).toBeTruthy();
    expect(spy.calls.length - before).toBe(1);

    const missing = await fiscal.getTransaction({ path: { id: '00000000-0000-4000-8000-000000000000' } }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, message: 'transaction not found' });
    expect(spy.calls.length - before).toBe(2);

    const noKey = await createFiscalClient({ baseUrl }).listLocations().catch((e: unknown) => e);
    expect(noKey).toMatchObject({ status: 401, message: 'missing or invalid Authorization header' });
  });

  it('5xx: a repeatable request is retried; a create with its idempotency key is retried and not duplicated; a plain POST is not', async () => {
    const { fiscal } = await signUp({ url: proxy.url });
    const location = await fiscal.createLocation({ body: locationBody('fr-nf525') });

    proxy.seen.length = 0;
    proxy.fail(2, 'before');
    const list = await fiscal.listLocations();
    expect(list.data.map((l) => l.id)).toEqual([location.id]);
    expect(proxy.seen.map((s) => s.method)).toEqual(['GET', 'GET', 'GET']);

    // The first attempt is done by the service but its answer is lost (502): the retry
    // carries the same key, and the service answers the same transaction.
    proxy.seen.length = 0;
    proxy.fail(1, 'after');
    const sale = await fiscal.createTransaction({ body: saleBody('fr-nf525', location.id) });
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[0]!.idempotencyKey).toBeTruthy();
    expect(proxy.seen[1]!.idempotencyKey).toBe(proxy.seen[0]!.idempotencyKey);
    expect(sale.idempotency_key).toBe(proxy.seen[0]!.idempotencyKey);
    expect((await fiscal.listTransactions()).total).toBe(1);

    // A cancel answers the first cancellation when repeated (x-repeatable): its answer lost
    // (502 after the service did it), the retry gets that cancellation, and only one exists.
    proxy.seen.length = 0;
    proxy.fail(1, 'after');
    const cancellation = await fiscal.cancelTransaction({ path: { id: sale.id }, body: {} });
    expect(proxy.seen.map((s) => s.method)).toEqual(['POST', 'POST']);
    expect(cancellation).toMatchObject({ type: 'cancellation', cancels_transaction_id: sale.id });
    expect((await fiscal.listTransactions()).total).toBe(2);

    // A POST without a key could do its work twice: the 5xx is the caller's to judge.
    proxy.seen.length = 0;
    proxy.fail(1, 'before');
    const err = await fiscal.createLocation({ body: locationBody('fr-nf525') }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'FiscalApiError', status: 503 });
    expect(proxy.seen).toHaveLength(1);
  });

  it('uploads a certificate as multipart/form-data (the document\'s typed form body) and lists it', async () => {
    const { fiscal } = await signUp();
    const p12 = exportP12(generateCert(), 'sdk-pass');
    const cert = await fiscal.uploadCertificate({ body: { certificate: new Blob([new Uint8Array(p12)]), password: 'sdk-pass', certificate_id: 'sdk_cert.1' } });
    expect(cert).toMatchObject({ certificate_id: 'sdk_cert.1', nif: '12345678Z' });
    expect((await fiscal.listCertificates()).data.map((c) => c.certificate_id)).toEqual(['sdk_cert.1']);
    const wrong = await fiscal.uploadCertificate({ body: { certificate: new Blob([new Uint8Array(p12)]), password: 'nope', certificate_id: 'sdk_cert.2' } }).catch((e: unknown) => e);
    expect(wrong).toMatchObject({ name: 'FiscalApiError', status: 400 });
    await fiscal.deleteCertificate({ path: { id: 'sdk_cert.1' } });
    expect((await fiscal.listCertificates()).data).toEqual([]);
  });

  it('webhook helper: verifies a real delivery (all three signatures), rejects a tampered, re-signed or stale one', async () => {
    const { fiscal } = await signUp();
    const hook = await fiscal.createWebhook({ body: { url: receiver.url, events: ['fiscalization.completed'] } });
    receiver.secret = hook.secret as string;
    const location = await fiscal.createLocation({ body: locationBody('es-verifactu') });
    const sale = await fiscal.createTransaction({ body: saleBody('es-verifactu', location.id) });
    // Submission (sandbox authority) and then the delivery run as jobs.
    // The subscription gets the fact under both its names (DECISIONS "Events and webhooks":
    // fiscalization.completed ≡ transaction.fiscalized), two deliveries in no set order.
    const delivered = (r: (typeof receiver.received)[number]) => r.json?.transaction_id === sale.id && r.json?.event === 'fiscalization.completed';
    for (let i = 0; i < 5 && !receiver.received.some(delivered); i++) await t.worker.drain();
    const got = receiver.received.find(delivered)!;
    expect(got).toBeDefined();
    expect(got.answered).toBe(200);

    const event = await verifyWebhook(hook.secret as string, got.headers, got.body);
    expect(event).toMatchObject({ event: 'fiscalization.completed', transaction_id: sale.id });
    // Each scheme alone verifies too.
    const pick = (...names: string[]) => Object.fromEntries(names.map((n) => [n, got.headers[n] as string]));
    await verifyWebhook(hook.secret as string, pick('x-webhook-timestamp', 'x-webhook-signature'), got.body);
    await verifyWebhook(hook.secret as string, new Headers(pick('x-fiscalization-signature')), got.body);
    await verifyWebhook(hook.secret as string, pick('webhook-id', 'webhook-timestamp', 'webhook-signature'), got.body);

    const tampered = got.body.replace(sale.id, '00000000-0000-4000-8000-000000000000');
    await expect(verifyWebhook(hook.secret as string, got.headers, tampered)).rejects.toThrow(WebhookVerificationError);
    for (const only of [['x-webhook-timestamp', 'x-webhook-signature'], ['x-fiscalization-signature'], ['webhook-id', 'webhook-timestamp', 'webhook-signature']]) {
      await expect(verifyWebhook(hook.secret as string, pick(...only), tampered)).rejects.toThrow(WebhookVerificationError);
    }
    await expect(verifyWebhook('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', got.headers, got.body)).rejects.toThrow(/invalid/);
    await expect(verifyWebhook(hook.secret as string, got.headers, got.body, { now: Date.now() + 10 * 60_000 })).rejects.toThrow(/tolerance/);
    await expect(verifyWebhook(hook.secret as string, { 'content-type': 'application/json' }, got.body)).rejects.toThrow(/no webhook signature/);
  });

  it('billing-signature helper: what the billing receiver accepts, and the same check as the service\'s', async () => {
    const { signup } = await signUp();
    const payload = JSON.stringify({
      id: `evt_sdk_${Date.now()}`, object: 'event', type: 'customer.subscription.updated', created: Math.floor(Date.now() / 1000),
      data: { object: { object: 'subscription', metadata: { account_id: signup.account.id } } },
    });
    const header = await billingSignatureHeader(BILLING_SECRET, payload);
    const post = (body: string, signature: string) =>
      fetch(`${baseUrl}/v1/webhooks/stripe`, { method: 'POST', headers: { 'content-type': 'application/json', 'billing-signature': signature }, body });
    expect((await post(payload, header)).status).toBe(200);
    expect((await post(payload.replace('updated', 'updatez'), header)).status).toBe(400);

    const ts = Math.floor(Date.now() / 1000) - 60;
    expect(await billingSignatureHeader(BILLING_SECRET, payload, ts)).toBe(serviceBillingHeader(BILLING_SECRET, ts, payload));
    const now = Date.now();
    for (const [h, body] of [[header, payload], [header, `${payload} `], [`t=${ts - 600},v1=${header.split('v1=')[1]}`, payload], ['t=1,v1=zz', payload], [undefined, payload]] as const) {
      const mine = await verifyBillingSignature(h, body, BILLING_SECRET, { now });
      expect(mine).toEqual(serviceVerify(h, body, BILLING_SECRET, now));
    }
  });
});

describe('SDK: 429', () => {
  let limited: TestApp;
  let limitedUrl: string;
  /** Added to the limiter's clock: Retry-After counts to the next minute boundary, so the test puts it close. */
  let shiftMs = 0;
  beforeAll(async () => {
    // A low tier: 60 requests a minute (one token a second), a burst of 2. Sign-ups keep theirs.
    const inner = createMemoryLimiter();
    const limiter: RateLimiter = {
      take: (k, spec, now) => inner.take(k, k.startsWith('signup:') ? spec : { requestsPerMinute: 60, burst: 2 }, now + shiftMs),
      close: () => inner.close(),
    };
    // The same store as the main app (no second migration run); its own limiter.
    limited = await startTestApp({ db: t.db, limiter });
    limitedUrl = await listen(limited.app);
  });
  afterAll(() => limited?.close());

  it('waits Retry-After (never less) and then succeeds; a wait longer than allowed gives the 429 as a FiscalApiError', async () => {
    const { key } = await limited.signup();
    // The limiter's time 58.5 s into a minute: the 429 below waits ~2 s, not up to a minute.
    shiftMs = (58_500 - (Date.now() % 60_000) + 60_000) % 60_000;
    const spy = spyFetch();
    const fiscal = createFiscalClient({ baseUrl: limitedUrl, apiKey: key, fetch: spy.fetch, retry: { baseDelayMs: 5 } });
    for (let i = 0; i < 3; i++) await fiscal.getAccountStatus();
    const statuses = spy.calls.map((c) => c.status);
    expect(statuses.slice(0, 3)).toEqual([200, 200, 429]);
    expect(statuses.at(-1)).toBe(200);
    const refused = spy.calls[2]!;
    const retryAfter = Number(refused.retryAfter);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // The retry came no earlier than the Retry-After the service gave (to the minute boundary).
    expect(spy.calls[3]!.at - refused.at).toBeGreaterThanOrEqual(retryAfter * 1000 - 50);

    const impatient = createFiscalClient({ baseUrl: limitedUrl, apiKey: key, retry: { maxRetryAfterMs: 100 } });
    const errs = await Promise.all([0, 1, 2].map(() => impatient.getAccountStatus().then(() => null, (e: unknown) => e)));
    const err = errs.find((e) => e !== null);
    expect(err).toBeInstanceOf(FiscalApiError);
    expect(err).toMatchObject({ status: 429, message: 'rate_limit_exceeded' });
    expect((err as FiscalApiError).retryAfter).toBeGreaterThanOrEqual(1);
  });
});
