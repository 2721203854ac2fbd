import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
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
});
