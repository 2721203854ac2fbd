import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentHashMessage, verifyHash } from '../../src/countries/pt-saft/signature.ts';
import { SANDBOX_PRODUCER_PUBLIC_KEY_PEM } from '../../src/countries/pt-saft/sandbox-key.ts';
import { locationBodies } from '../support/fixtures.ts';
import { STORE } from '../support/harness.ts';
import { cafeSale, eventually, jsonClient, localEnv, startChild, verifactuLocation } from './local-client.ts';

/*
 * The single executable of the local host (scripts/sea/build.sh → dist/fiscal-local):
 * built once (the script skips the build when its inputs' hash is unchanged; about 5 s
 * otherwise), copied alone into an empty folder (so nothing beside it, no node_modules,
 * can stand in for what it embeds), started on a fresh data directory and a free port.
 * One build and one binary whatever the store: the pglite project only.
 */
const ROOT = path.join(import.meta.dirname, '..', '..');
const BUILD = path.join(ROOT, 'scripts', 'sea', 'build.sh');

describe.runIf(STORE === 'pglite')('dist/fiscal-local (single executable)', () => {
  let exe: string;
  let dir: string;

  beforeAll(() => {
    execFileSync(BUILD, { cwd: ROOT, stdio: 'pipe', timeout: 180_000 });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fiscal-exe-'));
    exe = path.join(dir, 'fiscal-local');
    fs.copyFileSync(path.join(ROOT, 'dist', 'fiscal-local'), exe);
    fs.chmodSync(exe, 0o755);
  }, 200_000);
  // A copy of the executable and a data directory: 160 MB a run.
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('prints its version', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(execFileSync(exe, ['--version'], { cwd: dir, env: localEnv(dir) }).toString().trim()).toBe(pkg.version);
  });

  it('starts on a fresh data directory and answers /health, sign-up, a location and a sale, from a folder of its own', async () => {
    const dataDir = path.join(dir, 'data');
    const host = await startChild(exe, [], localEnv(dataDir), { cwd: dir });
    try {
      expect(host.output()).toContain(`data in ${dataDir}`);
      const api = jsonClient(host.url);
      expect((await api.get('/health')).body).toEqual({ status: 'ok', store: 'pglite', database: 'ok' });
      const { key } = await api.signup('Exe SL');
      const loc = await api.post('/v1/locations', verifactuLocation(), key);
      expect(loc.status, JSON.stringify(loc.body)).toBe(201);
      const tx = await api.post('/v1/transactions', cafeSale(loc.body.id), key);
      expect(tx.status, JSON.stringify(tx.body)).toBe(201);
      const done = await eventually(async () => {
        const r = await api.get(`/v1/transactions/${tx.body.id}`, key);
        return r.body.status === 'success' ? r.body : undefined;
      });
      expect(done.id).toBe(tx.body.id);
      // The fiscal record was built and chained as by `npm run local` (the same core).
      const record = await fetch(`${host.url}/v1/transactions/${tx.body.id}/fiscal-record`, { headers: { authorization: `Bearer ${key}` } });
      expect(record.status).toBe(200);
      expect(await record.text()).toContain('B12345674');
      // A Portuguese burst: the documents' Hashes are made on the signing thread
      // (signing/chain-signer.ts), started from the executable's one bundled file.
      const ptBody = locationBodies['pt-saft'];
      const pt = await api.post('/v1/locations', { ...ptBody, country_config: { ...ptBody.country_config, series: { FS: { prefix: 'A', atcud_code: 'AAJFJMVNTN' } } } }, key);
      expect(pt.status, JSON.stringify(pt.body)).toBe(201);
      const ptSale = cafeSale(pt.body.id, { items: [{ description: 'Café', quantity: 1, unit_price: 200, tax_rate: 23 }], pretax_amount: 200, tax_amount: 46, total_amount: 246 });
      const burst = await Promise.all(Array.from({ length: 6 }, () => api.post('/v1/transactions', ptSale, key)));
      for (const b of burst) expect(b.status, JSON.stringify(b.body)).toBe(201);
      const xmls = await Promise.all(burst.map(async (b) => (await fetch(`${host.url}/v1/transactions/${b.body.id}/fiscal-record`, { headers: { authorization: `Bearer ${key}` } })).text()));
      const tag = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)![1]!;
      let previous: string | null = null;
      for (const xml of xmls.sort((a, b) => Number(tag(a, 'InvoiceNo').split('/')[1]) - Number(tag(b, 'InvoiceNo').split('/')[1]))) {
        expect(verifyHash(documentHashMessage(xml, previous), tag(xml, 'Hash'), SANDBOX_PRODUCER_PUBLIC_KEY_PEM)).toBe(true);
        previous = tag(xml, 'Hash');
      }
      // Signed there, not by the inline fallback (which logs why it was needed).
      expect(host.output()).not.toContain('signing thread');
      // The /docs page's files come out of the executable too.
      expect((await fetch(`${host.url}/docs/static/swagger-ui.css`)).status).toBe(200);
    } finally {
      expect(await host.stop()).toBe(0);
    }
    expect(fs.existsSync(path.join(dataDir, 'master.key'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'PG_VERSION')) || fs.readdirSync(dataDir).length > 1).toBe(true);
  }, 150_000);
});
