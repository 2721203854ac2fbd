/**
 * Regenerates the SDK (sdk/) from the service's own OpenAPI document:
 *
 *   node --import tsx scripts/generate-sdk.ts            # writes sdk/openapi.json and sdk/src/generated/
 *   node --import tsx scripts/generate-sdk.ts --out DIR  # writes DIR/openapi.json and DIR/generated/ (the CI check)
 *   … --from FILE                                         # a document from FILE instead of the service's
 *
 * 1. starts the app in-process on an in-memory embedded store (nothing listens on a port)
 *    and takes GET /openapi.json — the document the running service serves;
 * 2. writes it, stably formatted, to sdk/openapi.json;
 * 3. runs @hey-api/openapi-ts on it into sdk/src/generated/ with its bundled fetch client,
 *    so the SDK needs no runtime dependency.
 *
 * The generator renders code with the TypeScript compiler API, which TypeScript 7 (the
 * project's compiler, a native build) no longer ships. A TypeScript 5 is looked up, in
 * order: $SDK_TYPESCRIPT (a typescript package folder), the `typescript-5` package (npm
 * alias `typescript-5@npm:typescript@5.9.3`), the project's `typescript` if it still has
 * its JS API; a loader hook hands it to the generator alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire, register } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pino from 'pino';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The folder of a TypeScript package with the compiler API (lib/typescript.js), or undefined. */
export function findTypescriptApi(): string | undefined {
  const require = createRequire(path.join(ROOT, 'package.json'));
  const candidates: string[] = [];
  if (process.env.SDK_TYPESCRIPT) candidates.push(process.env.SDK_TYPESCRIPT);
  for (const name of ['typescript-5', 'typescript']) {
    try {
      candidates.push(path.dirname(require.resolve(`${name}/package.json`)));
    } catch {
      // not installed
    }
  }
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'lib', 'typescript.js')));
}

/** The document GET /openapi.json serves, from an app on a fresh in-memory store. */
export async function serviceOpenapiDocument(): Promise<unknown> {
  const { systemClock } = await import('../src/core/clock.ts');
  const { deriveKeys } = await import('../src/crypto/master-key.ts');
  const { buildApp } = await import('../src/http/app.ts');
  const { createMemoryLimiter } = await import('../src/ratelimit/memory-limiter.ts');
  const { createRuntime } = await import('../src/runtime.ts');
  const { openPgliteDb } = await import('../src/store/pglite-db.ts');
  const { migrate } = await import('../src/store/migrate.ts');
  const db = await openPgliteDb();
  await migrate(db);
  const limiter = createMemoryLimiter();
  const rt = createRuntime({
    db, clock: systemClock, limiter,
    // A throwaway key: nothing is stored or sealed; the document does not depend on it.
    keys: deriveKeys(Buffer.alloc(32, 1)),
    log: pino({ level: 'silent' }) as never,
    config: { liveEnabled: false, mode: 'cloud', webhookAllowInsecure: false } as never,
  });
  const app = await buildApp(rt, {});
  try {
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /openapi.json answered ${res.statusCode}`);
    return res.json();
  } finally {
    await app.close();
    await rt.worker.stop();
    rt.changes.close();
    rt.mailer.close();
    await limiter.close();
    await db.close();
  }
}

/** The document as checked in: two-space JSON and a final newline. */
export const formatDocument = (doc: unknown): string => `${JSON.stringify(doc, null, 2)}\n`;

/** Runs the generator on `inputFile` into `outDir` (emptied first). */
export async function runGenerator(inputFile: string, outDir: string): Promise<void> {
  const tsDir = findTypescriptApi();
  if (!tsDir) {
    throw new Error(
      '@hey-api/openapi-ts needs the TypeScript compiler API (TypeScript 5): install the devDependency ' +
        '"typescript-5": "npm:typescript@5.9.3", or set SDK_TYPESCRIPT to a typescript 5 package folder',
    );
  }
  const target = pathToFileURL(path.join(tsDir, 'lib', 'typescript.js')).href;
  const hook =
    'export async function resolve(specifier, context, next) {' +
    ` if (specifier === 'typescript' && (context.parentURL ?? '').includes('/@hey-api/')) return next(${JSON.stringify(target)}, context);` +
    ' return next(specifier, context); }';
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
  const { createClient } = await import('@hey-api/openapi-ts');
  fs.rmSync(outDir, { recursive: true, force: true });
  await createClient({
    input: inputFile,
    output: { path: outDir },
    plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
    // The generator's own check of the document: an invalid one stops generation.
    parser: { validate_EXPERIMENTAL: 'strict' },
    logs: { level: 'silent' },
  } as never);
  fs.writeFileSync(path.join(outDir, 'idempotent.gen.ts'), idempotentOperations(JSON.parse(fs.readFileSync(inputFile, 'utf8'))));
}

/**
 * The operations that take an `Idempotency-Key` header, as the document declares them: the
 * SDK sends a generated key on these (sdk/src/idempotency.ts), so a retry cannot create twice.
 */
export function idempotentOperations(doc: { paths?: Record<string, Record<string, { parameters?: { in: string; name: string }[]; 'x-repeatable'?: boolean }>> }): string {
  const ops: { method: string; path: string }[] = [];
  // Operations the service answers the same when repeated (`x-repeatable`: a cancel answers
  // the first cancellation): the SDK retries them on 5xx like a GET (sdk/src/retry.ts).
  const repeatable: { method: string; path: string }[] = [];
  for (const [p, methods] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(methods)) {
      if (op.parameters?.some((x) => x.in === 'header' && x.name.toLowerCase() === 'idempotency-key')) ops.push({ method: method.toUpperCase(), path: p });
      if (op['x-repeatable'] === true) repeatable.push({ method: method.toUpperCase(), path: p });
    }
  }
  return (
    '// This file is generated by scripts/generate-sdk.ts from the operations that declare an Idempotency-Key header or x-repeatable\n\n' +
    `export const IDEMPOTENT_OPERATIONS: readonly { method: string; path: string }[] = ${JSON.stringify(ops)};\n\n` +
    `export const REPEATABLE_OPERATIONS: readonly { method: string; path: string }[] = ${JSON.stringify(repeatable)};\n`
  );
}

async function main(argv: string[]): Promise<void> {
  const outIndex = argv.indexOf('--out');
  const base = outIndex >= 0 ? path.resolve(argv[outIndex + 1] ?? '') : path.join(ROOT, 'sdk');
  const docFile = path.join(base, 'openapi.json');
  const genDir = outIndex >= 0 ? path.join(base, 'generated') : path.join(base, 'src', 'generated');
  const fromIndex = argv.indexOf('--from');
  const doc = fromIndex >= 0 ? JSON.parse(fs.readFileSync(path.resolve(argv[fromIndex + 1] ?? ''), 'utf8')) : await serviceOpenapiDocument();
  fs.mkdirSync(base, { recursive: true });
  fs.writeFileSync(docFile, formatDocument(doc));
  await runGenerator(docFile, genDir);
  console.log(`wrote ${path.relative(process.cwd(), docFile)} and ${path.relative(process.cwd(), genDir)}/`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
