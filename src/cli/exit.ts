/**
 * The CLI's exit codes (docs/cli.md). 78 is EX_CONFIG of sysexits.h, which the service
 * has always answered for a configuration error (config.ts `ConfigError`).
 */
export const EXIT = {
  ok: 0,
  /** A verification found a break, or what was asked for does not exist. */
  failed: 1,
  /** Bad command line (unknown command or option, missing or malformed value). */
  usage: 2,
  /** Configuration error (environment variables, MASTER_KEY, store). */
  config: 78,
} as const;

/** Ends the command with `code`, printing `message` on stderr. */
export class ExitError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
    this.name = 'ExitError';
  }
}

export const usageError = (message: string) => new ExitError(EXIT.usage, message);
export const failed = (message: string) => new ExitError(EXIT.failed, message);

/**
 * A long-running command's end: on the first SIGINT or SIGTERM, `close` runs once (a
 * second signal meanwhile is ignored), then the process exits 0. The service, the worker,
 * the local host and the single executable all stop this way.
 */
export function closeOnSignals(close: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    await close(signal);
    process.exit(EXIT.ok);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
