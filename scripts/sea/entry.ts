/**
 * The single executable's main script (Node's single executable applications): the local
 * host (src/engine/local-host.ts), with what a lone binary has no files for taken from
 * its SEA assets (build.sh embeds them):
 * - PGlite's `pglite.wasm`, `initdb.wasm` and `pglite.data`, which PGlite otherwise reads
 *   from beside its own module (passed as `pgliteWasmModule` / `initdbWasmModule` /
 *   `fsBundle`);
 * - the SQL migrations (`migrations.json`, name → SQL) and the files @fastify/swagger-ui
 *   serves for /docs (`package-files.json`, package → path → base64; bundle.mjs points the
 *   package's `__dirname` at `globalThis.__seaPackageDir`), written to a private temporary
 *   directory and removed when the process ends.
 * The same settings as `npm run local` (docs/local-host.md).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sea from 'node:sea';
import { closeOnSignals } from '../../src/cli/exit.ts';
import { ConfigError } from '../../src/config.ts';
import { startLocalHost } from '../../src/engine/local-host.ts';

/** Set by build.sh (esbuild --define) from package.json. */
declare const FISCAL_LOCAL_VERSION: string;

function asset(name: string): ArrayBuffer {
  try {
    return sea.getAsset(name);
  } catch (err) {
    throw new Error(`the executable lacks its asset ${name} (rebuild it with scripts/sea/build.sh): ${(err as Error).message}`);
  }
}

/** Writes the file assets into a fresh temporary directory; returns where the migrations are. */
function extractFiles(dir: string): string {
  const migrations = path.join(dir, 'migrations');
  fs.mkdirSync(migrations);
  const sql = JSON.parse(Buffer.from(asset('migrations.json')).toString('utf8')) as Record<string, string>;
  for (const [name, text] of Object.entries(sql)) fs.writeFileSync(path.join(migrations, path.basename(name)), text);
  const packages = JSON.parse(Buffer.from(asset('package-files.json')).toString('utf8')) as Record<string, Record<string, string>>;
  const roots: Record<string, string> = {};
  for (const [pkg, files] of Object.entries(packages)) {
    roots[pkg] = path.join(dir, 'packages', pkg);
    for (const [rel, b64] of Object.entries(files)) {
      const file = path.join(roots[pkg], rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, Buffer.from(b64, 'base64'));
    }
  }
  (globalThis as { __seaPackageDir?: (pkg: string) => string }).__seaPackageDir = (pkg) => {
    const root = roots[pkg];
    if (!root) throw new Error(`the executable has no files of ${pkg}`);
    return root;
  };
  return migrations;
}

async function main(): Promise<void> {
  if (process.argv.includes('--version')) {
    console.log(FISCAL_LOCAL_VERSION);
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fiscal-local-'));
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  const migrationsDir = extractFiles(dir);
  const [pgliteWasmModule, initdbWasmModule] = await Promise.all([WebAssembly.compile(asset('pglite.wasm')), WebAssembly.compile(asset('initdb.wasm'))]);
  const host = await startLocalHost(process.env, {
    serviceVersion: FISCAL_LOCAL_VERSION,
    migrationsDir,
    pglite: { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([asset('pglite.data')]) },
  });
  closeOnSignals(() => host.close());
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(`configuration error: ${err.message}`);
    process.exit(78);
  }
  console.error(err);
  process.exit(1);
});
