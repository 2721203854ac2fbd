// Step 1 of build.sh: esbuild bundles scripts/sea/entry.ts into one CommonJS file.
// Usage: node scripts/sea/bundle.mjs <outfile> <version>; writes package-files.json and
// migrations.json (the SEA assets entry.ts reads) beside <outfile>.
//
// Two things a bundle inside a single executable cannot take for granted:
// - import.meta.url means nothing in CommonJS: it becomes the file URL of the running file
//   (the executable), which only modules given their files otherwise (the migrations,
//   PGlite) would read;
// - packages that read files from beside their own module at run time (`__dirname`) find
//   nothing beside the executable. @fastify/swagger-ui (the /docs page) is the one the
//   local host loads: its `__dirname` is rewritten to the folder entry.ts extracts the
//   package's files into (`globalThis.__seaPackageDir`).
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';

const [outfile, version] = process.argv.slice(2);
if (!outfile || !version) throw new Error('usage: bundle.mjs <outfile> <version>');

/** Packages whose files are extracted at start-up, and the folders of them that are read. */
export const PACKAGE_FILES = { '@fastify/swagger-ui': ['static'] };

const packageDirRewrite = {
  name: 'package-dir-rewrite',
  setup(build) {
    for (const pkg of Object.keys(PACKAGE_FILES)) {
      // esbuild loads modules by their real path (node_modules may be a symbolic link).
      const root = fs.realpathSync(path.resolve('node_modules', pkg));
      const filter = new RegExp(`^${root.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/.*\\.js$`);
      build.onLoad({ filter }, async (args) => {
        const rel = path.relative(root, path.dirname(args.path)) || '.';
        const dir = `require("node:path").join(globalThis.__seaPackageDir(${JSON.stringify(pkg)}), ${JSON.stringify(rel)})`;
        const text = await fs.promises.readFile(args.path, 'utf8');
        return { contents: text.replace(/\b__dirname\b/g, `(${dir})`), loader: 'js' };
      });
    }
  },
};

await esbuild.build({
  entryPoints: ['scripts/sea/entry.ts'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  outfile,
  logLevel: 'warning',
  define: { 'import.meta.url': '__sea_import_meta_url', FISCAL_LOCAL_VERSION: JSON.stringify(version) },
  banner: { js: 'const __sea_import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
  plugins: [packageDirRewrite],
  // A native addon cannot be part of the one script: PKCS#11 (HardwareDevice mode) is left out.
  alias: { pkcs11js: './scripts/sea/no-pkcs11.cjs' },
});

// The extracted packages' files as one JSON asset: package -> relative path -> base64.
const files = {};
for (const [pkg, dirs] of Object.entries(PACKAGE_FILES)) {
  const root = path.resolve('node_modules', pkg);
  files[pkg] = {};
  for (const dir of dirs) {
    for (const entry of fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const abs = path.join(entry.parentPath ?? entry.path, entry.name);
      files[pkg][path.relative(root, abs)] = fs.readFileSync(abs).toString('base64');
    }
  }
}
fs.writeFileSync(path.join(path.dirname(outfile), 'package-files.json'), JSON.stringify(files));

// The SQL migrations as one JSON asset (name -> SQL).
const migrations = {};
for (const f of fs.readdirSync('src/store/migrations').filter((f) => f.endsWith('.sql')).sort()) {
  migrations[f] = fs.readFileSync(path.join('src/store/migrations', f), 'utf8');
}
fs.writeFileSync(path.join(path.dirname(outfile), 'migrations.json'), JSON.stringify(migrations));
