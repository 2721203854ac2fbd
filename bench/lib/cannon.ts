import autocannon from 'autocannon';
import type { ChildStats, GcStats } from './ipc.ts';
import type { ServerProcess } from './fork-server.ts';
import { cpuBetween, cpuSnapshot } from './proc-cpu.ts';

export interface LoadSettings {
  /** Measured seconds per scenario. */
  durationS: number;
  /** Seconds of the same load before it, not measured. 0 = none. */
  warmupS: number;
  connections: number;
}

export function loadSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): LoadSettings {
  const num = (name: string, fallback: number, min: number) => {
    const v = env[name];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new Error(`${name} must be a number >= ${min} (got "${v}")`);
    return n;
  };
  return {
    durationS: num('BENCH_DURATION', 10, 1),
    // 5 s: in the service's first seconds its event loop still stalls 15-270 ms at a time (compiling), and with 2 s
    // the measured run's first second still held up to ~175 answers over 50 ms, none with 5 (docs/decisions.md, session 24).
    warmupS: num('BENCH_WARMUP', 5, 0),
    connections: Math.floor(num('BENCH_CONNECTIONS', 50, 1)),
  };
}

/** One HTTP request shape; `body(n)` is called for every request sent (n counts from 1). */
export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: (n: number) => string;
  /**
   * Extra headers for each request sent, merged over `headers` (e.g. a unique
   * Idempotency-Key), and a tag naming that request for `onAnswer`.
   */
  perRequest?: () => { headers: Record<string, string>; tag: string };
  /**
   * Called for every complete answer with the tag of the request it answers (pipelining 1:
   * one request in flight per connection, so the connection's last tag is the right one).
   * Requests still in flight when autocannon stops are never answered (their connection
   * is destroyed): they get no call.
   */
  onAnswer?: (status: number, tag: string) => void;
}

export interface Measurement {
  requests: number;
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  durationS: number;
  /** autocannon's Req/Sec average (mean of the per-second samples). */
  reqPerSec: number;
  /** 2xx answers divided by the measured duration. */
  okPerSec: number;
  latencyMs: { mean: number; p50: number; p90: number; p97_5: number; p99: number; max: number };
  /** CPU used by the server process over the measured run, in % of one core. */
  serverCpuPct: number;
  /** CPU used by this process (autocannon, the load generator), in % of one core. */
  loadgenCpuPct: number;
  serverRssMb: number;
  /** CPU of every `postgres` process over the measured run, in % of one core (unknown without /proc). */
  postgresCpuPct: number | undefined;
  /**
   * Whole-machine busy CPU minus the server, autocannon and PostgreSQL, in % of one core:
   * kernel work for the network plus anything else running. Well above ~20 % means the
   * run competed with other work and its figures are low.
   */
  otherCpuPct: number;
  /** Rate-limiter takes during the measured run (service only). */
  limiterTakes?: number;
  /** The warm-up run before it (not in the figures above): requests and 2xx answers. */
  warmup?: { requests: number; ok2xx: number };
  /**
   * Answers slower than SLOW_MS, and in which seconds of the measured run they came
   * (second → count): a p99 made by one burst (a GC pause, the run's first connections)
   * reads differently from one spread over the run.
   */
  slow: { overMs: number; count: number; bySecond: Record<string, number> };
  /** The server's garbage collections during the measured run (absent: the server does not report them). */
  gc?: GcStats;
}

/** What `slow` counts: the issue's p99 bound. */
export const SLOW_MS = 50;

export class BenchFailure extends Error {
  override name = 'BenchFailure';
}

function statusCodes(r: autocannon.Result): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [code, v] of Object.entries(r.statusCodeStats ?? {})) out[code] = (v as { count?: number }).count ?? 0;
  return out;
}

/** Sends the request once more, outside autocannon, to show what a failing answer says. */
async function probe(baseUrl: string, spec: RequestSpec): Promise<string> {
  try {
    const res = await fetch(baseUrl + spec.path, {
      method: spec.method,
      headers: spec.headers,
      ...(spec.body ? { body: spec.body(0) } : {}),
    });
    return `${res.status} ${(await res.text()).slice(0, 500)}`;
  } catch (err) {
    return `request failed: ${(err as Error).message}`;
  }
}

function fire(
  baseUrl: string, spec: RequestSpec, connections: number, durationS: number, onLatency?: (ms: number) => void,
): Promise<autocannon.Result> {
  let n = 0;
  const request: autocannon.Request = { method: spec.method, path: spec.path, headers: spec.headers };
  const { body, perRequest, onAnswer } = spec;
  if (body || perRequest) {
    request.setupRequest = (req, context) => {
      const out = { ...req };
      if (body) out.body = body(++n);
      if (perRequest) {
        const extra = perRequest();
        out.headers = { ...spec.headers, ...extra.headers };
        (context as { tag?: string }).tag = extra.tag;
      }
      return out;
    };
  }
  if (onAnswer) request.onResponse = (status, _body, context) => onAnswer(status, (context as { tag?: string }).tag ?? '');
  const run = autocannon({
    url: baseUrl,
    connections,
    pipelining: 1,
    duration: durationS,
    timeout: 10,
    requests: [request],
  });
  // Without a callback autocannon answers its instance, an EventEmitter that is also a promise (its typings say only the latter).
  if (onLatency) (run as unknown as NodeJS.EventEmitter).on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => onLatency(ms));
  return run;
}

function assertAll2xx(label: string, r: autocannon.Result, probeAnswer: () => Promise<string>): Promise<void> | void {
  if (r.non2xx === 0 && r.errors === 0 && r.timeouts === 0 && r['2xx'] > 0) return;
  return probeAnswer().then((answer) => {
    throw new BenchFailure(
      `${label}: every answer must be 2xx, got ${r['2xx']} 2xx, ${r.non2xx} non-2xx ` +
        `(status codes ${JSON.stringify(statusCodes(r))}), ${r.errors} errors, ${r.timeouts} timeouts.\n` +
        `  one more request answers: ${answer}`,
    );
  });
}

/** Called around the measured run only (not the warm-up), e.g. to sample the database meanwhile. */
export interface MeasureHooks {
  beforeMeasured?: () => Promise<void> | void;
  afterMeasured?: () => Promise<void> | void;
}

/** Warm-up (discarded), then the measured run; throws BenchFailure if any answer is not 2xx. */
export async function measure(label: string, server: ServerProcess, spec: RequestSpec, load: LoadSettings, hooks: MeasureHooks = {}): Promise<Measurement> {
  const probeAnswer = () => probe(server.baseUrl, spec);
  let warmup: Measurement['warmup'];
  if (load.warmupS > 0) {
    const warm = await fire(server.baseUrl, spec, load.connections, load.warmupS);
    await assertAll2xx(`${label} (warm-up)`, warm, probeAnswer);
    warmup = { requests: warm.requests.total, ok2xx: warm['2xx'] };
  }

  await hooks.beforeMeasured?.();
  const before: ChildStats = await server.stats();
  const loadgenBefore = process.cpuUsage();
  const wallBefore = process.hrtime.bigint();
  const machineBefore = cpuSnapshot();
  const slow: Measurement['slow'] = { overMs: SLOW_MS, count: 0, bySecond: {} };
  const started = Date.now();
  const r = await fire(server.baseUrl, spec, load.connections, load.durationS, (ms) => {
    if (ms <= SLOW_MS) return;
    slow.count += 1;
    // The second the request was sent in (its answer came ms later).
    const second = String(Math.max(0, Math.floor((Date.now() - ms - started) / 1000)));
    slow.bySecond[second] = (slow.bySecond[second] ?? 0) + 1;
  });
  const wallUs = Number((process.hrtime.bigint() - wallBefore) / 1000n);
  const loadgen = process.cpuUsage(loadgenBefore);
  const machineAfter = cpuSnapshot();
  const after: ChildStats = await server.stats();
  await hooks.afterMeasured?.();
  await assertAll2xx(label, r, probeAnswer);

  const serverCpuUs = after.cpuUserUs + after.cpuSystemUs - before.cpuUserUs - before.cpuSystemUs;
  const serverCpuPct = (serverCpuUs / (after.wallUs - before.wallUs)) * 100;
  const loadgenCpuPct = ((loadgen.user + loadgen.system) / wallUs) * 100;
  const machine = cpuBetween(machineBefore, machineAfter, wallUs / 1000);
  const limiterTakes = after.limiterTakes !== undefined && before.limiterTakes !== undefined ? after.limiterTakes - before.limiterTakes : undefined;
  if (after.limiterRefused) throw new BenchFailure(`${label}: the rate limiter refused ${after.limiterRefused} takes`);
  if (limiterTakes !== undefined && limiterTakes < r['2xx']) {
    throw new BenchFailure(`${label}: ${r['2xx']} answers but only ${limiterTakes} rate-limiter takes: the limiter is not on the path`);
  }
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    requests: r.requests.total,
    ok2xx: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes: statusCodes(r),
    durationS: round(r.duration),
    reqPerSec: round(r.requests.average),
    okPerSec: round(r['2xx'] / r.duration),
    latencyMs: {
      mean: round(r.latency.mean),
      p50: r.latency.p50,
      p90: r.latency.p90,
      p97_5: r.latency.p97_5,
      p99: r.latency.p99,
      max: r.latency.max,
    },
    serverCpuPct: round(serverCpuPct),
    loadgenCpuPct: round(loadgenCpuPct),
    serverRssMb: round(after.rssBytes / 1024 / 1024),
    postgresCpuPct: machine.postgresPct === undefined ? undefined : round(machine.postgresPct),
    otherCpuPct: round(Math.max(0, machine.machinePct - serverCpuPct - loadgenCpuPct - (machine.postgresPct ?? 0))),
    ...(limiterTakes !== undefined ? { limiterTakes } : {}),
    ...(warmup ? { warmup } : {}),
    slow,
    ...(before.gc && after.gc ? { gc: gcBetween(before.gc, after.gc) } : {}),
  };
}

function gcBetween(a: GcStats, b: GcStats): GcStats {
  const r1 = (x: number) => Math.round(x * 10) / 10;
  return {
    minor: b.minor - a.minor, minorMs: r1(b.minorMs - a.minorMs), major: b.major - a.major, majorMs: r1(b.majorMs - a.majorMs),
    otherMs: r1(b.otherMs - a.otherMs), maxPauseMs: r1(b.maxPauseMs),
  };
}

/** `slow` and `gc` in a line: "43 answers over 50 ms (s0 31, s7 12); GC 250 scavenges 1,100 ms, 1 mark-compact 12 ms, longest pause 12 ms". */
export function tailText(m: Measurement): string {
  const seconds = Object.entries(m.slow.bySecond).map(([s, n]) => `s${s} ${n}`).join(', ');
  const slow = `${m.slow.count} answers over ${m.slow.overMs} ms${seconds ? ` (${seconds})` : ''}`;
  const g = m.gc;
  return g
    ? `${slow}; GC ${g.minor} scavenges ${Math.round(g.minorMs)} ms, ${g.major} mark-compact${g.major === 1 ? '' : 's'} ${Math.round(g.majorMs)} ms, longest pause ${g.maxPauseMs} ms`
    : slow;
}
