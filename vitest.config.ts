import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Three projects:
 * - unit: pure tests next to the code they test (src/**\/*.test.ts);
 * - pglite / postgres: the API and store tests under test/, run once on each store.
 *   The postgres project creates a fresh database per run (test/setup/postgres.ts).
 * TEST_STORES=pglite skips the PostgreSQL run (a machine without PostgreSQL).
 */
const stores = (process.env.TEST_STORES ?? 'pglite,postgres').split(',').map((s) => s.trim());

/**
 * Test files under test/ that neither open the test store themselves nor name it run in
 * the first store project only: the embedded engine's tests (the engine under test keeps
 * everything in its own PGlite data directory, whatever the store; the hosted service it
 * asks for a token, through test/engine/support.ts, is tested on both stores by
 * test/api), and the SDK's retry test (a local HTTP server, no store). Run in both
 * projects they tested the same thing twice (~1 min of CI). Found by reading the files:
 * a test that opens the store (startTestApp, openTestDb) or names it (STORE) runs on both
 * without anyone listing it.
 */
const OPENS_THE_STORE = /startTestApp|openTestDb|createTestDatabase|TEST_STORE|\bSTORE\b/;
const storeFree = fs
  .readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts') && !OPENS_THE_STORE.test(fs.readFileSync(path.join('test', f), 'utf8')))
  .map((f) => path.posix.join('test', f.split(path.sep).join('/')));

export default defineConfig({
  test: {
    // At least two test files at once, also on a 2-core machine (vitest's default there is
    // one): the API tests spend much of their time waiting on PostgreSQL's fsync, child
    // processes and local HTTP servers. Measured on 2 cores: 14 min 20 s one at a time,
    // 10 min 4 s two at a time, the same tests passing.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          environment: 'node',
          // As the API projects: a CPU-bound unit test (dates.test.ts checks 5,000 instants
          // against ICU) ran past vitest's default 5 s while CI's two cores ran the API files.
          testTimeout: 30_000,
        },
      },
      ...stores.map((store, i) => ({
        test: {
          name: store,
          include: ['test/**/*.test.ts'],
          exclude: i === 0 ? [] : storeFree,
          environment: 'node',
          // One module graph per worker, not per file: importing the service again for every
          // file was ~550 s of a 1,350 s run on 2 cores. Each file still builds its own app,
          // store and clock (test/support/harness.ts); nothing of the service keeps state at
          // module level that a file could see of another's.
          isolate: false,
          env: { TEST_STORE: store },
          globalSetup: store === 'postgres' ? ['./test/setup/postgres.ts'] : [],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      })),
    ],
  },
});
