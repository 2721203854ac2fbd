import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SigningDeviceConfig } from '../../src/config.ts';
import { ManualClock } from '../../src/core/clock.ts';
import { verifyNf525Archive } from '../../src/countries/fr-nf525/archive-verify.ts';
import { verifyNf525Chain } from '../../src/countries/fr-nf525/verify.ts';
import { documentHashMessage } from '../../src/countries/pt-saft/signature.ts';
import { SANDBOX_PRODUCER_PUBLIC_KEY_PEM } from '../../src/countries/pt-saft/sandbox-key.ts';
import { opensslVerifyHash } from '../../src/countries/pt-saft/test-tools.ts';
import { openSigningDevice, type SigningDevice } from '../../src/signing/pkcs11/device.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { closeTokenSessions, createTestDevice, generateTokenKey, HAVE_SOFTHSM, type TestDevice } from '../support/softhsm.ts';
import { configs } from '../support/fixtures.ts';
import { createLocation, createTx, saleBody, saleMetadata } from '../support/transactions.ts';
import { firstTagText, xmlsecVerify } from '../support/xml-tools.ts';

/*
 * HardwareDevice mode through the API (issue #17 part 8): the service runs with a
 * PKCS#11 device (SoftHSM2 token, keys generated inside it) and signs France NF525
 * records, closures and archives, Portugal's SAF-T Hash and TicketBAI's XAdES with the
 * token's keys; every signature verifies with the public key read from the token, and no
 * private key for those purposes is generated or stored in the database.
 */

let t: TestDevice;
let device: SigningDevice;
let app: TestApp;
let clock: ManualClock;
let dir: string;
let pluggableDir: string;
const ROOT = path.resolve(import.meta.dirname, '../..');

beforeAll(async () => {
  if (!HAVE_SOFTHSM) return;
  t = createTestDevice();
  // A second token, for the removal test (SoftHSM2 lists the tokens present when the library is initialised).
  const tokens = path.join(t.hsm.dir, 'tokens');
  const existing = new Set(readdirSync(tokens));
  t.hsm.initToken('pluggable', '444444');
  pluggableDir = path.join(tokens, readdirSync(tokens).find((d) => !existing.has(d))!);
  generateTokenKey(t.hsm, 'pluggable', '444444', { label: 'records', type: 'ec-p256' });
  const config: SigningDeviceConfig = {
    module: t.module, tokenLabel: t.tokenLabel, pin: t.pin, keys: t.keys,
    producerInfo: { PT: { version: '2', certificateNumber: '4321' } },
  };
  device = openSigningDevice({ module: t.module, tokenLabel: t.tokenLabel, pin: t.pin, keys: t.keys });
  clock = new ManualClock('2026-02-03T09:00:00.000Z');
  app = await startTestApp({ clock, liveEnabled: true, signingDevice: device, config: { signingDevice: config } });
  dir = mkdtempSync(path.join(tmpdir(), 'hsm-api-'));
});
afterAll(async () => {
  await app?.close();
  device?.close();
  t?.hsm.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const pem = (k: SigningDevice['records']) => k!.publicKey.export({ type: 'spki', format: 'pem' }).toString();

async function fiscalRecord(key: string, id: string): Promise<string> {
  const res = await app.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

async function liveKey(key: string): Promise<string> {
  const res = await app.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().key as string;
}

describe.skipIf(!HAVE_SOFTHSM)('HardwareDevice mode (SoftHSM2 token)', () => {
  it('France: records, closures and the monthly archive are signed by the token; the archive verifies (library and CLI) with its public key', async () => {
    const { key } = await app.signup();
    const loc = await createLocation(app, key, 'fr-nf525');
    const ids: string[] = [];
    for (const [at, over] of [['2026-02-03T09:00:00.000Z', {}], ['2026-02-10T11:00:00.000Z', {}], ['2026-02-10T12:00:00.000Z', { type: 'refund' }]] as const) {
      clock.set(at);
      const res = await createTx(app, key, saleBody(loc, over));
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json().id);
    }
    const bodies = await Promise.all(ids.map((id) => fiscalRecord(key, id)));
    expect(verifyNf525Chain(bodies, device.records!.publicKey)).toMatchObject({ ok: true, count: 3 });

    // The location's key row: the token's public key, no key material.
    const { rows } = await app.db.query<{ public_key_pem: string; key_material: string }>('SELECT public_key_pem, key_material FROM record_keys WHERE location_id = $1', [loc]);
    expect(rows).toEqual([{ public_key_pem: pem(device.records), key_material: 'device:pkcs11' }]);

    clock.set('2026-03-01T01:00:00.000Z');
    const run = await app.request({ method: 'POST', url: '/v1/admin/process-pending', key });
    expect(run.statusCode, run.body).toBe(200);
    expect((run.json().results as Array<Record<string, unknown>>).find((r) => r.processor === 'france/closures')).toMatchObject({ failed: 0, errors: [] });
    const dl = await app.request({ method: 'GET', url: `/v1/locations/${loc}/archives/monthly-2026-02`, key });
    expect(dl.statusCode, dl.body).toBe(200);
    const bytes = dl.rawPayload;
    // Records, closures, JET and the manifest signature all check with the key inside, which is the token's.
    expect(verifyNf525Archive(bytes)).toMatchObject({ ok: true, counts: { records: 3 } });
    const files = (JSON.parse(bytes.toString('utf8')) as { files: Array<{ name: string; content: string }> }).files;
    expect(files.find((f) => f.name === 'public_key.pem')!.content).toBe(pem(device.records));

    const file = path.join(dir, 'archive.json');
    writeFileSync(file, bytes);
    const cli = spawnSync(process.execPath, ['--import', 'tsx', 'src/countries/fr-nf525/verify-archive-cli.ts', file], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^OK monthly-2026-02 /);
  });

  it('Portugal: a live document is signed by the token producer key (openssl verifies), HashControl its version; test documents keep the sandbox key', async () => {
    clock.set('2026-03-02T10:00:00.000Z');
    const { key } = await app.signup();
    const live = await liveKey(key);
    const loc = await createLocation(app, key, 'pt-saft');
    const docs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await createTx(app, live, saleBody(loc));
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ status: 'success', environment: 'live' });
      docs.push(await fiscalRecord(live, res.json().id));
    }
    const producerPem = pem(device.producer.PT);
    expect(firstTagText(docs[0]!, 'HashControl')).toBe('2');
    const first = opensslVerifyHash(documentHashMessage(docs[0]!, null), firstTagText(docs[0]!, 'Hash'), producerPem);
    expect(first.ok, first.output).toBe(true);
    const second = opensslVerifyHash(documentHashMessage(docs[1]!, firstTagText(docs[0]!, 'Hash')), firstTagText(docs[1]!, 'Hash'), producerPem);
    expect(second.ok, second.output).toBe(true);

    const test = await createTx(app, key, saleBody(loc));
    expect(test.statusCode, test.body).toBe(201);
    const xml = await fiscalRecord(key, test.json().id);
    expect(opensslVerifyHash(documentHashMessage(xml, null), firstTagText(xml, 'Hash'), SANDBOX_PRODUCER_PUBLIC_KEY_PEM).ok).toBe(true);
  });

  it('TicketBAI: the record is signed by the token key with the certificate stored in the token (xmlsec1 verifies); no sandbox certificate is made', async () => {
    clock.set('2026-03-02T10:00:00.000Z');
    const { key, accountId } = await app.signup();
    const loc = await createLocation(app, key, 'es-ticketbai');
    const res = await createTx(app, key, saleBody(loc));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await fiscalRecord(key, res.json().id);
    const certB64 = device.certificate!.certificate.raw.toString('base64');
    expect(firstTagText(xml, 'ds:X509Certificate')).toBe(certB64);
    const v = xmlsecVerify(xml, { trustedCertPem: device.certificate!.certificatePem });
    expect(v.output).toContain('SignedInfo References (ok/all): 3/3');
    expect(v.ok, v.output).toBe(true);
    const { rows } = await app.db.query('SELECT 1 FROM sandbox_certificates WHERE account_id = $1', [accountId]);
    expect(rows).toHaveLength(0);
  });

  it('the HardwareDevice pricing floor: a subscription costs at least 1000 a month per active location', async () => {
    const { key } = await app.signup();
    for (let i = 0; i < 2; i++) await createLocation(app, key, 'es-sii', { name: `Till ${i}` });
    const res = await app.request({ method: 'POST', url: '/v1/subscriptions', key, payload: {
      company_name: 'Device SL', billing_email: 'device@example.com', payment_method_id: 'pm_test_1', merchant_count: 1, billing_interval: 'month',
    } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ current_tier: 'starter', merchant_count: 1, monthly_amount: 2000 });
  });

  it('the floor follows the active locations: a location added, deactivated or deleted re-quotes the subscription in the background (prorated, in the billing ledger)', async () => {
    const { key, accountId } = await app.signup();
    const locs = [await createLocation(app, key, 'es-sii', { name: 'Till A' }), await createLocation(app, key, 'es-sii', { name: 'Till B' })];
    const created = await app.request({ method: 'POST', url: '/v1/subscriptions', key, payload: {
      company_name: 'Device SL', billing_email: 'device@example.com', payment_method_id: 'pm_test_1', merchant_count: 1, billing_interval: 'month',
    } });
    expect(created.json().monthly_amount).toBe(2000);
    const amount = async () => {
      await app.worker.drain();
      return (await app.request({ method: 'GET', url: '/v1/subscriptions', key })).json().monthly_amount;
    };
    const prorations = async () => (await app.db.query<{ amount: number; description: string }>(
      "SELECT amount::int AS amount, description FROM billing_ledger WHERE account_id = $1 AND kind = 'proration' ORDER BY created_at, id", [accountId])).rows;

    clock.advance(86_400_000);
    locs.push(await createLocation(app, key, 'es-sii', { name: 'Till C' }));
    expect(await amount()).toBe(3000);
    const [added] = await prorations();
    expect(added!.amount).toBeGreaterThan(0); // charged for the rest of the period
    expect(added!.description).toMatch(/active locations changed \(location floor\) \(starter → starter, 3 active locations\)/);

    const off = await app.request({ method: 'PATCH', url: `/v1/locations/${locs[0]}`, key, payload: { status: 'inactive' } });
    expect(off.statusCode, off.body).toBe(200);
    expect(await amount()).toBe(2000);
    expect(await app.request({ method: 'DELETE', url: `/v1/locations/${locs[1]}`, key }).then((r) => r.statusCode)).toBe(204);
    // One active location: the merchant price (1500) is above the floor (1000).
    expect(await amount()).toBe(1500);
    const lines = await prorations();
    expect(lines).toHaveLength(3);
    expect(lines.slice(1).every((l) => l.amount < 0)).toBe(true); // credited
    // A change that leaves the active count as it was (a rename) re-quotes nothing.
    await app.request({ method: 'PATCH', url: `/v1/locations/${locs[2]}`, key, payload: { name: 'Till C2' } });
    await app.worker.drain();
    expect(await prorations()).toHaveLength(3);
  });

  it('a location keeps one record key: a device refuses a location signed in process, a host without the device refuses a device location (503, never a 500)', async () => {
    clock.set('2026-03-02T10:00:00.000Z');
    const plain = await startTestApp({ db: app.db, clock });
    try {
      const { key } = await app.signup();
      const before = await createLocation(app, key, 'fr-nf525');
      expect((await createTx(plain, key, saleBody(before))).statusCode).toBe(201); // in-process key, sealed in record_keys
      const refused = await createTx(app, key, saleBody(before));
      expect(refused.statusCode, refused.body).toBe(503);
      expect(refused.json()).toEqual({ error: 'service temporarily unavailable: the signing device is unavailable' });
      expect(refused.headers['retry-after']).toBe('30');
      const onDevice = await createLocation(app, key, 'fr-nf525');
      expect((await createTx(app, key, saleBody(onDevice))).statusCode).toBe(201);
      const noDevice = await createTx(plain, key, saleBody(onDevice));
      expect(noDevice.statusCode, noDevice.body).toBe(503);
      expect(noDevice.json()).toEqual({ error: 'service temporarily unavailable: the signing device is unavailable' });
      // Neither refusal wrote a record.
      const { rows } = await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE location_id IN ($1, $2)', [before, onDevice]);
      expect(rows[0]!.n).toBe(2);
    } finally {
      await plain.close();
    }
  });
});

describe.skipIf(!HAVE_SOFTHSM)('HardwareDevice mode: Italy, concurrency', () => {
  it('Italy: an SDI FPA12 file and a DC record are signed by the token key with its certificate (xmlsec1 verifies)', async () => {
    clock.set('2026-03-02T10:00:00.000Z');
    const { key } = await app.signup();
    const pa = await createLocation(app, key, 'it-sdi', { country_config: { ...configs.sdi, formato_trasmissione: 'FPA12' } });
    const dc = await createLocation(app, key, 'it-dc');
    const certB64 = device.certificate!.certificate.raw.toString('base64');
    for (const [loc, body] of [
      [pa, saleBody(pa, { metadata: { ...saleMetadata['it-sdi'], codice_destinatario: 'UFXYZ1' } })],
      [dc, saleBody(dc, saleMetadata['it-dc'] ? { metadata: saleMetadata['it-dc'] } : {})],
    ] as const) {
      const res = await createTx(app, key, body);
      expect(res.statusCode, `${loc}: ${res.body}`).toBe(201);
      const xml = await fiscalRecord(key, res.json().id);
      expect(firstTagText(xml, 'ds:X509Certificate').replace(/\s+/g, '')).toBe(certB64);
      const v = xmlsecVerify(xml, { trustedCertPem: device.certificate!.certificatePem });
      expect(v.ok, v.output).toBe(true);
    }
  });

  it('50 concurrent creates on token-signed locations (NF525 chain and TicketBAI) all succeed with valid signatures', async () => {
    clock.set('2026-03-03T10:00:00.000Z');
    const { key } = await app.signup();
    const fr = await createLocation(app, key, 'fr-nf525');
    const tbai = await createLocation(app, key, 'es-ticketbai');
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => createTx(app, key, saleBody(i % 2 === 0 ? fr : tbai))));
    for (const r of all) expect(r.statusCode, r.body).toBe(201);
    const frIds = all.filter((_, i) => i % 2 === 0).map((r) => r.json().id as string);
    const tbaiIds = all.filter((_, i) => i % 2 === 1).map((r) => r.json().id as string);
    // The chain in its own order (by seq), whatever order the requests finished in.
    const bodies = await Promise.all(frIds.map((id) => fiscalRecord(key, id)));
    const seq = (b: string) => (JSON.parse(b) as { seq: number }).seq;
    const sorted = [...bodies].sort((a, b) => seq(a) - seq(b));
    expect(verifyNf525Chain(sorted, device.records!.publicKey)).toMatchObject({ ok: true, count: 25 });
    for (const id of tbaiIds) {
      const v = xmlsecVerify(await fiscalRecord(key, id), { trustedCertPem: device.certificate!.certificatePem });
      expect(v.ok, v.output).toBe(true);
    }
  });
});

describe.skipIf(!HAVE_SOFTHSM)('HardwareDevice mode: the token removed while the service runs', () => {
  it('a create answers 503 (Retry-After) and writes nothing, on every attempt while the token is gone (never a 500)', async () => {
    clock.set('2026-03-04T10:00:00.000Z');
    const pluggable = openSigningDevice({ module: t.module, tokenLabel: 'pluggable', pin: '444444', keys: { records: 'records' } });
    const host = await startTestApp({ db: app.db, clock, signingDevice: pluggable });
    const aside = `${pluggableDir}.unplugged`;
    try {
      const { key } = await host.signup();
      const loc = await createLocation(host, key, 'fr-nf525');
      const first = await createTx(host, key, saleBody(loc));
      expect(first.statusCode, first.body).toBe(201);

      // Unplugged: the token's files are gone and its sessions closed (what removal does to the library).
      renameSync(pluggableDir, aside);
      closeTokenSessions(t.module, 'pluggable');
      for (let i = 0; i < 3; i++) {
        const res = await createTx(host, key, saleBody(loc), { 'idempotency-key': 'while-unplugged' });
        expect(res.statusCode, `attempt ${i}: ${res.body}`).toBe(503);
        expect(res.json()).toEqual({ error: 'service temporarily unavailable: the signing device is unavailable' });
        expect(res.headers['retry-after']).toBe('30');
      }
      const { rows } = await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM transactions WHERE location_id = $1', [loc]);
      expect(rows[0]!.n).toBe(1);

      // (Plugging it back is not tested: SoftHSM2 lists tokens only when the library is initialised.)
      expect(verifyNf525Chain([await fiscalRecord(key, first.json().id)], pluggable.records!.publicKey)).toMatchObject({ ok: true, count: 1 });
    } finally {
      await host.close();
      pluggable.close();
    }
  });
});
