/**
 * The operator's tools (docs/cli.md): verify-chain, export, replay-dead, keys create. Each
 * opens the configured store (store.ts) and works through the same services the HTTP API
 * uses, as a root caller of the location's own account (an operator is trusted with every
 * account of their installation). Results go to stdout, progress and logs to stderr.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createAccountTiers } from '../services/account-tiers.ts';
import { ApiError } from '../core/errors.ts';
import { SYSTEMS } from '../countries/registry.ts';
import { createAccountService } from '../services/accounts.ts';
import { createApiKeyService } from '../services/api-keys.ts';
import type { AuthContext } from '../services/auth-context.ts';
import type { Runtime } from '../runtime.ts';
import type { Db } from '../store/db.ts';
import { EXIT, ExitError, failed, usageError } from './exit.ts';
import { createProgress } from './progress.ts';
import { openStore, withRuntime, type Store } from './store.ts';
import { verifyChains } from './verify-chain.ts';

type Environment = 'test' | 'live';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkUuid(name: string, value: string): string {
  if (!UUID.test(value)) throw usageError(`${name} must be a UUID`);
  return value.toLowerCase();
}

/** Opens the store quietly (warnings only, on stderr), runs `work`, closes it. */
async function onStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ logLevel: 'warn' });
  try {
    return await work(store);
  } finally {
    await store.db.close();
  }
}

/** A root caller of the location's account: what the HTTP routes would see for its root key. */
async function ownerOf(db: Db, locationId: string, environment: Environment): Promise<AuthContext> {
  const row = (await db.query<{ account_id: string }>('SELECT account_id FROM locations WHERE id = $1 AND deleted_at IS NULL', [locationId])).rows[0];
  if (!row) throw failed(`location ${locationId} not found`);
  return { accountId: row.account_id, keyId: 'cli', environment, permissions: null, accountStatus: 'active' };
}

/** The services' 404 is "nothing found" (exit 1); their 400 a usage error (exit 2). */
async function asExit<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError) throw new ExitError(err.status === 404 ? EXIT.failed : err.status === 400 ? EXIT.usage : EXIT.failed, err.message);
    throw err;
  }
}

function writeOut(out: string | undefined, body: string | Buffer): void {
  if (out) {
    fs.writeFileSync(out, body);
    process.stderr.write(`wrote ${out} (${Buffer.byteLength(body)} bytes)\n`);
  } else process.stdout.write(body);
}

// ---- verify-chain ---------------------------------------------------------------------

export async function verifyChainCommand(opts: { location?: string[]; issuer?: string; environment?: Environment; json?: boolean }): Promise<number> {
  if ((opts.location === undefined) === (opts.issuer === undefined)) throw usageError('give either --location <id> or --issuer <tax_id>');
  // An empty tax id is a typo (an unset shell variable), not a search that finds nothing.
  if (opts.issuer !== undefined && opts.issuer.trim() === '') throw usageError('--issuer must not be empty');
  // A location named twice is checked once.
  const locationIds = opts.location ? [...new Set(opts.location.map((l) => checkUuid('--location', l)))] : undefined;
  return onStore((store) =>
    withRuntime(store, async (rt) => {
      const result = await verifyChains(
        {
          db: store.db, systems: SYSTEMS, software: rt.software, toFiscal: rt.locations.toFiscal,
          signingKey: (location, environment) => rt.signingKeys.forRecordIfNamed(location, environment, 'authority'),
        },
        { locationIds, issuer: opts.issuer, environment: opts.environment },
        createProgress(),
      );
      const missing = locationIds?.filter((id) => !result.locationIds.includes(id)) ?? [];
      if (missing.length > 0) throw failed(`location not found: ${missing.join(', ')}`);
      if (result.locations === 0) throw failed(`no location has tax id ${opts.issuer}`);
      const broken = result.chains.filter((c) => !c.ok);
      if (opts.json) {
        console.log(JSON.stringify({ ok: broken.length === 0, locations: result.locations, chains: result.chains }, null, 2));
      } else {
        for (const c of result.chains) {
          if (c.ok) console.log(`ok      ${c.chain_key} (${c.system}, ${c.environment}): ${c.records} records`);
          else {
            const b = c.break!;
            console.log(`BROKEN  ${c.chain_key} (${c.system}, ${c.environment}) at seq ${b.seq}, transaction ${b.transaction_id ?? '(none)'}: ${b.kind}: ${b.reason}`);
          }
        }
        const records = result.chains.reduce((n, c) => n + c.records, 0);
        console.log(broken.length === 0 ? `verified ${result.chains.length} chains, ${records} records: no break` : `${broken.length} of ${result.chains.length} chains broken`);
      }
      return broken.length === 0 ? EXIT.ok : EXIT.failed;
    }),
  );
}

// ---- export ---------------------------------------------------------------------------

export async function exportSaftCommand(opts: { location: string; period: string; environment: Environment; out?: string }): Promise<void> {
  const locationId = checkUuid('--location', opts.location);
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.period)) throw usageError('--period must be a month in the form YYYY-MM');
  await onStore((store) =>
    withRuntime(store, async (rt) => {
      const auth = await ownerOf(store.db, locationId, opts.environment);
      const file = await asExit(() => rt.locationFiles.produce(auth, locationId, 'saft', { period: opts.period }));
      writeOut(opts.out, file.body);
    }),
  );
}

export async function exportArchiveCommand(opts: { location: string; archiveId?: string; latest?: boolean; environment: Environment; out?: string }): Promise<void> {
  const locationId = checkUuid('--location', opts.location);
  if ((opts.archiveId === undefined) === (opts.latest !== true)) throw usageError('give either --archive-id <id> or --latest');
  await onStore((store) =>
    withRuntime(store, async (rt) => {
      const auth = await ownerOf(store.db, locationId, opts.environment);
      let id = opts.archiveId;
      if (id === undefined) {
        // The location files' archive list is newest first (the plug-in's locationFiles).
        const list = await asExit(() => rt.locationFiles.produce(auth, locationId, 'archives', { limit: '1', offset: '0' }));
        id = (JSON.parse(String(list.body)) as { data: Array<{ id: string }> }).data[0]?.id;
        if (id === undefined) throw failed(`location ${locationId} has no archive (${opts.environment})`);
      }
      const file = await asExit(() => rt.locationFiles.produceItem(auth, locationId, 'archives', id));
      writeOut(opts.out, file.body);
    }),
  );
}

const EXTENSIONS: Readonly<Record<string, string>> = { 'application/xml': 'xml', 'application/json': 'json' };

export async function exportRecordsCommand(opts: { location: string; from: string; to: string; out: string; environment?: Environment }): Promise<number> {
  const locationId = checkUuid('--location', opts.location);
  const day = (name: string, v: string) => {
    const d = /^\d{4}-\d{2}-\d{2}$/.test(v) ? new Date(`${v}T00:00:00Z`) : new Date(Number.NaN);
    if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v) throw usageError(`${name} must be a date in the form YYYY-MM-DD`);
    return d;
  };
  const from = day('--from', opts.from);
  const to = new Date(day('--to', opts.to).getTime() + 86_400_000);
  if (to <= from) throw usageError('--to must not be before --from');
  return onStore((store) =>
    withRuntime(store, async (rt) => {
      const auth = await ownerOf(store.db, locationId, 'test');
      const txs = (await store.db.query<{ id: string; environment: Environment; type: string; status: string; created_at: Date }>(
        `SELECT id, environment, type, status, created_at FROM transactions
          WHERE location_id = $1 AND created_at >= $2 AND created_at < $3 AND ($4::text IS NULL OR environment = $4)
          ORDER BY created_at, id`,
        [locationId, from, to, opts.environment ?? null],
      )).rows;
      fs.mkdirSync(opts.out, { recursive: true });
      const progress = createProgress();
      progress.start(txs.length, 'exporting records');
      const index: Record<string, unknown>[] = [];
      for (const t of txs) {
        // The route's service (GET /v1/transactions/{id}/fiscal-record).
        const r = await rt.transactions.fiscalRecord({ ...auth, environment: t.environment }, t.id).catch((err: unknown) => {
          if (err instanceof ApiError && err.status === 404) return undefined; // no record (refused at creation)
          throw err;
        });
        progress.tick();
        if (!r) continue;
        const ext = EXTENSIONS[r.content_type] ?? 'txt';
        const file = `${t.created_at.toISOString().slice(0, 10)}_${t.id}.${ext}`;
        fs.writeFileSync(path.join(opts.out, file), r.body);
        index.push({
          file, transaction_id: t.id, environment: t.environment, type: t.type, status: t.status, system: r.system, kind: r.kind,
          chain_key: r.chain_key, seq: Number(r.seq), fiscal_id: r.fiscal_id, document_number: r.document_number, fingerprint: r.fingerprint,
          content_type: r.content_type, placeholder: r.placeholder, created_at: t.created_at.toISOString(),
        });
      }
      progress.stop();
      const summary = { location_id: locationId, from: opts.from, to: opts.to, environment: opts.environment ?? null, count: index.length, records: index };
      fs.writeFileSync(path.join(opts.out, 'index.json'), `${JSON.stringify(summary, null, 2)}\n`);
      console.log(`${index.length} records written to ${opts.out}`);
      return index.length === 0 ? EXIT.failed : EXIT.ok;
    }),
  );
}

// ---- replay-dead ----------------------------------------------------------------------

export async function replayDeadCommand(opts: { account?: string; system?: string; dryRun?: boolean }): Promise<number> {
  const account = opts.account !== undefined ? checkUuid('--account', opts.account) : null;
  if (opts.system !== undefined && !SYSTEMS.some((s) => s.key === opts.system)) throw usageError(`--system must be one of ${SYSTEMS.map((s) => s.key).join(', ')}`);
  return onStore(async ({ db }) => {
    const dead = (await db.query<{ id: string; kind: string; account_id: string | null; transaction_id: string | null; system: string | null; attempt: number; last_error: string | null }>(
      `SELECT j.id, j.kind, j.account_id, j.transaction_id, t.system, j.attempt, j.last_error
         FROM jobs j LEFT JOIN transactions t ON t.id = j.transaction_id
        WHERE j.status = 'dead' AND ($1::uuid IS NULL OR j.account_id = $1) AND ($2::text IS NULL OR t.system = $2)
        ORDER BY j.created_at, j.id`,
      [account, opts.system ?? null],
    )).rows;
    const progress = createProgress();
    progress.start(dead.length, opts.dryRun ? 'dead entries (dry run)' : 'replaying dead entries');
    let moved = 0;
    for (const j of dead) {
      if (!opts.dryRun) {
        // Back to pending, attempts reset, due now; only while still dead (another operator may have moved it).
        const now = new Date();
        const r = await db.query(
          `UPDATE jobs SET status = 'pending', attempt = 0, run_at = $2, locked_by = NULL, locked_until = NULL, updated_at = $2
            WHERE id = $1 AND status = 'dead'`,
          [j.id, now],
        );
        if ((r.rowCount ?? 0) === 0) {
          progress.tick();
          continue;
        }
      }
      moved++;
      progress.tick();
      console.log(`${opts.dryRun ? 'would move' : 'moved'} ${j.id} ${j.kind}${j.system ? ` ${j.system}` : ''}${j.transaction_id ? ` transaction ${j.transaction_id}` : ''} (attempts ${j.attempt}${j.last_error ? `, last error: ${j.last_error}` : ''})`);
    }
    progress.stop();
    console.log(`${moved} dead ${moved === 1 ? 'entry' : 'entries'} ${opts.dryRun ? 'would move' : 'moved'} to pending`);
    return moved === 0 ? EXIT.failed : EXIT.ok;
  });
}

// ---- keys create ----------------------------------------------------------------------

export async function keysCreateCommand(opts: { account?: string; newAccount?: string; email?: string; environment: Environment }): Promise<void> {
  if ((opts.account === undefined) === (opts.newAccount === undefined)) throw usageError('give either --account <id> or --new-account <name> --email <email>');
  if (opts.newAccount !== undefined && !opts.email) throw usageError('--new-account needs --email <email>');
  if (opts.account !== undefined && opts.email !== undefined) throw usageError('--email goes with --new-account: an existing account keeps its billing email');
  await onStore((store) =>
    withRuntime(store, async (rt: Runtime) => {
      const deps = rt.deps;
      const apiKeys = createApiKeyService(deps);
      let accountId: string;
      let key: { id: string; key: string; environment: string };
      if (opts.newAccount !== undefined) {
        const accounts = createAccountService(deps, apiKeys, createAccountTiers(deps));
        const created = await asExit(() => accounts.create({ name: opts.newAccount!, billing_email: opts.email! }));
        accountId = created.account.id;
        key = created.api_key;
        // Sign-up gives a test key; a live root key is issued beside it when asked for.
        if (opts.environment === 'live') key = await apiKeys.issue(deps.db, accountId, 'Root live key (CLI)', 'live', null);
      } else {
        accountId = checkUuid('--account', opts.account!);
        const exists = (await deps.db.query('SELECT 1 FROM accounts WHERE id = $1', [accountId])).rows.length > 0;
        if (!exists) throw failed(`account ${accountId} not found`);
        key = await apiKeys.issue(deps.db, accountId, `Root ${opts.environment} key (CLI)`, opts.environment, null);
      }
      process.stderr.write('the key is shown once: store it now\n');
      console.log(JSON.stringify({ account_id: accountId, key_id: key.id, environment: key.environment, key: key.key }));
    }),
  );
}
