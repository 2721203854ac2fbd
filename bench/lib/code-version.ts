import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Which service code a report measured: the git commit, the src/ files changed since it
 * (uncommitted), and a hash of every src/ file's content, so two reports can be compared
 * knowing whether the code under test was the same.
 */
export interface CodeVersion {
  commit: string;
  subject: string;
  uncommittedSrc: string[];
  srcSha256: string;
  /** Set when src/ changed while the benchmark ran (what it was at the end). */
  changedDuringRun?: CodeVersion;
}

export function codeVersion(): CodeVersion {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      return '';
    }
  };
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) hash.update(path.relative(ROOT, p)).update('\0').update(fs.readFileSync(p)).update('\0');
    }
  };
  walk(path.join(ROOT, 'src'));
  return {
    commit: git('rev-parse', '--short=12', 'HEAD').trim() || 'unknown',
    subject: git('log', '-1', '--format=%s').trim(),
    // Porcelain lines are "XY path": two status letters (either may be a space), a space, the path.
    uncommittedSrc: git('status', '--porcelain', '--', 'src').split('\n').filter((l) => l.length > 3).map((l) => l.slice(3)),
    srcSha256: hash.digest('hex').slice(0, 16),
  };
}
