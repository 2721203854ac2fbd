/**
 * One process per embedded data directory: PGlite takes no lock of its own, and two
 * processes writing the same files lose data (seen: a second `local` on a live DATA_DIR
 * started and served; two engines on one `data_dir` and the later close overwrote every
 * sale the first had acknowledged). The local host and the engine take this lock before
 * they open the store. The lock file holds the owner's pid; a lock whose process is gone
 * (a crash, kill -9) is taken over.
 */
import fs from 'node:fs';
import path from 'node:path';

export const DATA_DIR_LOCK_FILE = 'data-dir.lock';

/** The directory is held by a live process (`pid`, undefined when its file is unreadable). */
export class DataDirInUse extends Error {
  constructor(readonly dataDir: string, readonly pid: number | undefined, readonly lockFile: string) {
    super(`${dataDir} is in use by another process (${pid ?? '?'}; lock file ${lockFile}): one local host or engine per data directory`);
  }
}

/** Takes the directory's lock (creating the directory); returns the release function. */
export function lockDataDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, DATA_DIR_LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
      if (attempt === 0 && !(Number.isInteger(pid) && pid > 0 && alive(pid))) {
        fs.rmSync(file, { force: true });
        continue;
      }
      throw new DataDirInUse(dataDir, Number.isInteger(pid) ? pid : undefined, file);
    }
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file, { force: true });
    } catch { /* already gone */ }
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
