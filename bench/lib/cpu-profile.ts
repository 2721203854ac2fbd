import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { Session } from 'node:inspector';

/**
 * The V8 CPU profiler for a window of a process's life (node:inspector, so no restart and
 * no startup in the profile), and a summary of where the samples fell: self time per
 * category (the database engine, the pg driver, Fastify, JSON, crypto, the service's own
 * code…) and the top functions.
 */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number; children?: number[] }>;
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  wallMs: number;
  /** Sampled time not idle, ms. */
  busyMs: number;
  /** Self time per category, ms and % of the wall time, largest first. */
  categories: Array<{ category: string; ms: number; pctOfWall: number }>;
  /** Top functions by self time. */
  top: Array<{ fn: string; where: string; category: string; ms: number; pctOfWall: number }>;
  /** Self time of the service's own files (src/…), largest first. */
  serviceFiles: Array<{ file: string; ms: number }>;
  /** Inclusive time (self + callees) of the service's own functions, largest first (recursion counted once). */
  inclusive: Array<{ fn: string; where: string; ms: number; pctOfWall: number }>;
}

/**
 * The CPU profile of a window; with `allocations`, also V8's sampling heap profile of the
 * same window counting what the scavenger and the full GC collected (every allocation,
 * not only what lives at the end): where the garbage comes from. Written to `allocations`.
 */
export function startProfiler(allocations?: string): { stop(): Promise<CpuProfile> } {
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params?: Record<string, unknown>) =>
    new Promise<T>((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res as T))));
  const ready = (async () => {
    await post('Profiler.enable');
    // V8's default interval (1 ms): a finer one costs the profiled process noticeably more.
    await post('Profiler.setSamplingInterval', { interval: 1000 });
    await post('Profiler.start');
    if (allocations) {
      await post('HeapProfiler.enable');
      await post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
    }
  })();
  return {
    async stop() {
      await ready;
      const { profile } = await post<{ profile: CpuProfile }>('Profiler.stop');
      if (allocations) {
        const { profile: heap } = await post<{ profile: unknown }>('HeapProfiler.stopSampling');
        await post('HeapProfiler.disable');
        mkdirSync(dirname(allocations), { recursive: true });
        writeFileSync(allocations, JSON.stringify(heap));
      }
      await post('Profiler.disable');
      session.disconnect();
      return profile;
    },
  };
}

export function categoryOf(url: string, fn: string): string {
  if (fn === '(idle)') return 'idle';
  if (fn === '(garbage collector)') return 'GC';
  if (fn === '(program)') return 'V8/native (program)';
  if (url.startsWith('wasm://')) return 'PGlite: Postgres (WASM)';
  if (/node_modules\/@electric-sql\/pglite/.test(url)) return 'PGlite: JS glue (protocol, parsing, FS)';
  if (/node_modules\/(pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+|pgpass|pg-connection-string)\//.test(url)) return 'pg driver (protocol, parsing)';
  if (/node_modules\/(fast-json-stringify|@fastify\/fast-json-stringify-compiler)/.test(url)) return 'response serialization (fast-json-stringify)';
  if (/node_modules\/(ajv|ajv-formats|fast-uri|@fastify\/ajv-compiler)/.test(url)) return 'schema validation (ajv)';
  if (/node_modules\/secure-json-parse/.test(url)) return 'body parsing (secure-json-parse)';
  if (/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|fastq|toad-cache|process-warning|abstract-logging|rfdc|content-type)/.test(url)) return 'Fastify (routing, hooks, reply)';
  if (/node_modules\/(pino|sonic-boom|thread-stream)/.test(url)) return 'logging (pino)';
  if (/node_modules\/autocannon|node_modules\/hdr-histogram|node_modules\/hyperid|node_modules\/reinterval|node_modules\/retimer/.test(url)) return 'autocannon';
  if (/node_modules\/(tsx|esbuild)/.test(url)) return 'tsx loader';
  if (/\/src\/store\//.test(url)) return 'service: store adapters and repos (src/store)';
  if (/\/src\/countries\//.test(url)) return 'service: fiscal systems (src/countries)';
  if (/\/src\//.test(url)) return 'service: other src code';
  if (/\/bench\//.test(url)) return 'benchmark harness (bench/)';
  if (url.startsWith('node:')) {
    if (/node:(net|_http|http|stream|internal\/streams|internal\/stream_base|internal\/http)/.test(url)) return 'Node: sockets, HTTP, streams';
    if (/crypto/.test(url)) return 'Node: crypto';
    return 'Node: other internals';
  }
  if (url === '') {
    if (/^(stringify|parse)$/.test(fn)) return 'JSON.stringify / JSON.parse (native)';
    if (/^(digest|update|createHash|Hash|Hmac|timingSafeEqual|randomUUID|randomFillSync)$/.test(fn)) return 'Node: crypto';
    if (/^(writev|writeUtf8String|writeBuffer|writeLatin1String|read|onStreamRead|close|fsync|fsyncSync|fdatasync|writeSync|readSync|open|openSync)$/.test(fn)) return 'native I/O (socket writes, file reads/writes, fsync)';
    return `native: ${fn || '(anonymous)'}`;
  }
  return 'other';
}

export function summarizeProfile(p: CpuProfile, topN = 25): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>(); // node id → µs
  if (p.samples && p.timeDeltas) {
    for (let i = 0; i < p.samples.length; i++) {
      const id = p.samples[i]!;
      const dt = p.timeDeltas[i + 1] ?? 0; // a sample's duration is the gap to the next one
      self.set(id, (self.get(id) ?? 0) + Math.max(0, dt));
    }
  }
  const wallMs = (p.endTime - p.startTime) / 1000;
  const cats = new Map<string, number>();
  const fns = new Map<string, { fn: string; where: string; category: string; us: number }>();
  const files = new Map<string, number>();
  let busyUs = 0;
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const category = categoryOf(url, functionName);
    if (category !== 'idle') busyUs += us;
    cats.set(category, (cats.get(category) ?? 0) + us);
    const short = url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/(src|bench)\//, '$1/');
    // Line numbers of tsx-compiled files (src/, bench/) are the generated code's: useless.
    const where = !url ? '(native)' : /^(src|bench)\//.test(short) ? short : `${short}:${lineNumber + 1}`;
    const k = `${functionName}@${where}`;
    const f = fns.get(k) ?? { fn: functionName || '(anonymous)', where, category, us: 0 };
    f.us += us;
    fns.set(k, f);
    const m = /\/(src\/.*)$/.exec(url);
    if (m) files.set(m[1]!, (files.get(m[1]!) ?? 0) + us);
  }
  const r1 = (x: number) => Math.round(x * 10) / 10;
  const pct = (us: number) => r1((us / 1000 / Math.max(1, wallMs)) * 100);

  // Inclusive time of src/ functions (and the serializer/validator entry points): a depth-first
  // walk that counts a function once per stack, however deep it recurses.
  const incl = new Map<string, { fn: string; where: string; us: number }>();
  const root = p.nodes[0];
  const keyOf = (n: CpuProfile['nodes'][number]) => {
    const { functionName, url } = n.callFrame;
    const m = /\/(src\/.*)$/.exec(url);
    return m ? { k: `${functionName}@${m[1]}`, fn: functionName || '(anonymous)', where: m[1]! } : undefined;
  };
  const walk = (id: number, open: Set<string>): number => {
    const n = byId.get(id)!;
    let us = self.get(id) ?? 0;
    const key = keyOf(n);
    const counted = key !== undefined && !open.has(key.k);
    if (counted) open.add(key!.k);
    for (const c of n.children ?? []) us += walk(c, open);
    if (counted) {
      open.delete(key!.k);
      const e = incl.get(key!.k) ?? { fn: key!.fn, where: key!.where, us: 0 };
      e.us += us;
      incl.set(key!.k, e);
    }
    return us;
  };
  if (root) walk(root.id, new Set());
  return {
    wallMs: r1(wallMs),
    busyMs: r1(busyUs / 1000),
    categories: [...cats.entries()].sort((a, b) => b[1] - a[1]).map(([category, us]) => ({ category, ms: r1(us / 1000), pctOfWall: pct(us) })),
    top: [...fns.values()].filter((f) => f.category !== 'idle').sort((a, b) => b.us - a.us).slice(0, topN)
      .map((f) => ({ fn: f.fn, where: f.where, category: f.category, ms: r1(f.us / 1000), pctOfWall: pct(f.us) })),
    serviceFiles: [...files.entries()].sort((a, b) => b[1] - a[1]).map(([file, us]) => ({ file, ms: r1(us / 1000) })),
    inclusive: [...incl.values()].sort((a, b) => b.us - a.us).slice(0, topN)
      .map((e) => ({ fn: e.fn, where: e.where, ms: r1(e.us / 1000), pctOfWall: pct(e.us) })),
  };
}
