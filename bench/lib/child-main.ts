import type { ChildMessage, ChildStats, ParentMessage } from './ipc.ts';

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
        ...server.stats?.(),
      });
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
