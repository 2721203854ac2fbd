import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findTypescriptApi, formatDocument } from '../../scripts/generate-sdk.ts';
import { STORE, startTestApp, type TestApp } from '../support/harness.ts';

/**
 * The CI check of the SDK: sdk/ is what scripts/generate-sdk.ts makes from what the
 * service serves now. When a route or schema changes, this fails until the SDK is
 * regenerated (`npm run generate-sdk`) and the result committed.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const SDK = path.join(ROOT, 'sdk');

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

describe('SDK in sync with the service', () => {
  it('sdk/openapi.json is the running service\'s GET /openapi.json, byte for byte as the script writes it', async () => {
    const res = await t.request({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const checkedIn = fs.readFileSync(path.join(SDK, 'openapi.json'), 'utf8');
    expect(JSON.parse(checkedIn), 'sdk/openapi.json is stale: run `npm run generate-sdk`').toEqual(res.json());
    expect(checkedIn).toBe(formatDocument(res.json()));
  });

  // Generation runs once per CI run (the store does not matter to it), in a child process
  // as a developer runs it, from the checked-in document (the test above proves it the
  // service's). The generator needs the TypeScript 5 compiler API (scripts/generate-sdk.ts).
  it.skipIf(STORE !== 'pglite' || !findTypescriptApi())('generation is reproducible: regenerated into a temp dir, every file equals sdk/', async () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-gen-'));
    try {
      await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/generate-sdk.ts', '--from', path.join(SDK, 'openapi.json'), '--out', out], { cwd: ROOT, timeout: 120_000 });
      expect(fs.readFileSync(path.join(out, 'openapi.json'), 'utf8')).toBe(fs.readFileSync(path.join(SDK, 'openapi.json'), 'utf8'));
      const fresh = filesUnder(path.join(out, 'generated'));
      expect(fresh).toEqual(filesUnder(path.join(SDK, 'src', 'generated')));
      expect(fresh).toContain('sdk.gen.ts');
      for (const file of fresh) {
        expect(fs.readFileSync(path.join(out, 'generated', file), 'utf8'), `sdk/src/generated/${file} differs: run \`npm run generate-sdk\``)
          .toBe(fs.readFileSync(path.join(SDK, 'src', 'generated', file), 'utf8'));
      }
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  }, 150_000);

  // The SDK stands alone: no Node types (lib DOM), so it builds for browsers and edge runtimes too.
  it.skipIf(STORE !== 'pglite')('sdk/ typechecks on its own (sdk/tsconfig.json: no Node types)', async () => {
    const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const run = await promisify(execFile)(tsc, ['--noEmit', '-p', path.join(SDK, 'tsconfig.json')], { cwd: ROOT, timeout: 120_000 }).catch((e: { stdout?: string; code?: number }) => e);
    expect((run as { stdout?: string }).stdout ?? '').toBe('');
    expect((run as { code?: number }).code ?? 0).toBe(0);
  }, 150_000);

  // The quickstarts' SDK snippets are real code: each compiles against the SDK's types.
  it.skipIf(STORE !== 'pglite')('every quickstart\'s SDK snippet typechecks against the SDK', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quickstarts-'));
    try {
      const guides = fs.readdirSync(path.join(ROOT, 'docs', 'quickstart')).filter((f) => f.endsWith('.md'));
      expect(guides.length).toBeGreaterThanOrEqual(8);
      for (const guide of guides) {
        const text = fs.readFileSync(path.join(ROOT, 'docs', 'quickstart', guide), 'utf8');
        const snippet = /```ts\n([\s\S]*?)```/.exec(text)?.[1];
        expect(snippet, `${guide} has an SDK snippet`).toBeDefined();
        const code = snippet!.replaceAll("'@fiscal/sdk'", JSON.stringify(path.join(SDK, 'src', 'index.ts')));
        fs.writeFileSync(path.join(dir, guide.replace(/\.md$/, '.ts')), `${code}\nexport {};\n`);
      }
      fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}');
      fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
        compilerOptions: {
          target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules', '@types')], strict: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true,
        },
        include: ['*.ts'],
      }));
      const run = await promisify(execFile)(path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), ['-p', path.join(dir, 'tsconfig.json')], { cwd: dir, timeout: 120_000 })
        .catch((e: { stdout?: string; code?: number }) => e);
      expect((run as { stdout?: string }).stdout ?? '').toBe('');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
