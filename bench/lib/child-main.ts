import { constants, PerformanceObserver } from 'node:perf_hooks';
import type { ChildMessage, ChildStats, GcStats, ParentMessage } from './ipc.ts';

export interface StartedServer {
  port: number;
  info?: Record<string, unknown>;
  close(): Promise<void>;
  stats?(): Partial<ChildStats>;
  /** Answers a `control` request from the parent (see ipc.ts); absent: every action fails. */
  control?(action: string): Promise<unknown>;
}

function send(msg: ChildMessage): void {
  process.send?.(msg);
}

/**
 * The child side of a forked benchmark server: starts it, reports the port, answers
 * stats requests, and stops on request or when the parent goes away (no orphans).
 */
export async function runChild(start: () => Promise<StartedServer>): Promise<void> {
  // The server's GC pauses, for the report's tail-latency table: a p99 read next to the
  // pauses (and when slow answers came) tells a collection from the service's own waits.
  const gc: GcStats = { minor: 0, minorMs: 0, major: 0, majorMs: 0, otherMs: 0, maxPauseMs: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        gc.minor += 1;
        gc.minorMs += e.duration;
      } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        gc.major += 1;
        gc.majorMs += e.duration;
      } else {
        gc.otherMs += e.duration;
      }
      gc.maxPauseMs = Math.max(gc.maxPauseMs, e.duration);
    }
  }).observe({ entryTypes: ['gc'] });

  if (!process.send) {
    console.error('this file is a benchmark server: it is forked by bench/run.ts, not run directly');
    process.exit(2);
  }
  let server: StartedServer;
  try {
    server = await start();
  } catch (err) {
    send({ type: 'failed', message: (err as Error).stack ?? String(err) });
    process.exit(1);
  }

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    try {
      await server.close();
    } finally {
      process.exit(code);
    }
  };

  process.on('message', (raw: unknown) => {
    const msg = raw as ParentMessage;
    if (msg.type === 'stats') {
      const cpu = process.cpuUsage();
      send({
        type: 'stats',
        cpuUserUs: cpu.user,
        cpuSystemUs: cpu.system,
        wallUs: Number(process.hrtime.bigint() / 1000n),
        rssBytes: process.memoryUsage.rss(),
        gc: { ...gc },
        ...server.stats?.(),
      });
      gc.maxPauseMs = 0;
    } else if (msg.type === 'stop') {
      void stop(0);
    } else if (msg.type === 'control') {
      const run = server.control ? server.control(msg.action) : Promise.reject(new Error(`no control actions (asked: ${msg.action})`));
      run.then(
        (value) => send({ type: 'control', id: msg.id, ok: true, value }),
        (err: unknown) => send({ type: 'control', id: msg.id, ok: false, value: (err as Error).message ?? String(err) }),
      );
    }
  });
  process.on('disconnect', () => void stop(0));
  send({ type: 'ready', port: server.port, info: server.info ?? {} });
}
