import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/**
 * PGlite's file-backed store, made durable.
 *
 * As shipped, PGlite never reaches the disk on commit, for two reasons measured with
 * strace (0 fsync/fdatasync syscalls over 500 commits):
 * 1. its default start parameters include `-F` (fsync = off);
 * 2. even with fsync on, Emscripten's NODEFS has no `fsync` stream operation, so the
 *    WASI `fd_sync` call made by Postgres' fsync() returns without doing anything, and
 *    Emscripten's `fdatasync` syscall is a no-op that ignores the stream entirely.
 *
 * The fix, in two parts:
 * - NODEFS streams get an `fsync` that calls the OS fsync on the real file descriptor
 *   (Emscripten's `_fd_sync` calls `stream.stream_ops.fsync` when it exists);
 * - Postgres starts without `-F`, with `fsync=on` and `wal_sync_method=fsync`, so the
 *   WAL flush at every commit goes through fsync() rather than the dropped fdatasync().
 * `synchronous_commit` stays `on` (the default), so a commit returns only after its WAL
 * record was fsynced. test/store/durability.test.ts proves it by tracing syscalls.
 */
export class DurableNodeFS extends NodeFS {
  override async init(pg: PGlite, opts: Parameters<NodeFS['init']>[1]) {
    const result = await super.init(pg, opts);
    const preRun = result.emscriptenOpts.preRun;
    const patch = (mod: { NODEFS: { stream_ops: Record<string, unknown> } }) => {
      mod.NODEFS.stream_ops.fsync = (stream: { nfd: number }) => {
        fs.fsyncSync(stream.nfd);
        return 0;
      };
    };
    result.emscriptenOpts.preRun = [...(Array.isArray(preRun) ? preRun : preRun ? [preRun] : []), patch as never];
    return result;
  }
}

/** Postgres start parameters for a durable embedded store. */
export function durableStartParams(): string[] {
  const defaults = (PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams;
  return [...defaults.filter((p) => p !== '-F'), '-c', 'fsync=on', '-c', 'wal_sync_method=fsync', '-c', 'synchronous_commit=on'];
}
