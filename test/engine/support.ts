import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { startTestApp, unlimitedLimiter, openTestDb, type TestApp, type TestAppOptions } from '../support/harness.ts';
import type { Db } from '../../src/store/db.ts';

/**
 * The hosted service an engine talks to: startTestApp listening on 127.0.0.1 (either
 * store, TEST_STORE). `stop()` closes it and keeps its store, `restart()` opens it again
 * on the same port (the network coming back).
 */
export interface LiveService {
  t: TestApp;
  db: Db;
  url: string;
  port: number;
  stop(): Promise<void>;
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startService(opts: Omit<TestAppOptions, 'db' | 'limiter'> = {}): Promise<LiveService> {
  const db = await openTestDb();
  let t = await startTestApp({ ...opts, db, limiter: unlimitedLimiter() });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const port = (t.app.server.address() as AddressInfo).port;
  let up = true;
  const svc: LiveService = {
    get t() { return t; },
    db,
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      if (!up) return;
      up = false;
      await t.close();
    },
    async restart() {
      if (up) return;
      t = await startTestApp({ ...opts, db, limiter: unlimitedLimiter() });
      await t.app.listen({ host: '127.0.0.1', port });
      up = true;
    },
    async close() {
      await svc.stop();
      await db.close();
    },
  };
  return svc;
}

const dirs: string[] = [];
/** A fresh data_dir (removed by cleanupDirs). */
export function tempDir(prefix = 'engine-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
}
export function cleanupDirs(): void {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

/** An envelope call's result, or a test failure naming the error. */
export function ok<T = Record<string, any>>(r: { version: 1; result?: unknown; error?: { code: string; message: string } } | any): T {
  if (!('result' in r)) throw new Error(`engine error: ${JSON.stringify(r.error)}`);
  return r.result as T;
}

/**
 * A live service and a signed-up account for this test file: started before its tests,
 * closed (with the engines' data directories) after them. Read `svc` and `key` inside
 * tests, not at import time.
 */
export function useLiveService(): { readonly svc: LiveService; readonly key: string } {
  const state: { svc?: LiveService; key?: string } = {};
  beforeAll(async () => {
    state.svc = await startService();
    ({ key: state.key } = await state.svc.t.signup());
  });
  afterAll(async () => {
    await state.svc?.close();
    cleanupDirs();
  });
  return {
    get svc() {
      return state.svc!;
    },
    get key() {
      return state.key!;
    },
  };
}
