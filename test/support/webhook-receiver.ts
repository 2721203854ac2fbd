import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real webhook endpoint on 127.0.0.1 for the tests: records every request and checks
 * every signature scheme the service sends by recomputing the HMACs itself (no code
 * shared with the service's signer):
 *
 * - `X-Webhook-Signature: sha256=<hex>` = HMAC-SHA256(secret string, `<X-Webhook-Timestamp>.<body>`);
 * - `X-Fiscalization-Signature: t=<ts>,v1=<hex>`, the same HMAC, `t` equal to the timestamp;
 * - Standard Webhooks: `webhook-signature: v1,<base64>` = HMAC-SHA256(base64-decoded part
 *   of the secret after `whsec_`, `<webhook-id>.<webhook-timestamp>.<body>`).
 *
 * Timestamps further than `toleranceSeconds` from the receiver's `now` are stale. When
 * told to answer `ok`, a request that fails any check gets 401 (so a bad signature is a
 * failed delivery); `fail` answers 500 (or a given status); `hang` never answers.
 */
export interface SignatureCheck {
  spec: boolean;
  fiscalization: boolean;
  standard: boolean;
  fresh: boolean;
  /** Every scheme verifies and the timestamp is fresh. */
  all: boolean;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  /** The signed timestamp (unix seconds). */
  timestamp: number;
  /** Checks the signatures against any secret (e.g. the one before a rotation). */
  check(secret: string): SignatureCheck;
  /** What the receiver answered (null: it hung). */
  answered: number | null;
}

export type ReceiverMode = { kind: 'ok' } | { kind: 'fail'; status: number; body?: string | undefined } | { kind: 'hang' };

export interface WebhookReceiver {
  url: string;
  received: ReceivedRequest[];
  /** The secret `ok` mode verifies with. */
  secret: string | undefined;
  ok(): void;
  /** Answer `status` (default 500), with `body` if given. */
  fail(status?: number, body?: string): void;
  hang(): void;
  close(): Promise<void>;
}

const hmac = (key: Buffer, msg: string) => crypto.createHmac('sha256', key).update(msg, 'utf8');
const same = (a: string, b: string) => a.length === b.length && crypto.timingSafeEqual(Buffer.from(a), Buffer.from(b));
const header = (h: http.IncomingHttpHeaders, name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v[0] ?? '' : v ?? '';
};

export function checkSignatures(headers: http.IncomingHttpHeaders, body: string, secret: string, nowSeconds: number, toleranceSeconds: number): SignatureCheck {
  const ts = header(headers, 'x-webhook-timestamp');
  const specHex = hmac(Buffer.from(secret, 'utf8'), `${ts}.${body}`).digest('hex');
  const spec = /^\d+$/.test(ts) && same(header(headers, 'x-webhook-signature'), `sha256=${specHex}`);
  const fiscalization = same(header(headers, 'x-fiscalization-signature'), `t=${ts},v1=${specHex}`);

  const id = header(headers, 'webhook-id');
  const sts = header(headers, 'webhook-timestamp');
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = hmac(key, `${id}.${sts}.${body}`).digest('base64');
  // Standard Webhooks: space-separated list of `v1,<sig>`; any one may match.
  const standard = sts === ts && header(headers, 'webhook-signature').split(' ').some((s) => same(s, `v1,${expected}`));

  const fresh = /^\d+$/.test(ts) && Math.abs(nowSeconds - Number(ts)) <= toleranceSeconds;
  return { spec, fiscalization, standard, fresh, all: spec && fiscalization && standard && fresh };
}

export async function startWebhookReceiver(opts: { now?: () => number; toleranceSeconds?: number } = {}): Promise<WebhookReceiver> {
  const now = opts.now ?? (() => Date.now());
  const tolerance = opts.toleranceSeconds ?? 300;
  let mode: ReceiverMode = { kind: 'ok' };
  const received: ReceivedRequest[] = [];
  const hanging = new Set<http.ServerResponse>();

  const state: WebhookReceiver = {
    url: '',
    received,
    secret: undefined,
    ok: () => void (mode = { kind: 'ok' }),
    fail: (status = 500, body?: string) => void (mode = { kind: 'fail', status, body }),
    hang: () => void (mode = { kind: 'hang' }),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const nowSeconds = Math.floor(now() / 1000);
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const entry: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        json,
        timestamp: Number(header(req.headers, 'x-webhook-timestamp')),
        check: (secret) => checkSignatures(req.headers, body, secret, nowSeconds, tolerance),
        answered: null,
      };
      received.push(entry);
      const answer = (status: number, text: string) => {
        entry.answered = status;
        res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
      };
      if (mode.kind === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      if (mode.kind === 'fail') return answer(mode.status, mode.body ?? `failing on purpose (${mode.status})`);
      if (!state.secret) return answer(401, 'receiver has no secret');
      const c = entry.check(state.secret);
      if (!c.fresh) return answer(401, 'stale timestamp');
      if (!c.all) return answer(401, `bad signature: ${JSON.stringify(c)}`);
      return answer(200, 'ok: received');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/fiscal`;
  return state;
}
