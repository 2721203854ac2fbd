/** Messages between the benchmark (parent) and a server it forked (child). */

export type ParentMessage =
  | { type: 'stats' }
  | { type: 'stop' }
  /** A server-specific request (profiling servers: reset/read probes, start/stop the CPU profiler). */
  | { type: 'control'; id: number; action: string };

export interface ChildStats {
  /** process.cpuUsage() of the server process, microseconds. */
  cpuUserUs: number;
  cpuSystemUs: number;
  /** process.hrtime.bigint() in the child, as microseconds (wall clock for the CPU %). */
  wallUs: number;
  rssBytes: number;
  /** Rate-limiter takes so far (service only; the baseline has no limiter). */
  limiterTakes?: number;
  limiterRefused?: number;
  /** The server's garbage collections so far (child-main.ts), and its longest pause since the last stats. */
  gc?: GcStats;
}

/** Garbage collections of a process (perf_hooks `gc` entries): counts and pause time, in ms. */
export interface GcStats {
  /** Scavenges (the young generation). */
  minor: number;
  minorMs: number;
  /** Mark-compacts (the whole heap). */
  major: number;
  majorMs: number;
  /** Incremental marking's finalizations and weak-callback processing. */
  otherMs: number;
  /** The longest single pause (since the last stats request, in ChildStats). */
  maxPauseMs: number;
}

export type ChildMessage =
  | { type: 'ready'; port: number; info: Record<string, unknown> }
  | ({ type: 'stats' } & ChildStats)
  | { type: 'failed'; message: string }
  | { type: 'control'; id: number; ok: boolean; value: unknown };
