import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPgliteDb } from '../../src/store/pglite-db.ts';
import { STORE } from '../support/harness.ts';

/**
 * The embedded store is what POS devices run: an acknowledged fiscal record must be on
 * disk when the commit returns. These tests trace the real syscalls with strace.
 * They concern PGlite only, so they run in the pglite project.
 */
const CHILD = path.join(import.meta.dirname, 'durability-child.ts');
const COMMITS = 40;

function hasStrace(): boolean {
  return spawnSync('strace', ['-V']).status === 0;
}

/** Runs the child under strace; returns the sync syscalls seen between the markers. */
function traceCommits(mode: 'durable' | 'stock') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pglite-${mode}-`));
  const log = path.join(dir, 'strace.log');
  try {
    execFileSync('strace', [
      '-f', '-y', '-qq', '-o', log, '-e', 'trace=fsync,fdatasync,sync_file_range,write',
      process.execPath, '--import', 'tsx', CHILD, mode, path.join(dir, 'data'), String(COMMITS),
    ], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    const lines = fs.readFileSync(log, 'utf8').split('\n');
    const start = lines.findIndex((l) => l.includes('DURABILITY-START'));
    const end = lines.findIndex((l) => l.includes('DURABILITY-END'));
    expect(start, 'start marker traced').toBeGreaterThan(-1);
    expect(end, 'end marker traced').toBeGreaterThan(start);
    const window = lines.slice(start, end);
    const syncs = window.filter((l) => /\b(fsync|fdatasync|sync_file_range)\(/.test(l));
    const acks = window.filter((l) => /write\(1<[^>]*>, "ACK \d+/.test(l) || /write\(1, "ACK \d+/.test(l));
    return { syncs, walSyncs: syncs.filter((l) => l.includes('/pg_wal/')), window, acks };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe.runIf(STORE === 'pglite')('embedded store durability (strace)', () => {
  it('strace is installed (apt-get install strace)', () => {
    expect(hasStrace()).toBe(true);
  });

  it('PGlite as shipped issues no sync syscall on commit (the problem this fixes)', () => {
    const { syncs } = traceCommits('stock');
    expect(syncs).toHaveLength(0);
  }, 180_000);

  it('our store fsyncs the WAL on every commit, before the commit is acknowledged', () => {
    const { walSyncs, window } = traceCommits('durable');
    expect(walSyncs.length).toBeGreaterThanOrEqual(COMMITS);
    // Order: each "ACK n" written to stdout is preceded by a WAL fsync after the previous ACK.
    let syncedSinceAck = false;
    let acks = 0;
    for (const line of window) {
      if (line.includes('/pg_wal/') && /\bfsync\(/.test(line) && / = 0$/.test(line.trim())) syncedSinceAck = true;
      if (/write\(1(<[^>]*>)?, "ACK \d+/.test(line)) {
        expect(syncedSinceAck, `WAL fsync before ack ${acks + 1}`).toBe(true);
        syncedSinceAck = false;
        acks++;
      }
    }
    expect(acks).toBe(COMMITS);
  }, 180_000);

  it('every acknowledged commit survives SIGKILL of the process', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pglite-kill-'));
    const data = path.join(dir, 'data');
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'durable', data, '100000'], {
        env: { ...process.env, HOLD_OPEN: '1' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let acked = 0;
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          for (const m of chunk.toString().matchAll(/ACK (\d+)/g)) acked = Math.max(acked, Number(m[1]));
          if (acked >= 50) {
            child.kill('SIGKILL');
            resolve();
          }
        });
      });
      await new Promise((r) => child.once('exit', r));
      const db = await openPgliteDb(data);
      const rows = await db.query<{ n: number; max: number }>('SELECT count(*)::int AS n, max(n)::int AS max FROM receipts');
      await db.close();
      expect(rows.rows[0]!.n).toBeGreaterThanOrEqual(acked);
      expect(rows.rows[0]!.max).toBe(rows.rows[0]!.n); // no gaps
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe.runIf(STORE !== 'pglite')('embedded store durability', () => {
  it('runs in the pglite project only (it traces PGlite, not the PostgreSQL server)', () => {
    expect(STORE).toBe('postgres');
  });
});
