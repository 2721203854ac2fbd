import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyNf525Archive } from '../../src/countries/fr-nf525/archive-verify.ts';
import { saftXmllintValidate } from '../../src/countries/pt-saft/test-tools.ts';
import type { Db } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';
import { openPgliteDb } from '../../src/store/pglite-db.ts';
import { openPostgresDb } from '../../src/store/pg-db.ts';
import { ManualClock, STORE, TEST_MASTER_KEY, createTestDatabase, startTestApp, type TestApp } from '../support/harness.ts';
import { configs, type SystemKey } from '../support/fixtures.ts';
import { createLocation, createTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';
import { HAVE_SCHEMAS, xsdValidate } from '../support/xml-tools.ts';

/**
 * The operator CLI (src/cli) as an operator runs it: `node --import tsx src/main.ts …` as a
 * child process, on the store the server uses (PostgreSQL by DATABASE_URL, or the embedded
 * store in DATA_DIR), seeded through the API (startTestApp on the same store). Each child
 * costs about a second: every run checks many things at once.
 */
const MAIN = path.join(import.meta.dirname, '..', '..', 'src', 'main.ts');
const run = promisify(execFile);

interface Store {
  env: NodeJS.ProcessEnv;
  open(): Promise<Db>;
}

/** Temporary directories of this file, removed at the end. */
const temps: string[] = [];
const tempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
};

async function newStore(): Promise<Store> {
  const base: NodeJS.ProcessEnv = { ...process.env, MASTER_KEY: TEST_MASTER_KEY.toString('hex'), LOG_LEVEL: 'warn' };
  delete base.DATABASE_URL;
  if (STORE === 'postgres') {
    const url = await createTestDatabase();
    return { env: { ...base, DATABASE_URL: url, DATA_DIR: tempDir('cli-') }, open: () => openPostgresDb(url) };
  }
  const dir = tempDir('cli-');
  return {
    env: { ...base, DATA_DIR: dir },
    async open() {
      const db = await openPgliteDb(dir);
      await migrate(db);
      return db;
    },
  };
}

async function cli(store: Store, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: store.env, timeout: 90_000, maxBuffer: 64 << 20 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** SQL on the store between CLI runs (the embedded store belongs to one process at a time). */
async function withDb<T>(store: Store, work: (db: Db) => Promise<T>): Promise<T> {
  const db = await store.open();
  try {
    return await work(db);
  } finally {
    await db.close();
  }
}

const SYSTEMS: SystemKey[] = ['es-ticketbai', 'es-verifactu', 'es-sii', 'it-sdi', 'it-dc', 'fr-nf525', 'pt-saft', 'gr-mydata'];

let store: Store;
const loc: Partial<Record<SystemKey, string>> = {};
/** Second locations, for the deleted record (seq gap) and the reordered pair. */
let gapLoc = '';
let swapLoc = '';
let accountId = '';
let deadJobs: string[] = [];
let otherDead = '';

beforeAll(async () => {
  store = await newStore();
  const db = await store.open();
  const clock = new ManualClock('2026-02-10T10:00:00.000Z');
  let t: TestApp | undefined;
  try {
    t = await startTestApp({ db, clock });
    const signup = await t.signup();
    const key = signup.key;
    accountId = signup.accountId;
    for (const system of SYSTEMS) {
      loc[system] = await createLocation(t, key, system, system === 'it-sdi' ? { country_config: { ...configs.sdi, formato_trasmissione: 'FPA12' } } : {});
    }
    gapLoc = await createLocation(t, key, 'fr-nf525', { name: 'Café Lyon' });
    swapLoc = await createLocation(t, key, 'pt-saft', { name: 'Café Porto' });
    const sale = async (system: SystemKey, location: string, n: number) => {
      const metadata = system === 'it-sdi' ? { ...saleMetadata['it-sdi'], invoice_number: `FT-2026-000${n}`, codice_destinatario: 'UFXYZ1' } : saleMetadata[system];
      const res = await createTx(t!, key, saleBody(location, { ...(metadata ? { metadata } : {}), ...(saleLines[system] ?? {}) }));
      expect(res.statusCode, `${system}: ${res.body}`).toBe(201);
      return res.json().id as string;
    };
    const firsts: Partial<Record<SystemKey, string>> = {};
    for (let n = 1; n <= 2; n++) {
      for (const system of SYSTEMS) {
        const id = await sale(system, loc[system]!, n);
        firsts[system] ??= id;
      }
      await sale('fr-nf525', gapLoc, n);
      await sale('pt-saft', swapLoc, n);
    }
    await t.worker.drain();
    // Cancellations: TicketBAI's stand outside the chain (its annulments sequence), VERI*FACTU's join it.
    for (const system of ['es-ticketbai', 'es-verifactu'] as const) {
      const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${firsts[system]}/cancel`, key });
      expect(cancel.statusCode, cancel.body).toBe(201);
    }
    await t.worker.drain();
    // The next night (02:00 in Paris, 1 March): France's closures and the month's archive.
    clock.set('2026-03-01T01:00:00.000Z');
    const processed = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key });
    expect(processed.statusCode, processed.body).toBe(200);
    // Dead queue entries: two VERI*FACTU submissions and one SII.
    const jobs = async (system: string) => (await db.query<{ id: string }>(
      `SELECT j.id FROM jobs j JOIN transactions t ON t.id = j.transaction_id WHERE t.system = $1 AND j.kind = 'submit' ORDER BY j.created_at`, [system])).rows.map((r) => r.id);
    deadJobs = (await jobs('es-verifactu')).slice(0, 2);
    otherDead = (await jobs('es-sii'))[0]!;
    await db.query(`UPDATE jobs SET status = 'dead', attempt = 5, last_error = 'gave up' WHERE id = ANY($1::uuid[])`, [[...deadJobs, otherDead]]);
  } finally {
    await t?.close();
    await db.close();
  }
}, 180_000);

afterAll(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

const allLocations = () => [...SYSTEMS.map((s) => loc[s]!), gapLoc, swapLoc];

interface Report {
  ok: boolean;
  chains: Array<{ chain_key: string; system: string; records: number; ok: boolean; break?: { seq: number; transaction_id: string | null; kind: string; reason: string } }>;
}

describe('export', () => {
  it('SAF-T valid against the XSD, the NF525 archive verified, records one file each with index.json (XML valid against its XSD)', async () => {
    const dir = tempDir('cli-export-');
    const saftFile = path.join(dir, 'saft.xml');
    const saft = await cli(store, 'export', 'saft', '--location', loc['pt-saft']!, '--period', '2026-02', '--environment', 'test', '--out', saftFile);
    expect(saft.code, saft.stderr).toBe(0);
    const saftBytes = fs.readFileSync(saftFile);
    expect(saftBytes.toString('latin1')).toContain('<InvoiceNo>FS B/2</InvoiceNo>');
    if (HAVE_SCHEMAS) {
      const v = saftXmllintValidate(saftBytes);
      expect(v.ok, v.output).toBe(true);
    }

    const archiveFile = path.join(dir, 'archive.json');
    const archive = await cli(store, 'export', 'archive', '--location', loc['fr-nf525']!, '--latest', '--environment', 'test', '--out', archiveFile);
    expect(archive.code, archive.stderr).toBe(0);
    const archiveBytes = fs.readFileSync(archiveFile);
    const checked = verifyNf525Archive(archiveBytes);
    expect(checked.ok, checked.ok ? '' : checked.message).toBe(true);
    // By its id, to stdout: the same bytes.
    const byId = await cli(store, 'export', 'archive', '--location', loc['fr-nf525']!, '--archive-id', 'monthly-2026-02', '--environment', 'test');
    expect(byId.code, byId.stderr).toBe(0);
    expect(byId.stdout).toBe(archiveBytes.toString('utf8'));

    const out = path.join(dir, 'records');
    const records = await cli(store, 'export', 'records', '--location', loc['es-ticketbai']!, '--from', '2026-02-10', '--to', '2026-02-10', '--out', out);
    expect(records.code, records.stderr).toBe(0);
    const index = JSON.parse(fs.readFileSync(path.join(out, 'index.json'), 'utf8')) as { count: number; records: Array<{ file: string; transaction_id: string; kind: string; seq: number; content_type: string }> };
    expect(index.count).toBe(3);
    // Two invoices of the chain, then the annulment (its own sequence, outside the chain).
    expect(index.records.map((r) => [r.kind, r.seq])).toEqual([['record', 1], ['record', 2], ['cancellation', 1]]);
    await withDb(store, async (db) => {
      for (const r of index.records) {
        expect(r.file).toMatch(/\.xml$/);
        const body = fs.readFileSync(path.join(out, r.file), 'utf8');
        const stored = (await db.query<{ body: string }>('SELECT body FROM fiscal_records WHERE transaction_id = $1', [r.transaction_id])).rows[0]!.body;
        expect(body).toBe(stored);
        if (HAVE_SCHEMAS) {
          const v = xsdValidate(body, r.kind === 'cancellation' ? 'es/ticketbai/anula_ticketbaiv1-2-2.xsd' : 'es/ticketbai/ticketbaiv1-2-2.xsd');
          expect(v.ok, v.output).toBe(true);
        }
      }
    });
  }, 120_000);
});

describe('replay-dead', () => {
  it('a dry run changes nothing; the real run moves exactly the dead entries asked for, back to pending', async () => {
    const statusOf = () => withDb(store, async (db) => (await db.query<{ id: string; status: string; attempt: number }>(
      'SELECT id, status, attempt FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id', [[...deadJobs, otherDead]])).rows);
    // As seeded (beforeAll): all three dead after 5 attempts.
    const before = [...deadJobs, otherDead].sort().map((id) => ({ id, status: 'dead', attempt: 5 }));
    const dry = await cli(store, 'replay-dead', '--account', accountId, '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    for (const id of [...deadJobs, otherDead]) expect(dry.stdout).toContain(`would move ${id}`);
    expect(dry.stdout).toContain('3 dead entries would move to pending');
    expect(await statusOf()).toEqual(before);

    const real = await cli(store, 'replay-dead', '--system', 'es-verifactu');
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toContain('2 dead entries moved to pending');
    const after = new Map((await statusOf()).map((r) => [r.id, r]));
    for (const id of deadJobs) expect(after.get(id)).toMatchObject({ status: 'pending', attempt: 0 });
    expect(after.get(otherDead)).toMatchObject({ status: 'dead', attempt: 5 });
    // Nothing left for that system: exit 1.
    expect((await cli(store, 'replay-dead', '--system', 'es-verifactu', '--dry-run')).code).toBe(1);
  }, 60_000);
});

describe('keys create, exit codes', () => {
  it('a first key on a fresh store works against the API; usage and configuration errors exit 2 and 78', async () => {
    const fresh = await newStore();
    const created = await cli(fresh, 'keys', 'create', '--new-account', 'Ops SL', '--email', 'ops@example.com');
    expect(created.code, created.stderr).toBe(0);
    const k = JSON.parse(created.stdout) as { account_id: string; key: string; environment: string };
    expect(k).toMatchObject({ environment: 'test', key: expect.stringMatching(/^svc_test_/) });
    const db = await fresh.open();
    const t = await startTestApp({ db });
    try {
      const res = await t.request({ method: 'GET', url: '/v1/account/status', key: k.key });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().account_id).toBe(k.account_id);
    } finally {
      await t.close();
      await db.close();
    }
    const usage = await cli(fresh, 'verify-chain');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('give either --location <id> or --issuer <tax_id>');
    expect((await cli(fresh, 'export', 'saft', '--location', loc['pt-saft']!)).code).toBe(2); // --period missing
    const config = await cli({ ...fresh, env: { ...fresh.env, MASTER_KEY: 'not-a-key' } }, 'migrate');
    expect(config.code).toBe(78);
    expect(config.stderr).toContain('configuration error: MASTER_KEY');
  }, 60_000);

  it('failures are one line on stderr with their code, never a stack trace; sign-up\'s rules for a new account', async () => {
    const STACK_FRAME = /^\s+at /m;
    // A store that cannot be reached is a configuration error (78), whatever the command.
    const down = await cli({ ...store, env: { ...store.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/fiscal' } }, 'migrate');
    expect(down.code).toBe(78);
    expect(down.stderr.trim()).toMatch(/^configuration error: the store cannot be used \(DATABASE_URL\): .*ECONNREFUSED/);
    expect(down.stderr).not.toMatch(STACK_FRAME);
    // An --out that cannot be written: exit 1, the reason, nothing else.
    const file = path.join(tempDir('cli-out-'), 'taken');
    fs.writeFileSync(file, 'not a directory');
    const out = await cli(store, 'export', 'records', '--location', loc['es-ticketbai']!, '--from', '2026-02-10', '--to', '2026-02-10', '--out', file);
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toMatch(/^error: EEXIST: file already exists, mkdir '.*taken'$/);
    expect(out.stderr).not.toMatch(STACK_FRAME);
    // A blank account name is refused as the API refuses it (nothing created).
    const blank = await cli(store, 'keys', 'create', '--new-account', '   ', '--email', 'blank@example.com');
    expect(blank.code).toBe(2);
    expect(blank.stderr).toContain('the account name must be 1-100 characters (not blank).');
    expect(await withDb(store, async (db) => (await db.query('SELECT 1 FROM accounts WHERE billing_email = $1', ['blank@example.com'])).rows.length)).toBe(0);
  }, 60_000);

  it('verify-chain: a location named twice is checked once; only the unknown one is named as not found', async () => {
    const known = loc['es-sii']!;
    const twice = await cli(store, 'verify-chain', '--json', '--location', known, '--location', known.toUpperCase());
    expect(twice.code, twice.stderr).toBe(0);
    expect(JSON.parse(twice.stdout)).toMatchObject({ ok: true, locations: 1 });
    const unknown = '00000000-0000-4000-8000-000000000001';
    const oneMissing = await cli(store, 'verify-chain', '--location', known, '--location', unknown);
    expect(oneMissing.code).toBe(1);
    expect(oneMissing.stderr.trim().split('\n').at(-1)).toBe(`location not found: ${unknown}`);
  }, 60_000);
});

describe('verify-chain', () => {
  it('passes on intact locations (every system, NF525 closures and JET), then names the first break of each tampered chain', async () => {
    const intact = await cli(store, 'verify-chain', '--json', '--location', ...allLocations());
    expect(intact.code, intact.stderr + intact.stdout).toBe(0);
    const good = JSON.parse(intact.stdout) as Report;
    expect(good.ok).toBe(true);
    const systems = new Set(good.chains.map((c) => c.system));
    expect([...systems].sort()).toEqual([...SYSTEMS].sort());
    expect(good.chains.find((c) => c.system === 'es-ticketbai' && c.chain_key.endsWith('#annulments'))).toMatchObject({ records: 1, ok: true });
    expect(good.chains.find((c) => c.system === 'es-verifactu')).toMatchObject({ records: 3, ok: true });
    // France: the records, the daily/monthly closures and the JET, each its own chain.
    const fr = good.chains.filter((c) => c.chain_key.includes(loc['fr-nf525']!)).map((c) => c.chain_key);
    expect(fr.some((k) => k.includes(':closures:'))).toBe(true);
    expect(fr.some((k) => k.includes(':jet:'))).toBe(true);
    expect(intact.stderr).toMatch(/verifying records: \d+\/\d+/); // plain progress lines: stderr is not a terminal

    // Tamper: one record of each system's chain, by SQL, as an attacker with the database would.
    const tampered = await withDb(store, async (db) => {
      const rowOf = async (chainLike: string, seq: number) => (await db.query<{ id: string; transaction_id: string | null; body: string; chain_key: string }>(
        `SELECT id, transaction_id, body, chain_key FROM fiscal_records WHERE chain_key LIKE $1 AND chain_key NOT LIKE '%#annulments' AND seq = $2`, [chainLike, seq])).rows[0]!;
      const setBody = (id: string, body: string) => db.query('UPDATE fiscal_records SET body = $2 WHERE id = $1', [id, body]);
      const edits: Record<string, { seq: number; tx: string | null; kind: string; chain: string }> = {};
      const edit = async (name: string, chainLike: string, seq: number, kind: string, change: (body: string) => string) => {
        const r = await rowOf(chainLike, seq);
        const changed = change(r.body);
        expect(changed, name).not.toBe(r.body);
        await setBody(r.id, changed);
        edits[name] = { seq, tx: r.transaction_id, kind, chain: r.chain_key };
      };
      const acct = `%${accountId}%`;
      await edit('ticketbai', `es-ticketbai:${acct}`, 2, 'body_changed', (b) => b.replace(/<ImporteTotalFactura>[^<]+</, '<ImporteTotalFactura>1.00<'));
      await edit('verifactu', `es-verifactu:${acct}`, 2, 'body_changed', (b) => b.replace(/<sf:ImporteTotal>[^<]+</, '<sf:ImporteTotal>1.00<'));
      await edit('sdi', `it-sdi:${loc['it-sdi']}:%`, 2, 'body_changed', (b) => b.replace(/<ImportoTotaleDocumento>[^<]+</, '<ImportoTotaleDocumento>1.00<'));
      // The DC seal's signature value: one base64 character changed.
      await edit('dc', `it-dc:${loc['it-dc']}:%`, 2, 'signature_invalid', (b) => b.replace(/(<ds:SignatureValue[^>]*>)(.)/, (_m, tag: string, c: string) => `${tag}${c === 'A' ? 'B' : 'A'}`));
      await edit('nf525', `fr-nf525:${loc['fr-nf525']}:default`, 2, 'signature_invalid', (b) => b.replace(/"incl_tax":(\d+)/, (_m, n: string) => `"incl_tax":${Number(n) + 100}`));
      await edit('closure', `fr-nf525:${loc['fr-nf525']}:default:closures:test`, 1, 'signature_invalid', (b) => b.replace(/"count":\s*(\d+)/, (_m, n: string) => `"count": ${Number(n) + 1}`));
      await edit('jet', `fr-nf525:${loc['fr-nf525']}:jet:test`, 1, 'body_changed', (b) => b.replace(/"event":\s*"([^"]+)"/, '"event": "archive"'));
      await edit('saft', `pt-saft:${loc['pt-saft']}:%`, 2, 'signature_invalid', (b) => b.replace(/<GrossTotal>[^<]+</, '<GrossTotal>1.00<'));
      await edit('mydata', `gr-mydata:${acct}`, 2, 'body_changed', (b) => b.replace(/<issueDate>[^<]+</, '<issueDate>2026-01-01<'));
      // SII records carry no fingerprint nor signature: what can break is the sequence (a deleted record).
      const sii = await rowOf(`es-sii:${loc['es-sii']}:%`, 1);
      await db.query('DELETE FROM fiscal_records WHERE id = $1', [sii.id]);
      const sii2 = await rowOf(`es-sii:${loc['es-sii']}:%`, 2);
      edits.sii = { seq: 2, tx: sii2.transaction_id, kind: 'seq_gap', chain: sii2.chain_key };
      // NF525 (second location): its first record deleted.
      const gap = await rowOf(`fr-nf525:${gapLoc}:default`, 1);
      await db.query('DELETE FROM fiscal_records WHERE id = $1', [gap.id]);
      const gap2 = await rowOf(`fr-nf525:${gapLoc}:default`, 2);
      edits.gap = { seq: 2, tx: gap2.transaction_id, kind: 'seq_gap', chain: gap2.chain_key };
      // SAF-T (second location): documents 1 and 2 swapped.
      const one = await rowOf(`pt-saft:${swapLoc}:%`, 1);
      const two = await rowOf(`pt-saft:${swapLoc}:%`, 2);
      await db.query('UPDATE fiscal_records SET seq = -1 WHERE id = $1', [one.id]);
      await db.query('UPDATE fiscal_records SET seq = 1 WHERE id = $1', [two.id]);
      await db.query('UPDATE fiscal_records SET seq = 2 WHERE id = $1', [one.id]);
      edits.swap = { seq: 1, tx: two.transaction_id, kind: 'link_broken', chain: two.chain_key };
      return edits;
    });

    const broken = await cli(store, 'verify-chain', '--json', '--environment', 'test', '--location', ...allLocations());
    expect(broken.code, broken.stderr).toBe(1);
    const report = JSON.parse(broken.stdout) as Report;
    expect(report.ok).toBe(false);
    for (const [name, e] of Object.entries(tampered)) {
      const chain = report.chains.find((c) => c.chain_key === e.chain);
      expect(chain, name).toBeDefined();
      expect({ name, ok: chain!.ok, seq: chain!.break?.seq, tx: chain!.break?.transaction_id, kind: chain!.break?.kind }).toEqual({ name, ok: false, seq: e.seq, tx: e.tx, kind: e.kind });
    }
    // Only the tampered chains are broken.
    expect(report.chains.filter((c) => !c.ok).map((c) => c.chain_key).sort()).toEqual(Object.values(tampered).map((e) => e.chain).sort());

    // The text report (an issuer: every Spanish location of the tax id) names chain, seq, transaction and reason.
    const text = await cli(store, 'verify-chain', '--issuer', 'B12345674');
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`BROKEN  ${tampered.verifactu!.chain} (es-verifactu, test) at seq 2, transaction ${tampered.verifactu!.tx}: body_changed: fingerprint mismatch`);
    expect(text.stdout).toMatch(/chains broken$/m);
  }, 120_000);
});
