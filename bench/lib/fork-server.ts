import { type ChildProcess, fork } from 'node:child_process';
import type { ChildMessage, ChildStats, ParentMessage } from './ipc.ts';

export interface ServerProcess {
  readonly pid: number;
  readonly port: number;
  readonly baseUrl: string;
  readonly info: Record<string, unknown>;
  stats(): Promise<ChildStats>;
  /** A server-specific request (ipc.ts `control`); rejects with the child's error. */
  control(action: string): Promise<unknown>;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 15_000;

/**
 * Forks `file` (a bench/servers/*.ts entry) under tsx, in its own process, so the server
 * has an event loop (and a core) of its own instead of sharing autocannon's.
 */
export async function forkServer(file: string, env: Record<string, string>, opts: { execArgv?: string[] } = {}): Promise<ServerProcess> {
  const child: ChildProcess = fork(file, [], {
    // Extra flags (e.g. --cpu-prof) go before the entry, after the tsx loader.
    execArgv: ['--import', 'tsx', ...(opts.execArgv ?? [])],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const send = (msg: ParentMessage) => child.send(msg);

  let exited = false;
  const exitPromise = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    exited = true;
    resolve(code);
  }));

  const ready = await new Promise<Extract<ChildMessage, { type: 'ready' }>>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file}: not ready after ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    const onMessage = (raw: unknown) => {
      const msg = raw as ChildMessage;
      if (msg.type === 'ready') {
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve(msg);
      } else if (msg.type === 'failed') {
        clearTimeout(timer);
        reject(new Error(`${file} failed to start:\n${msg.message}`));
      }
    };
    child.on('message', onMessage);
    void exitPromise.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited (code ${code}) before it was ready`));
    });
  });

  let controlIds = 0;
  return {
    pid: child.pid!,
    port: ready.port,
    baseUrl: `http://127.0.0.1:${ready.port}`,
    info: ready.info,
    stats: () =>
      new Promise<ChildStats>((resolve, reject) => {
        if (exited) return reject(new Error(`${file}: server process has exited`));
        const onMessage = (raw: unknown) => {
          const msg = raw as ChildMessage;
          if (msg.type !== 'stats') return;
          child.off('message', onMessage);
          const { type: _type, ...stats } = msg;
          resolve(stats);
        };
        child.on('message', onMessage);
        send({ type: 'stats' });
      }),
    control: (action: string) =>
      new Promise<unknown>((resolve, reject) => {
        if (exited) return reject(new Error(`${file}: server process has exited`));
        const id = ++controlIds;
        const onMessage = (raw: unknown) => {
          const msg = raw as ChildMessage;
          if (msg.type !== 'control' || msg.id !== id) return;
          child.off('message', onMessage);
          if (msg.ok) resolve(msg.value);
          else reject(new Error(`${file}: ${action}: ${String(msg.value)}`));
        };
        child.on('message', onMessage);
        send({ type: 'control', id, action });
      }),
    async stop() {
      if (exited) return;
      send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exitPromise;
      clearTimeout(timer);
    },
  };
}
