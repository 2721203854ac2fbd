/**
 * HTTP transport to the tax authorities: HTTPS with mutual TLS (the issuer's certificate
 * as the client certificate: TicketBAI, Batuz LROE, AEAT VERI*FACTU and SII all
 * authenticate the caller that way), keep-alive connections per client certificate,
 * a hard timeout, and transport faults turned into `TransportError` (retried by the
 * queue). Authority answers, even 4xx/5xx ones, are returned to the caller, which knows
 * whether the body is a parsable answer.
 */
import crypto from 'node:crypto';
import tls from 'node:tls';
import { Agent, errors as undiciErrors, request } from 'undici';
import { TransportError, type SigningKey } from '../types.ts';

export interface AuthorityRequest {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
  /** The TLS client certificate and key; undefined sends none (the authority will refuse). */
  clientKey: SigningKey | undefined;
  /** Extra trusted CA certificates (PEM) for the server: the fake authorities of the tests. */
  ca?: string | undefined;
  timeoutMs: number;
}

export interface AuthorityResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Connection pools per (client certificate, CA): a TLS handshake is not paid per record. */
const agents = new Map<string, Agent>();
const MAX_AGENTS = 200;

function agentFor(clientKey: SigningKey | undefined, ca: string | undefined): Agent {
  const id = crypto
    .createHash('sha256')
    .update(clientKey?.certificatePem ?? '-')
    .update('\0')
    .update(ca ?? '-')
    .digest('hex');
  let agent = agents.get(id);
  if (agent) {
    // Most recently used last: the oldest pool is the one closed when the map is full.
    agents.delete(id);
    agents.set(id, agent);
    return agent;
  }
  if (agents.size >= MAX_AGENTS) {
    const [oldestId, oldest] = agents.entries().next().value as [string, Agent];
    agents.delete(oldestId);
    void oldest.close().catch(() => undefined);
  }
  agent = new Agent({
    keepAliveTimeout: 30_000,
    connect: {
      ...(clientKey ? { key: clientKey.privateKeyPem, cert: [clientKey.certificatePem, ...clientKey.chain.map((c) => c.toString())].join('\n') } : {}),
      ...(ca ? { ca: [...tlsRootCertificates(), ca] } : {}),
    },
  });
  agents.set(id, agent);
  return agent;
}

// Adding a CA must not drop the public roots the real authorities are signed by.
const tlsRootCertificates = (): readonly string[] => tls.rootCertificates;

/** POSTs to an authority. Throws `TransportError` when no HTTP answer arrives in time. */
export const authorityPost = (req: AuthorityRequest): Promise<AuthorityResponse> => authorityCall('POST', req);

/** GETs from an authority (a result to poll: Italy DC). Throws `TransportError` as `authorityPost` does. */
export const authorityGet = (req: Omit<AuthorityRequest, 'body'>): Promise<AuthorityResponse> => authorityCall('GET', { ...req, body: undefined });

async function authorityCall(method: 'POST' | 'GET', req: Omit<AuthorityRequest, 'body'> & { body: string | Buffer | undefined }): Promise<AuthorityResponse> {
  const signal = AbortSignal.timeout(req.timeoutMs);
  try {
    const res = await request(req.url, {
      method,
      headers: req.headers,
      ...(req.body === undefined ? {} : { body: req.body }),
      dispatcher: agentFor(req.clientKey, req.ca),
      signal,
      headersTimeout: req.timeoutMs,
      bodyTimeout: req.timeoutMs,
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) {
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
    }
    return { status: res.statusCode, headers, body };
  } catch (err) {
    throw toTransportError(err, req);
  }
}

function toTransportError(err: unknown, req: Pick<AuthorityRequest, 'url' | 'timeoutMs'>): TransportError {
  const host = safeHost(req.url);
  if (signalAborted(err) || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
    return new TransportError('timeout', `no answer from ${host} within ${req.timeoutMs / 1000} s`, { cause: err });
  }
  const code = (err as { code?: string }).code ?? '';
  if (/CERT|SSL|TLS|EPROTO|ERR_TLS/i.test(code) || /certificate|handshake|alert/i.test(String((err as Error).message))) {
    return new TransportError('tls_error', `TLS connection to ${host} failed: ${(err as Error).message}`, { cause: err });
  }
  return new TransportError('connection_error', `could not reach ${host}: ${(err as Error).message ?? String(err)}`, { cause: err });
}

function signalAborted(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  return name === 'AbortError' || name === 'TimeoutError';
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** Closes every pooled connection (process shutdown, tests). */
export async function closeAuthorityConnections(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((a) => a.close().catch(() => undefined)));
}
