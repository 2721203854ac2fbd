import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { LIVE_NEEDS_PRODUCER_KEY, documentHashMessage } from '../../src/countries/pt-saft/signature.ts';
import { SANDBOX_PRODUCER_PUBLIC_KEY_PEM } from '../../src/countries/pt-saft/sandbox-key.ts';
import { opensslVerifyHash } from '../../src/countries/pt-saft/test-tools.ts';
import { DEFAULT_SOFTWARE } from '../../src/runtime.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';
import { firstTagText } from '../support/xml-tools.ts';

/*
 * The SAF-T PT signing key is the certified program's, configured for the service
 * (PT_SOFTWARE_KEY_FILE → SoftwareIdentity.producerKeys.PT, main.ts): with it, live
 * Portuguese documents are signed by it (HashControl = PT_SOFTWARE_KEY_VERSION) without
 * any certificate on the location; without it, a live create is refused (400) and
 * nothing is stored. Test keys always get the published sandbox key.
 */

const producer = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
const producerPublicPem = producer.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const tag = firstTagText;

let withKey: TestApp;
let withoutKey: TestApp;
beforeAll(async () => {
  const clock = new ManualClock('2026-03-02T10:00:00.000Z');
  withKey = await startTestApp({
    clock, liveEnabled: true,
    software: { ...DEFAULT_SOFTWARE, producerKeys: { PT: { privateKey: producer.privateKey, version: '2', certificateNumber: '4321' } } },
  });
  withoutKey = await startTestApp({ clock, liveEnabled: true });
});
afterAll(async () => {
  await withKey?.close();
  await withoutKey?.close();
});

async function liveKey(t: TestApp, key: string): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'prod', environment: 'live' } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().key as string;
}

async function record(t: TestApp, key: string, id: string): Promise<string> {
  const res = await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

describe('Portugal: the software producer key by setting, through the API', () => {
  it('configured: live documents are signed by it (openssl verifies), HashControl is its version, no certificate needed; test documents by the sandbox key', async () => {
    const { key } = await withKey.signup();
    const live = await liveKey(withKey, key);
    for (const k of [live, key]) {
      const loc = await createLocation(withKey, key, 'pt-saft');
      const res = await createTx(withKey, k, saleBody(loc));
      expect(res.statusCode, res.body).toBe(201);
      const tx = res.json();
      expect(tx).toMatchObject({ status: 'success', environment: k === live ? 'live' : 'test' });
      const xml = await record(withKey, k, tx.id);
      // Live: the configured key (version 2). Test: the sandbox key, never the certified one.
      const [signer, other, version] = k === live ? [producerPublicPem, SANDBOX_PRODUCER_PUBLIC_KEY_PEM, '2'] : [SANDBOX_PRODUCER_PUBLIC_KEY_PEM, producerPublicPem, '1'];
      expect(tag(xml, 'HashControl')).toBe(version);
      const v = opensslVerifyHash(documentHashMessage(xml, null), tag(xml, 'Hash'), signer);
      expect(v.ok, v.output).toBe(true);
      expect(opensslVerifyHash(documentHashMessage(xml, null), tag(xml, 'Hash'), other).ok).toBe(false);
    }
  });

  it("one location's test and live documents never share a series' numbers or Hash chain", async () => {
    const { key } = await withKey.signup();
    const live = await liveKey(withKey, key);
    const loc = await createLocation(withKey, key, 'pt-saft');
    const docs: { env: string; xml: string }[] = [];
    for (const k of [key, live, key, live]) {
      const res = await createTx(withKey, k, saleBody(loc));
      expect(res.statusCode, res.body).toBe(201);
      docs.push({ env: res.json().environment, xml: await record(withKey, k, res.json().id) });
    }
    const no = (d: { xml: string }) => tag(d.xml, 'InvoiceNo');
    const [t1, l1, t2, l2] = docs;
    expect([t1!.env, l1!.env, t2!.env, l2!.env]).toEqual(['test', 'live', 'test', 'live']);
    // Each environment numbers from 1, without the other's documents in between…
    expect([no(t1!), no(t2!)].map((n) => n.split('/')[1])).toEqual(['1', '2']);
    expect([no(l1!), no(l2!)].map((n) => n.split('/')[1])).toEqual(['1', '2']);
    // …and each Hash signs the previous document of its own environment (openssl).
    expect(opensslVerifyHash(documentHashMessage(l1!.xml, null), tag(l1!.xml, 'Hash'), producerPublicPem).ok).toBe(true);
    expect(opensslVerifyHash(documentHashMessage(l2!.xml, tag(l1!.xml, 'Hash')), tag(l2!.xml, 'Hash'), producerPublicPem).ok).toBe(true);
    expect(opensslVerifyHash(documentHashMessage(t2!.xml, tag(t1!.xml, 'Hash')), tag(t2!.xml, 'Hash'), SANDBOX_PRODUCER_PUBLIC_KEY_PEM).ok).toBe(true);
  });

  it('not configured: a live create is refused with a clear 400 and nothing is stored; test keys use the sandbox key', async () => {
    const { key } = await withoutKey.signup();
    const live = await liveKey(withoutKey, key);
    const loc = await createLocation(withoutKey, key, 'pt-saft');
    const refused = await createTx(withoutKey, live, saleBody(loc));
    expect([refused.statusCode, refused.json()]).toEqual([400, { error: LIVE_NEEDS_PRODUCER_KEY }]);
    const list = await withoutKey.request({ method: 'GET', url: '/v1/transactions', key: live });
    expect(list.json().data).toEqual([]);

    const res = await createTx(withoutKey, key, saleBody(loc));
    expect(res.statusCode, res.body).toBe(201);
    const xml = await record(withoutKey, key, res.json().id);
    expect(tag(xml, 'HashControl')).toBe('1');
    expect(opensslVerifyHash(documentHashMessage(xml, null), tag(xml, 'Hash'), SANDBOX_PRODUCER_PUBLIC_KEY_PEM).ok).toBe(true);
  });
});
