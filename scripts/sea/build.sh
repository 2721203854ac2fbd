#!/usr/bin/env bash
# Builds dist/fiscal-local: the local host (src/engine/local-host.ts) as one executable,
# with Node's single executable applications (Node >= 20.12 for sea.getAsset):
#   1. esbuild bundles scripts/sea/entry.ts and everything it imports into one CommonJS file;
#   2. PGlite's pglite.wasm, initdb.wasm, pglite.data, the SQL migrations and the files
#      @fastify/swagger-ui serves (/docs) become SEA assets;
#   3. node --experimental-sea-config makes the blob, postject injects it into a copy of node.
# Skipped when nothing it is built from changed (dist/fiscal-local.inputs holds the inputs'
# hash); FORCE=1 rebuilds. Usage: scripts/sea/build.sh   (npm run build:local-exe)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=dist/fiscal-local
WORK=dist/sea
NODE=${NODE:-$(command -v node)}
PGLITE=node_modules/@electric-sql/pglite/dist

# The inputs' hash: sources (not tests), this folder, the lock file, the node binary's version.
inputs_hash() {
  {
    find src scripts/sea -type f \( -name '*.ts' -o -name '*.mjs' -o -name '*.cjs' \) ! -name '*.test.ts' -print0 | sort -z | xargs -0 sha256sum
    find src/store/migrations -type f -name '*.sql' -print0 | sort -z | xargs -0 sha256sum
    sha256sum scripts/sea/build.sh package.json package-lock.json
    "$NODE" --version
  } | sha256sum | cut -d' ' -f1
}
HASH=$(inputs_hash)
if [[ "${FORCE:-}" != 1 && -x "$OUT" && -f "$OUT.inputs" && "$(cat "$OUT.inputs")" == "$HASH" ]]; then
  echo "$OUT is up to date ($HASH)"
  exit 0
fi

rm -rf "$WORK"
mkdir -p "$WORK"
VERSION=$("$NODE" -p "require('./package.json').version")

# 1. One CommonJS file, and the migrations and package files as JSON assets (bundle.mjs).
"$NODE" scripts/sea/bundle.mjs "$WORK/fiscal-local.cjs" "$VERSION"

cat > "$WORK/sea-config.json" <<JSON
{
  "main": "$ROOT/$WORK/fiscal-local.cjs",
  "output": "$ROOT/$WORK/sea-prep.blob",
  "disableExperimentalSEAWarning": true,
  "useCodeCache": false,
  "assets": {
    "pglite.wasm": "$ROOT/$PGLITE/pglite.wasm",
    "initdb.wasm": "$ROOT/$PGLITE/initdb.wasm",
    "pglite.data": "$ROOT/$PGLITE/pglite.data",
    "migrations.json": "$ROOT/$WORK/migrations.json",
    "package-files.json": "$ROOT/$WORK/package-files.json"
  }
}
JSON

# 3. The blob, injected into a copy of this node binary.
"$NODE" --experimental-sea-config "$WORK/sea-config.json"
rm -f "$OUT" "$OUT.inputs"
cp "$NODE" "$OUT.tmp"
chmod u+w "$OUT.tmp"
npx postject "$OUT.tmp" NODE_SEA_BLOB "$WORK/sea-prep.blob" --sentinel-fuse NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2
mv "$OUT.tmp" "$OUT"
echo "$HASH" > "$OUT.inputs"
echo "built $OUT ($(du -h "$OUT" | cut -f1), version $VERSION)"
