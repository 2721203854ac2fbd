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
}

export type ChildMessage =
  | { type: 'ready'; port: number; info: Record<string, unknown> }
  | ({ type: 'stats' } & ChildStats)
  | { type: 'failed'; message: string }
  | { type: 'control'; id: number; ok: boolean; value: unknown };
