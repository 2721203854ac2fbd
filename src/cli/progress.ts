/**
 * Progress of long CLI work (verify-chain, export records, replay-dead), always on stderr
 * so stdout holds only results: a `cli-progress` bar when stderr is a terminal, else a
 * plain line every `every` items and at the end (logs, CI, pipes).
 */
import cliProgress from 'cli-progress';

export interface Progress {
  start(total: number, label: string): void;
  tick(n?: number): void;
  stop(): void;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr, every = 100): Progress {
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      { stream, format: '{label} [{bar}] {value}/{total} ({percentage}%) eta {eta_formatted}', hideCursor: true, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    );
    return {
      start: (total, label) => bar.start(total, 0, { label }),
      tick: (n = 1) => bar.increment(n),
      stop: () => bar.stop(),
    };
  }
  let total = 0;
  let done = 0;
  let label = '';
  let last = 0;
  const line = () => stream.write(`${label}: ${done}/${total}\n`);
  return {
    start(t, l) {
      total = t;
      label = l;
      done = 0;
      last = 0;
      line();
    },
    tick(n = 1) {
      done += n;
      if (done - last >= every) {
        last = done;
        line();
      }
    },
    stop() {
      if (done !== last) line();
    },
  };
}
