/**
 * How a command that failed ends (docs/cli.md "Exit codes"): one line on stderr that says
 * what went wrong, and the exit code. Never a stack trace or an error's internals: those
 * are for a developer, who asks for them with LOG_LEVEL=debug (or trace).
 */
import { CommanderError } from 'commander';
import { ConfigError } from '../config.ts';
import { DbUnavailableError } from '../core/errors.ts';
import { EXIT, ExitError } from './exit.ts';

/** PostgreSQL refusing the configured connection: bad credentials (class 28), no such database (3D000). */
const REFUSED_CONNECTION = /^(28|3D000$)/;

/** The store named by the configuration cannot be used: unreachable, unknown database, credentials refused. */
function storeFailure(err: unknown): string | undefined {
  const unavailable = err instanceof DbUnavailableError ? err : (err as { cause?: unknown } | null)?.cause instanceof DbUnavailableError ? (err as { cause: DbUnavailableError }).cause : undefined;
  if (unavailable) {
    const cause = unavailable.cause as { message?: unknown } | undefined;
    return typeof cause?.message === 'string' && cause.message !== '' ? cause.message : unavailable.message;
  }
  const e = err as { code?: unknown; severity?: unknown; message?: unknown } | null;
  if (e && typeof e.code === 'string' && typeof e.severity === 'string' && REFUSED_CONNECTION.test(e.code)) return String(e.message);
  return undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/**
 * The exit code for `err`, after writing its one-line explanation with `write` (commander
 * has already printed its own usage errors). `verbose` adds the stack trace.
 */
export function exitCodeFor(err: unknown, opts: { write: (line: string) => void; verbose?: boolean }): number {
  const { write } = opts;
  if (err instanceof CommanderError) {
    // --help, `help [command]` and --version are not errors (the help shown for a missing
    // subcommand is: commander gives it exit code 1); commander has printed the rest.
    const asked = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || (err.code === 'commander.help' && err.exitCode === 0);
    return asked ? EXIT.ok : EXIT.usage;
  }
  let code: number;
  if (err instanceof ConfigError) {
    write(`configuration error: ${err.message}`);
    code = EXIT.config;
  } else if (err instanceof ExitError) {
    write(err.message);
    code = err.code;
  } else {
    const store = storeFailure(err);
    if (store !== undefined) {
      write(`configuration error: the store cannot be used (DATABASE_URL): ${store}`);
      code = EXIT.config;
    } else {
      write(`error: ${messageOf(err)}`);
      code = EXIT.failed;
    }
  }
  if (opts.verbose && err instanceof Error && err.stack) write(err.stack);
  return code;
}

/** LOG_LEVEL=debug or trace: a developer asks for the stack traces. */
export const verboseErrors = (env: NodeJS.ProcessEnv): boolean => env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'trace';
