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
