import fs from 'node:fs';
import os from 'node:os';

/**
 * CPU accounting for the whole machine during a measured run, so that a run disturbed by
 * other work (a test suite, a build) shows it instead of silently reporting low figures.
 * Linux only (/proc); elsewhere the PostgreSQL share reads as unknown.
 */

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

export interface CpuSnapshot {
  /** Busy time of all cores, ms (os.cpus()). */
  machineBusyMs: number;
  machineTotalMs: number;
  /** utime + stime of every process named `postgres`, ms; undefined without /proc. */
  postgresMs: number | undefined;
}

function postgresCpuMs(): number | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return undefined;
  }
  let ticks = 0;
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    if (stat.slice(open + 1, close) !== 'postgres') continue;
    const fields = stat.slice(close + 2).split(' '); // fields[0] is field 3 (state)
    ticks += Number(fields[11]) + Number(fields[12]); // utime (14), stime (15)
  }
  return (ticks / TICKS_PER_S) * 1000;
}

export function cpuSnapshot(): CpuSnapshot {
  let busy = 0;
  let total = 0;
  for (const { times } of os.cpus()) {
    const t = times.user + times.nice + times.sys + times.irq + times.idle;
    total += t;
    busy += t - times.idle;
  }
  return { machineBusyMs: busy, machineTotalMs: total, postgresMs: postgresCpuMs() };
}

/** Machine busy and PostgreSQL CPU between two snapshots, in % of one core. */
export function cpuBetween(a: CpuSnapshot, b: CpuSnapshot, wallMs: number): { machinePct: number; postgresPct: number | undefined } {
  const cores = os.cpus().length;
  const machinePct = ((b.machineBusyMs - a.machineBusyMs) / Math.max(1, b.machineTotalMs - a.machineTotalMs)) * cores * 100;
  const postgresPct = a.postgresMs === undefined || b.postgresMs === undefined ? undefined : ((b.postgresMs - a.postgresMs) / wallMs) * 100;
  return { machinePct, postgresPct };
}
