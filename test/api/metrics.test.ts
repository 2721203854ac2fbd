import crypto from 'node:crypto';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import parsePrometheusTextFormat, { type PromFamily, type PromSample } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { buildApp } from '../../src/http/app.ts';
import { createRuntime } from '../../src/runtime.ts';
import { createMemoryLimiter } from '../../src/ratelimit/memory-limiter.ts';
import type { RateLimiter } from '../../src/ratelimit/limiter.ts';
import { METRICS_ERRORS } from '../../src/metrics/http.ts';
import { configs, locationBodies } from '../support/fixtures.ts';
import { STORE, startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody, saleMetadata } from '../support/transactions.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * GET /metrics end to end: real traffic (a sale, a rejected sale, a webhook delivery, a
 * 429), the exposition scraped and parsed with a Prometheus text-format parser, and the
 * series checked by name, labels and value. Then who may scrape.
 */
let t: TestApp;
let receiver: WebhookReceiver;
const clock = new ManualClock('2026-03-02T10:00:00.000Z');
/** Account buckets listed here get one request a minute (a real bucket, emptied by the test). */
const tight = new Set<string>();
const inner = createMemoryLimiter();
const limiter: RateLimiter = {
  take: (k, spec, now) => inner.take(k, tight.has(k) ? { requestsPerMinute: 1, burst: 1 } : spec, now),
  close: () => inner.close(),
};

beforeAll(async () => {
  t = await startTestApp({ clock, limiter });
  receiver = await startWebhookReceiver({ now: () => clock.now().getTime() });
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

/**
 * A scrape, parsed twice: `families` as the parser reads the exposition (names, types,
 * help); `series` with the histograms read sample by sample (`_bucket`, `_sum`, `_count`),
 * as the parser flattens a histogram with labels into one unlabelled sample.
 */
interface Scraped {
  families: PromFamily[];
  series: PromFamily[];
}

async function scrape(app: FastifyInstance = t.app, token?: string): Promise<Scraped> {
  const res = await app.inject({ method: 'GET', url: '/metrics', ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return { families: parsePrometheusTextFormat(res.body), series: parsePrometheusTextFormat(res.body.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped')) };
}

function family(m: Scraped, name: string): PromFamily {
  const f = m.families.find((x) => x.name === name);
  expect(f, `metric ${name}`).toBeDefined();
  return f!;
}

/** The samples of `name` whose labels include `labels`. */
function samples(m: Scraped, name: string, labels: Record<string, string> = {}): PromSample[] {
  return m.series.filter((f) => f.name === name).flatMap((f) => f.metrics)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
}

/** The value of the one sample of `name` with these labels' values (0 when there is none). */
function value(m: Scraped, name: string, labels: Record<string, string>): number {
  const found = samples(m, name, labels);
  expect(found.length, `${name} ${JSON.stringify(labels)}: ${JSON.stringify(found)}`).toBeLessThanOrEqual(1);
  return found.length ? Number(found[0]!.value) : 0;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe('GET /metrics', () => {
  it('counts requests, creates, submissions, status changes, webhooks and 429s, with the right labels', async () => {
    const { key, accountId } = await t.signup();
    const sub = await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: receiver.url, events: ['fiscalization.completed'] } });
    expect(sub.statusCode, sub.body).toBe(201);
    receiver.secret = sub.json().secret;
    // Two accounts, two chains: each record goes alone (operation `submit`, not `batch`).
    const other = await t.signup();
    const ok = await createTx(t, key, saleBody(await createLocation(t, key, 'es-verifactu')));
    expect(ok.statusCode, ok.body).toBe(201);
    const bad = await createTx(t, other.key, saleBody(await createLocation(t, other.key, 'es-verifactu'), { metadata: { sandbox_outcome: 'reject:4102' } }));
    expect(bad.statusCode, bad.body).toBe(201);
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${ok.json().id}`, key })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${crypto.randomUUID()}`, key })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: `/no/such/${crypto.randomUUID()}` })).statusCode).toBe(404);

    // Before the worker: both submissions wait in the queue; the oldest has waited 30 s.
    clock.advance(30_000);
    let m = await scrape();
    expect(value(m, 'fiscal_queue_jobs', { status: 'pending', kind: 'submit', system: 'es-verifactu' })).toBe(2);
    expect(value(m, 'fiscal_queue_oldest_pending_age_seconds', { kind: 'submit', system: 'es-verifactu' })).toBe(30);
    expect(value(m, 'fiscal_queue_scrape_success', {})).toBe(1);
    expect(value(m, 'fiscal_transactions_created_total', { country: 'ES', system: 'es-verifactu', status: 'pending', environment: 'test', type: 'sale' })).toBe(2);

    await t.worker.drain(); // both submissions, then the webhook deliveries (the fact under both its names) and the translation job
    expect(receiver.received.length).toBe(2);

    // The 429: this account's bucket holds one request; the second is refused.
    tight.add(`acct:${accountId}:test`);
    expect((await t.request({ method: 'GET', url: '/v1/locations', key })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/v1/locations', key })).statusCode).toBe(429);
    tight.delete(`acct:${accountId}:test`);

    m = await scrape();
    // Submissions: one accepted, one rejected, each timed.
    expect(value(m, 'fiscal_submissions_total', { system: 'es-verifactu', operation: 'submit', outcome: 'accepted' })).toBe(1);
    expect(value(m, 'fiscal_submissions_total', { system: 'es-verifactu', operation: 'submit', outcome: 'rejected' })).toBe(1);
    expect(family(m, 'fiscal_submission_duration_seconds').type).toBe('HISTOGRAM');
    expect(value(m, 'fiscal_submission_duration_seconds_count', { system: 'es-verifactu', operation: 'submit' })).toBe(2);
    expect(value(m, 'fiscal_submission_duration_seconds_bucket', { system: 'es-verifactu', operation: 'submit', le: '+Inf' })).toBe(2);
    expect(value(m, 'fiscal_submission_duration_seconds_sum', { system: 'es-verifactu', operation: 'submit' })).toBeGreaterThan(0);
    // Status changes made by the worker.
    expect(value(m, 'fiscal_transaction_status_changes_total', { system: 'es-verifactu', status: 'processing' })).toBe(2);
    expect(value(m, 'fiscal_transaction_status_changes_total', { system: 'es-verifactu', status: 'success' })).toBe(1);
    expect(value(m, 'fiscal_transaction_status_changes_total', { system: 'es-verifactu', status: 'failed_permanent' })).toBe(1);
    // The rejected submission's job is dead (the retry queue); nothing is pending any more.
    expect(value(m, 'fiscal_queue_jobs', { status: 'dead', kind: 'submit', system: 'es-verifactu' })).toBe(1);
    expect(value(m, 'fiscal_queue_jobs', { status: 'pending', kind: 'submit', system: 'es-verifactu' })).toBe(0);
    expect(samples(m, 'fiscal_queue_oldest_pending_age_seconds', { kind: 'submit' })).toEqual([]);
    // The webhook delivery and the 429.
    expect(value(m, 'svc_webhook_deliveries_total', { outcome: 'succeeded' })).toBe(2);
    expect(value(m, 'svc_webhook_delivery_duration_seconds_count', {})).toBe(2);
    expect(value(m, 'svc_rate_limit_rejections_total', { bucket: 'sandbox' })).toBe(1);

    // HTTP: by route pattern and status, never a raw URL.
    expect(value(m, 'svc_http_requests_total', { method: 'POST', route: '/v1/transactions', status_code: '201' })).toBe(2);
    expect(value(m, 'svc_http_requests_total', { method: 'GET', route: '/v1/transactions/:id', status_code: '200' })).toBe(1);
    expect(value(m, 'svc_http_requests_total', { method: 'GET', route: '/v1/transactions/:id', status_code: '404' })).toBe(1);
    expect(value(m, 'svc_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(value(m, 'svc_http_requests_total', { method: 'GET', route: '/v1/locations', status_code: '429' })).toBe(1);
    expect(value(m, 'svc_http_request_duration_seconds_count', { method: 'POST', route: '/v1/transactions', status_code: '201' })).toBe(2);
    for (const f of m.series.filter((x) => x.name.startsWith('svc_http_'))) {
      for (const s of f.metrics) {
        expect(s.labels?.route, JSON.stringify(s.labels)).toBeDefined();
        expect(s.labels!.route).not.toMatch(UUID);
      }
    }
  });

  it('answers the router gives by itself (malformed URL, over-long path parameter) are counted too, as unmatched', async () => {
    const { key } = await t.signup();
    const before = await scrape();
    const bad = await t.request({ method: 'GET', url: '/v1/transactions/%zz', key });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error: 'malformed URL' });
    const long = await t.request({ method: 'DELETE', url: `/v1/account/consents/${'a'.repeat(2000)}`, key });
    expect(long.statusCode).toBe(404);
    const after = await scrape();
    const delta = (labels: Record<string, string>) => value(after, 'svc_http_requests_total', labels) - value(before, 'svc_http_requests_total', labels);
    expect(delta({ method: 'GET', route: 'unmatched', status_code: '400' })).toBe(1);
    expect(delta({ method: 'DELETE', route: 'unmatched', status_code: '404' })).toBe(1);
    const count = (m: Scraped) => value(m, 'svc_http_request_duration_seconds_count', { method: 'GET', route: 'unmatched', status_code: '400' });
    expect(count(after) - count(before)).toBe(1);
    // No raw path in a label.
    for (const f of after.series.filter((x) => x.name.startsWith('svc_http_'))) for (const sm of f.metrics) expect(sm.labels?.route ?? '').not.toContain('%zz');
  });

  it('webhook outcomes: a failed attempt, then the retry cancelled once the webhook is deleted', async () => {
    const { key } = await t.signup();
    const sub = await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: receiver.url, events: ['fiscalization.completed'] } });
    expect(sub.statusCode, sub.body).toBe(201);
    const before = await scrape();
    receiver.fail(500);
    try {
      expect((await createTx(t, key, saleBody(await createLocation(t, key, 'es-verifactu')))).statusCode).toBe(201);
      await t.worker.drain();
    } finally {
      receiver.ok();
    }
    const failed = await scrape();
    // One failed attempt for each of the fact's two names.
    expect(value(failed, 'svc_webhook_deliveries_total', { outcome: 'failed' }) - value(before, 'svc_webhook_deliveries_total', { outcome: 'failed' })).toBe(2);
    expect((await t.request({ method: 'DELETE', url: `/v1/webhooks/${sub.json().id}`, key })).statusCode).toBe(204);
    clock.advance(11_000); // the second attempt is due (+10 s)
    await t.worker.drain();
    const after = await scrape();
    expect(value(after, 'svc_webhook_deliveries_total', { outcome: 'cancelled' }) - value(failed, 'svc_webhook_deliveries_total', { outcome: 'cancelled' })).toBe(2); // both names' retries
    expect(value(after, 'svc_webhook_deliveries_total', { outcome: 'failed' })).toBe(value(failed, 'svc_webhook_deliveries_total', { outcome: 'failed' }));
  });

  it("a chain's records sent in one request: one timed call, an outcome per record", async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await createTx(t, key, saleBody(loc))).statusCode).toBe(201);
    await t.worker.drain();
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(delta('fiscal_submission_duration_seconds_count', { system: 'es-verifactu', operation: 'batch' })).toBe(1);
    // The head found its two followers waiting: one request for the three.
    expect(delta('fiscal_submissions_total', { system: 'es-verifactu', operation: 'batch', outcome: 'accepted' })).toBe(3);
    expect(delta('fiscal_submissions_total', { system: 'es-verifactu', operation: 'submit', outcome: 'accepted' })).toBe(0);
    expect(delta('fiscal_transaction_status_changes_total', { system: 'es-verifactu', status: 'success' })).toBe(3);
  });

  it("SDI: the submission is `sent`; the notification's status change is counted by the inbound path", async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'it-sdi');
    const before = await scrape();
    const res = await createTx(t, key, saleBody(loc, { metadata: { ...saleMetadata['it-sdi'] } }));
    expect(res.statusCode, res.body).toBe(201);
    await t.worker.drain(); // the submission, then the stub's notification through the inbound channel
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}`, key })).json().status).toBe('delivered');
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(delta('fiscal_transactions_created_total', { country: 'IT', system: 'it-sdi', status: 'pending', environment: 'test', type: 'sale' })).toBe(1);
    expect(delta('fiscal_submissions_total', { system: 'it-sdi', operation: 'submit', outcome: 'sent' })).toBe(1);
    expect(delta('fiscal_transaction_status_changes_total', { system: 'it-sdi', status: 'pending' })).toBe(1);
    expect(delta('fiscal_transaction_status_changes_total', { system: 'it-sdi', status: 'delivered' })).toBe(1);
  });

  it('Bizkaia LROE: the batch verdicts and the original cancelled by an accepted cancellation are status changes too', async () => {
    const { key } = await t.signup();
    const { certificate_id: _none, ...bizkaia } = { ...configs.ticketbai, territory: 'bizkaia' };
    const loc = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...locationBodies['es-ticketbai'], country_config: bizkaia } });
    expect(loc.statusCode, loc.body).toBe(201);
    const before = await scrape();
    const sale = await createTx(t, key, saleBody(loc.json().id));
    expect(sale.json().status).toBe('pending_batch');
    expect((await t.request({ method: 'POST', url: '/v1/admin/process-pending', key })).statusCode).toBe(200);
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${sale.json().id}/cancel`, key });
    expect(cancel.statusCode, cancel.body).toBe(201);
    expect((await t.request({ method: 'POST', url: '/v1/admin/process-pending', key })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${sale.json().id}`, key })).json().status).toBe('cancelled');
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(delta('fiscal_transactions_created_total', { country: 'ES', system: 'es-ticketbai', status: 'pending_batch', environment: 'test', type: 'sale' })).toBe(1);
    expect(delta('fiscal_transactions_created_total', { country: 'ES', system: 'es-ticketbai', status: 'pending_batch', environment: 'test', type: 'cancellation' })).toBe(1);
    expect(delta('fiscal_transaction_status_changes_total', { system: 'es-ticketbai', status: 'success' })).toBe(2);
    expect(delta('fiscal_transaction_status_changes_total', { system: 'es-ticketbai', status: 'cancelled' })).toBe(1);
  });

  it('the Grafana dashboard is valid JSON and uses only metric names the service exposes', async () => {
    const dashboard = JSON.parse(fs.readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((x) => x.expr));
    expect(exprs.length).toBeGreaterThan(15);
    const used = new Set(exprs.flatMap((e) => e.match(/\b(?:svc|fiscal|nodejs|process)_[a-z0-9_]+/g) ?? []));
    const exposed = new Set((await scrape()).families.map((f) => f.name));
    for (const name of used) {
      const base = name.replace(/_(bucket|sum|count)$/, '');
      expect(exposed.has(name) || exposed.has(base), name).toBe(true);
    }
    // Every family the service defines has a panel.
    for (const name of exposed) {
      if (!/^(svc|fiscal)_/.test(name)) continue;
      expect([...used].some((u) => u === name || u.startsWith(`${name}_`)), name).toBe(true);
    }
  });

  it('reports the database pool and the process, event loop included', async () => {
    const m = await scrape();
    const store = { store: STORE };
    expect(value(m, 'svc_db_pool_max_connections', store)).toBe(STORE === 'postgres' ? 20 : 1);
    expect(value(m, 'svc_db_pool_connections', store)).toBeGreaterThanOrEqual(STORE === 'postgres' ? 0 : 1);
    expect(value(m, 'svc_db_pool_waiting', store)).toBeGreaterThanOrEqual(0);
    expect(samples(m, 'svc_db_pool_idle_connections', store)).toHaveLength(1);
    for (const name of ['nodejs_eventloop_lag_seconds', 'nodejs_eventloop_lag_p99_seconds', 'process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes']) {
      expect(samples(m, name).length, name).toBeGreaterThan(0);
    }
    expect(family(m, 'nodejs_eventloop_lag_seconds').type).toBe('GAUGE');
  });

  it('answers loopback clients only when no token is set', async () => {
    const far = await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3' });
    expect(far.statusCode).toBe(403);
    expect(far.json()).toEqual({ error: METRICS_ERRORS.loopbackOnly });
    // A proxy on this machine forwarding someone else: refused too.
    const forwarded = await t.app.inject({ method: 'GET', url: '/metrics', headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(forwarded.statusCode).toBe(403);
    // An API key is no way in.
    const { key } = await t.signup();
    expect((await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3', headers: { authorization: `Bearer ${key}` } })).statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '::1' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: '::ffff:127.0.0.1' })).statusCode).toBe(200);
  });

  it('with METRICS_TOKEN: the bearer token is required, from anywhere', async () => {
    const token = 'scrape-token-0123456789abcdef';
    // A second app on the same runtime: same registry, its own access rule.
    const app = await buildApp(t.rt, { metricsToken: token });
    await app.ready();
    try {
      const none = await app.inject({ method: 'GET', url: '/metrics' });
      expect(none.statusCode).toBe(401);
      expect(none.json()).toEqual({ error: METRICS_ERRORS.tokenRequired });
      const wrong = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer scrape-token-0123456789abcdeX' } });
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json()).toEqual({ error: METRICS_ERRORS.tokenInvalid });
      const good = await app.inject({ method: 'GET', url: '/metrics', remoteAddress: '10.1.2.3', headers: { authorization: `Bearer ${token}` } });
      expect(good.statusCode).toBe(200);
      expect(parsePrometheusTextFormat(good.body).some((f: PromFamily) => f.name === 'fiscal_transactions_created_total')).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('is in the OpenAPI document, with its text answer and its 401 and 403', async () => {
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/metrics']?.get;
    expect(op).toBeDefined();
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/plain']);
    expect(op.responses['401']).toBeDefined();
    expect(op.responses['403']).toBeDefined();
    expect(op.description).toContain('METRICS_TOKEN');
  });

  it('two runtimes in one process keep separate registries', async () => {
    // Its METRICS_TOKEN from the runtime configuration, as the hosts pass it (main.ts spreads loadConfig's).
    const token = 'runtime-token-0123456789';
    const rt = createRuntime({ db: t.db, clock, keys: t.rt.deps.keys, limiter, log: t.rt.deps.log, config: { ...t.rt.deps.config, metricsToken: token } });
    const app = await buildApp(rt);
    try {
      await app.ready();
      expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
      const m = await scrape(app, token);
      expect(samples(m, 'fiscal_transactions_created_total')).toEqual([]);
      expect(samples(m, 'svc_http_requests_total', { route: '/v1/transactions' })).toEqual([]);
      expect(value(await scrape(), 'fiscal_transactions_created_total', { country: 'ES', system: 'es-verifactu', status: 'pending', environment: 'test', type: 'sale' })).toBeGreaterThan(0);
    } finally {
      await app.close();
      rt.changes.close();
      rt.mailer.close();
    }
  });
});
