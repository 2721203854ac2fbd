import { defineConfig } from 'vitest/config';

/**
 * Three projects:
 * - unit: pure tests next to the code they test (src/**\/*.test.ts);
 * - pglite / postgres: the API and store tests under test/, run once on each store.
 *   The postgres project creates a fresh database per run (test/setup/postgres.ts).
 * TEST_STORES=pglite skips the PostgreSQL run (a machine without PostgreSQL).
 */
const stores = (process.env.TEST_STORES ?? 'pglite,postgres').split(',').map((s) => s.trim());

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          environment: 'node',
        },
      },
      ...stores.map((store) => ({
        test: {
          name: store,
          include: ['test/**/*.test.ts'],
          environment: 'node',
          env: { TEST_STORE: store },
          globalSetup: store === 'postgres' ? ['./test/setup/postgres.ts'] : [],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      })),
    ],
  },
});
