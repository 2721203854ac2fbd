import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 answering the few billing-API endpoints the Stripe
 * provider calls (src/billing/stripe-provider.ts), in the API's own wire format: form-
 * encoded bodies with bracketed keys (`items[0][price_data][unit_amount]=1500`), Bearer
 * secret key, `Idempotency-Key` replays, JSON answers with `id`/`object`, errors as
 * `{error: {type, code, message}}`.
 *
 * Endpoints: POST /v1/products, POST /v1/customers, POST /v1/subscriptions,
 * GET|POST|DELETE /v1/subscriptions/:id, POST /v1/invoiceitems. `declineNext` answers the next
 * call with a 402 card error (not retried by the client, like a real decline).
 */
export interface FakeStripeCall {
  method: string;
  path: string;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  /** The form body as the API decodes it (brackets nested into objects; numeric keys stay keys). */
  body: Record<string, unknown>;
}

export interface FakeStripe {
  /** Base URL to configure as STRIPE_API_BASE_URL. */
  url: string;
  key: string;
  calls: FakeStripeCall[];
  customers: Map<string, Record<string, unknown>>;
  subscriptions: Map<string, Record<string, unknown>>;
  invoiceItems: Map<string, Record<string, unknown>>;
  declineNext: boolean;
  close(): Promise<void>;
}

/** `a[b][0][c]=1` → {a: {b: {0: {c: '1'}}}}: what the API does with the client's encoding. */
export function decodeForm(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const path = k.replace(/\]/g, '').split('[');
    let node = out;
    for (let i = 0; i < path.length - 1; i++) node = (node[path[i]!] ??= {}) as Record<string, unknown>;
    node[path[path.length - 1]!] = v;
  }
  return out;
}

export async function startFakeStripe(opts: { key?: string } = {}): Promise<FakeStripe> {
  const key = opts.key ?? `sk_test_${crypto.randomBytes(12).toString('hex')}`;
  const sockets = new Set<Socket>();
  const id = (p: string) => `${p}_${crypto.randomBytes(8).toString('hex')}`;
  const idempotent = new Map<string, { status: number; body: unknown }>();
  const state = {
    calls: [] as FakeStripeCall[],
    customers: new Map<string, Record<string, unknown>>(),
    subscriptions: new Map<string, Record<string, unknown>>(),
    invoiceItems: new Map<string, Record<string, unknown>>(),
    declineNext: false,
  };

  function subscriptionObject(sid: string, customer: string, body: Record<string, unknown>, itemId: string) {
    const item = ((body.items as Record<string, Record<string, unknown>> | undefined)?.['0']) ?? {};
    const pd = (item.price_data ?? {}) as Record<string, unknown>;
    return {
      id: sid, object: 'subscription', customer, status: 'active', metadata: body.metadata ?? {},
      items: {
        object: 'list', has_more: false, url: `/v1/subscription_items?subscription=${sid}`,
        data: [{
          id: itemId, object: 'subscription_item', quantity: Number(item.quantity ?? 1),
          price: { id: id('price'), object: 'price', currency: pd.currency, unit_amount: Number(pd.unit_amount), product: pd.product, recurring: pd.recurring },
        }],
      },
    };
  }

  function route(method: string, path: string, body: Record<string, unknown>): { status: number; body: unknown } {
    if (method === 'POST' && path === '/v1/products') return { status: 200, body: { id: id('prod'), object: 'product', name: body.name } };
    if (method === 'POST' && path === '/v1/customers') {
      const c = { id: id('cus'), object: 'customer', ...body };
      state.customers.set(c.id, c);
      return { status: 200, body: c };
    }
    if (method === 'POST' && path === '/v1/subscriptions') {
      if (!state.customers.has(String(body.customer))) return missing('customer', body.customer);
      const s = subscriptionObject(id('sub'), String(body.customer), body, id('si'));
      state.subscriptions.set(s.id, s);
      return { status: 200, body: s };
    }
    const sm = /^\/v1\/subscriptions\/([^/]+)$/.exec(path);
    if (sm) {
      const s = state.subscriptions.get(sm[1]!) as ReturnType<typeof subscriptionObject> | undefined;
      if (!s) return missing('subscription', sm[1]);
      if (method === 'GET') return { status: 200, body: s };
      if (method === 'DELETE') {
        // Stripe's cancel: an already canceled subscription cannot be canceled again.
        if (s.status === 'canceled') return { status: 400, body: { error: { type: 'invalid_request_error', message: 'A canceled subscription can only update its cancellation_details and metadata.' } } };
        const canceled = { ...s, status: 'canceled' };
        state.subscriptions.set(s.id, canceled);
        return { status: 200, body: canceled };
      }
      const itemId = ((body.items as Record<string, Record<string, unknown>> | undefined)?.['0']?.id as string | undefined) ?? id('si');
      const next = { ...subscriptionObject(s.id, s.customer, { ...body, metadata: s.metadata }, itemId), proration_behavior: body.proration_behavior };
      state.subscriptions.set(s.id, next);
      return { status: 200, body: next };
    }
    if (method === 'POST' && path === '/v1/invoiceitems') {
      if (!state.customers.has(String(body.customer))) return missing('customer', body.customer);
      const ii = { id: id('ii'), object: 'invoiceitem', ...body, amount: Number(body.amount) };
      state.invoiceItems.set(ii.id, ii);
      return { status: 200, body: ii };
    }
    return { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path})` } } };
  }
  const missing = (what: string, v: unknown) =>
    ({ status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such ${what}: '${String(v)}'` } } });

  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { text += c; });
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      const body = decodeForm(text);
      const idem = req.headers['idempotency-key'] as string | undefined;
      state.calls.push({ method: req.method ?? '', path: u.pathname, authorization: req.headers.authorization, idempotencyKey: idem, body });
      const send = (r: { status: number; body: unknown }) => {
        res.writeHead(r.status, { 'content-type': 'application/json', 'request-id': id('req') });
        res.end(JSON.stringify(r.body));
      };
      if (req.headers.authorization !== `Bearer ${key}`) {
        return send({ status: 401, body: { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } } });
      }
      if (state.declineNext) {
        state.declineNext = false;
        return send({ status: 402, body: { error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' } } });
      }
      const replay = idem ? idempotent.get(idem) : undefined;
      if (replay) return send(replay);
      const answer = route(req.method ?? 'GET', u.pathname, body);
      if (idem && req.method === 'POST') idempotent.set(idem, answer);
      send(answer);
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    key,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  }) as FakeStripe;
}
