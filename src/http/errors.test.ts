import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { DbUnavailableError } from '../core/errors.ts';
import { SigningDeviceError } from '../signing/pkcs11/errors.ts';
import { registerErrorHandling } from './errors.ts';

describe('error handling', () => {
  it('a signing device gone at signing time: 503 with Retry-After, not a 500; a bad device setting stays a 500', async () => {
    const app = Fastify({ logger: false });
    registerErrorHandling(app);
    app.get('/gone', async () => {
      throw new SigningDeviceError('device', 'the signing device (token "pos") is unavailable: CKR_TOKEN_NOT_PRESENT');
    });
    app.get('/misconfigured', async () => {
      throw new SigningDeviceError('pin', 'the token refused the PIN');
    });
    const gone = await app.inject({ method: 'GET', url: '/gone' });
    expect(gone.statusCode).toBe(503);
    expect(gone.headers['retry-after']).toBe('30');
    expect(gone.json()).toEqual({ error: 'service temporarily unavailable: the signing device is unavailable' });
    // Start-up checks the settings (ConfigError); one seen at request time is a fault of ours.
    const misconfigured = await app.inject({ method: 'GET', url: '/misconfigured' });
    expect(misconfigured.statusCode).toBe(500);
    expect(misconfigured.json()).toEqual({ error: 'internal server error' });
    await app.close();
  });

  it('the store unavailable: 503 with Retry-After; a statement past its bound says "timed out", no connection says "unreachable", in the body and in the log', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({ write(chunk, _enc, done) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); done(); } });
    const app = Fastify({ logger: { level: 'error', stream } });
    registerErrorHandling(app);
    const cancelled = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    app.get('/timeout', async () => {
      throw new DbUnavailableError(cancelled, 'timeout');
    });
    app.get('/refused', async () => {
      throw new DbUnavailableError(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    });
    // Wrapped by a caller (a service rethrowing with the store's error as its cause).
    app.get('/wrapped', async () => {
      throw new Error('could not read', { cause: new DbUnavailableError(cancelled, 'timeout') });
    });
    for (const [url, error, reason] of [
      ['/timeout', 'service temporarily unavailable: database timed out', 'timeout'],
      ['/refused', 'service temporarily unavailable: database unreachable', 'unreachable'],
      ['/wrapped', 'service temporarily unavailable: database timed out', 'timeout'],
    ] as const) {
      const res = await app.inject({ method: 'GET', url });
      expect([res.statusCode, res.headers['retry-after'], res.json()], url).toEqual([503, '5', { error }]);
      expect(lines.pop(), url).toMatchObject({ db_unavailable: reason, msg: reason === 'timeout' ? 'database timed out' : 'database unreachable' });
    }
    await app.close();
  });
});
