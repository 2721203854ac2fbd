import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/index.ts';
import { verifyNf525Chain } from '../../src/countries/fr-nf525/verify.ts';
import { openSigningDevice, type SigningDevice } from '../../src/signing/pkcs11/device.ts';
import { locationBodies } from '../support/fixtures.ts';
import { frenchSaleBody } from '../support/transactions.ts';
import { createTestDevice, HAVE_SOFTHSM, type TestDevice } from '../support/softhsm.ts';
import { cleanupDirs, ok, startService, tempDir, type LiveService } from './support.ts';

/*
 * HardwareDevice mode through the library host (docs/engine.md, docs/hardware-device.md):
 * init's `signing_device` opens a PKCS#11 token (SoftHSM2 here) and the engine's French
 * records are signed inside it: their NF525 chain verifies with the token's public key (that
 * the store keeps only the token's marker is test/api/hardware-device.test.ts's). A token that cannot be used is
 * `signing_device_error`, naming the field.
 */
let svc: LiveService;
let key: string;
let dev: TestDevice;
beforeAll(async () => {
  if (!HAVE_SOFTHSM) return;
  dev = createTestDevice('engine-device', '246810');
  svc = await startService();
  ({ key } = await svc.t.signup());
});
afterAll(async () => {
  await svc?.close();
  dev?.hsm.cleanup();
  cleanupDirs();
});

const call = (e: ReturnType<typeof createEngine>, method: string, params?: Record<string, unknown>) => e.call({ version: 1, method, ...(params ? { params } : {}) }) as Promise<any>;

describe.skipIf(!HAVE_SOFTHSM)('engine with a signing device', () => {
  it('signs the French records in the token; the chain verifies with its public key', async () => {
    const e = createEngine();
    const dataDir = tempDir();
    const device = { module: dev.module, token_label: dev.tokenLabel, pin: dev.pin, keys: { records: dev.keys.records } };
    try {
      ok(await call(e, 'init', { api_key: key, environment: 'sandbox', country: 'FR', service_url: svc.url, data_dir: dataDir, telemetry_interval_seconds: 0, signing_device: device }));
      const location = ok(await call(e, 'create_location', locationBodies['fr-nf525']));
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(ok(await call(e, 'process_transaction', frenchSaleBody(location.id))).id);
      const bodies: string[] = [];
      for (const id of ids) bodies.push(ok(await call(e, 'get_fiscal_record', { id })).body);
      const probe: SigningDevice = openSigningDevice({ module: dev.module, tokenLabel: dev.tokenLabel, pin: dev.pin, keys: { records: dev.keys.records } });
      try {
        expect(verifyNf525Chain(bodies, probe.records!.publicKey)).toMatchObject({ ok: true, count: 3 });
      } finally {
        probe.close();
      }
    } finally {
      await call(e, 'shutdown');
    }
  });

  it('a wrong PIN or an unknown key label: signing_device_error naming the field; nothing is initialised', async () => {
    const e = createEngine({ startWorker: false });
    const base = { api_key: key, environment: 'sandbox', country: 'FR', service_url: svc.url, telemetry_interval_seconds: 0 };
    const wrongPin = await call(e, 'init', { ...base, data_dir: tempDir(), signing_device: { module: dev.module, token_label: dev.tokenLabel, pin: '000000', keys: { records: 'records' } } });
    expect(wrongPin.error.code).toBe('signing_device_error');
    expect(wrongPin.error.message).toMatch(/^signing_device\.pin: /);
    const noKey = await call(e, 'init', { ...base, data_dir: tempDir(), signing_device: { module: dev.module, token_label: dev.tokenLabel, pin: dev.pin, keys: { records: 'no-such-key' } } });
    expect(noKey.error.code).toBe('signing_device_error');
    expect(noKey.error.message).toMatch(/^signing_device\.keys\.records: /);
    expect((await call(e, 'queue_status')).error.code).toBe('not_initialized');
  });
});
