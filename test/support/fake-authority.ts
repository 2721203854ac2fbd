/**
 * A fake tax authority for tests: a real HTTPS server on 127.0.0.1 that, like the real
 * services, requires a TLS client certificate. Its server certificate is made here with
 * openssl (subjectAltName IP:127.0.0.1); clients trust it through `caPem` (the
 * `authorityCa` of the submit context). Handlers get the decoded body and the client's
 * certificate, and answer like the real service would.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { PeerCertificate, TLSSocket } from 'node:tls';
import zlib from 'node:zlib';

export interface FakeRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body, gunzipped when sent with `Content-Encoding: gzip`. */
  body: Buffer;
  clientCert: PeerCertificate;
}

export interface FakeResponse {
  status: number;
  headers?: Record<string, string>;
  body: string | Buffer;
  /** gzip the body and say so (Batuz answers gzip). */
  gzip?: boolean;
}

export type FakeHandler = (req: FakeRequest) => FakeResponse | Promise<FakeResponse>;

export interface FakeAuthority {
  /** `https://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  /** The server certificate: trust it as the authority CA. */
  caPem: string;
  /** Every request received, in order (also those refused for lack of a client certificate). */
  requests: FakeRequest[];
  /** Replace the handler (per test). */
  setHandler(h: FakeHandler): void;
  close(): Promise<void>;
}

let serverCert: { key: string; cert: string } | undefined;
/** A self-signed certificate for 127.0.0.1 and localhost, made once per test process (every fake authority serves it). */
export function localhostCertificate(): { key: string; cert: string } {
  if (serverCert) return serverCert;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-authority-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync('/usr/bin/openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '3650',
    '-subj', '/CN=fake-authority.test', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ], { stdio: 'ignore' });
  serverCert = { key: fs.readFileSync(key, 'utf8'), cert: fs.readFileSync(cert, 'utf8') };
  return serverCert;
}

export async function startFakeAuthority(handler: FakeHandler): Promise<FakeAuthority> {
  const { key, cert } = localhostCertificate();
  let current = handler;
  const requests: FakeRequest[] = [];
  const server = https.createServer({ key, cert, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        let body = Buffer.concat(chunks);
        if (String(req.headers['content-encoding'] ?? '').includes('gzip')) body = zlib.gunzipSync(body);
        const clientCert = (req.socket as TLSSocket).getPeerCertificate();
        const fr: FakeRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body, clientCert };
        requests.push(fr);
        // The real services refuse a caller without a certificate (AEAT: HTTP 403 before any SOAP).
        if (!clientCert || Object.keys(clientCert).length === 0) {
          res.writeHead(403, { 'content-type': 'text/plain' }).end('client certificate required');
          return;
        }
        try {
          const out = await current(fr);
          let payload = typeof out.body === 'string' ? Buffer.from(out.body, 'utf8') : out.body;
          const headers: Record<string, string> = { ...(out.headers ?? {}) };
          if (out.gzip) {
            payload = zlib.gzipSync(payload);
            headers['content-encoding'] = 'gzip';
          }
          res.writeHead(out.status, headers).end(payload);
        } catch (err) {
          // A handler may ask for the connection to be cut without an answer (an outage).
          if ((err as { resetConnection?: boolean }).resetConnection) {
            req.socket.destroy();
            return;
          }
          res.writeHead(500, { 'content-type': 'text/plain' }).end(`fake authority handler failed: ${(err as Error).message}`);
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    caPem: cert,
    requests,
    setHandler: (h) => (current = h),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
