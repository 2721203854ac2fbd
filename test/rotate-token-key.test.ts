import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { STORE, TEST_MASTER_KEY, createTestDatabase } from './support/harness.ts';

/** `main.ts rotate-token-key`: the operator's rotation of the offline-token signing key, as a user runs it. */
const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');
const run = promisify(execFile);

let pgUrl = '';
beforeAll(async () => {
  if (STORE === 'postgres') pgUrl = await createTestDatabase();
});

async function rotate(dataDir: string, ...args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, MASTER_KEY: TEST_MASTER_KEY.toString('hex'), LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  if (STORE === 'postgres') env.DATABASE_URL = pgUrl;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', MAIN, 'rotate-token-key', ...args], { env, timeout: 60_000 });
  return stdout;
}

describe('main rotate-token-key', () => {
  it('makes a new signing key each time; --drop-retired unpublishes the old ones', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rotate-'));
    const kidOf = (out: string) => /signed with key (\S+?)(;|\s*$)/m.exec(out)?.[1];
    const first = kidOf(await rotate(dataDir));
    const second = kidOf(await rotate(dataDir));
    expect(first).toBeTruthy();
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);
    const out = await rotate(dataDir, '--drop-retired');
    const third = kidOf(out);
    expect([first, second]).not.toContain(third);
    const dropped = /unpublished: (.*)$/m.exec(out)?.[1]?.split(', ') ?? [];
    expect(dropped.sort()).toEqual([first, second].sort());
  }, 120_000);
});
