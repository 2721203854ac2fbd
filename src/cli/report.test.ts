import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config.ts';
import { DbUnavailableError } from '../core/errors.ts';
import { EXIT, ExitError } from './exit.ts';
import { exitCodeFor, verboseErrors } from './report.ts';

/** What main.ts prints and exits with when a command fails: one line, the documented code, no stack trace. */
function report(err: unknown, verbose = false): { code: number; lines: string[] } {
  const lines: string[] = [];
  const code = exitCodeFor(err, { write: (l) => lines.push(l), verbose });
  return { code, lines };
}

const STACK_FRAME = /^\s+at /m;

describe('exitCodeFor', () => {
  it('an unexpected error: exit 1, its message on one line, no stack trace', () => {
    const err = Object.assign(new Error("EISDIR: illegal operation on a directory, open '/tmp/out'"), { code: 'EISDIR', errno: -21 });
    const { code, lines } = report(err);
    expect(code).toBe(EXIT.failed);
    expect(lines).toEqual(["error: EISDIR: illegal operation on a directory, open '/tmp/out'"]);
    expect(lines.join('\n')).not.toMatch(STACK_FRAME);
    expect(report('a string').lines).toEqual(['error: a string']);
  });

  it('the store unreachable, unknown or refusing the credentials: a configuration error (78) saying why', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const unreachable = report(new DbUnavailableError(refused));
    expect(unreachable.code).toBe(EXIT.config);
    expect(unreachable.lines).toEqual(['configuration error: the store cannot be used (DATABASE_URL): connect ECONNREFUSED 127.0.0.1:1']);
    // Wrapped once more (a service rethrowing it as its cause).
    expect(report(new Error('failed', { cause: new DbUnavailableError(refused) })).code).toBe(EXIT.config);
    // PostgreSQL's own refusals (what node-postgres throws: code and severity).
    const noDb = Object.assign(new Error('database "fiscal" does not exist'), { code: '3D000', severity: 'FATAL' });
    expect(report(noDb)).toEqual({ code: EXIT.config, lines: ['configuration error: the store cannot be used (DATABASE_URL): database "fiscal" does not exist'] });
    const badPassword = Object.assign(new Error('password authentication failed for user "fiscal"'), { code: '28P01', severity: 'FATAL' });
    expect(report(badPassword).code).toBe(EXIT.config);
    // Another SQL error is no configuration error.
    expect(report(Object.assign(new Error('relation "x" does not exist'), { code: '42P01', severity: 'ERROR' })).code).toBe(EXIT.failed);
  });

  it('configuration, usage and not-found errors keep their codes and messages', () => {
    expect(report(new ConfigError('PORT must be an integer'))).toEqual({ code: EXIT.config, lines: ['configuration error: PORT must be an integer'] });
    expect(report(new ExitError(EXIT.usage, '--location must be a UUID'))).toEqual({ code: EXIT.usage, lines: ['--location must be a UUID'] });
    expect(report(new ExitError(EXIT.failed, 'location x not found'))).toEqual({ code: EXIT.failed, lines: ['location x not found'] });
    // Commander printed its own message; help and version are no errors.
    expect(report(new CommanderError(1, 'commander.unknownCommand', "error: unknown command 'x'"))).toEqual({ code: EXIT.usage, lines: [] });
    expect(report(new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)')).code).toBe(EXIT.ok);
    expect(report(new CommanderError(0, 'commander.version', '1.0.0')).code).toBe(EXIT.ok);
  });

  it('`help [command]` asked for is exit 0; the help shown for a missing command is a usage error', async () => {
    const { buildProgram } = await import('./program.ts');
    const run = async (args: string[]) => {
      const program = buildProgram(() => undefined);
      const silence = (c: typeof program) => {
        c.configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
        c.commands.forEach(silence);
      };
      silence(program);
      const err = await program.parseAsync(['node', 'main', ...args]).then(() => undefined, (e: unknown) => e);
      return report(err).code;
    };
    expect(await run(['help'])).toBe(EXIT.ok);
    expect(await run(['help', 'export'])).toBe(EXIT.ok);
    expect(await run(['export', 'saft', '--help'])).toBe(EXIT.ok);
    expect(await run([])).toBe(EXIT.usage);
    expect(await run(['export'])).toBe(EXIT.usage);
  });

  it('LOG_LEVEL=debug or trace adds the stack trace, for a developer', () => {
    const { lines } = report(new Error('boom'), true);
    expect(lines[0]).toBe('error: boom');
    expect(lines[1]).toMatch(STACK_FRAME);
    expect(verboseErrors({ LOG_LEVEL: 'debug' })).toBe(true);
    expect(verboseErrors({ LOG_LEVEL: 'trace' })).toBe(true);
    expect(verboseErrors({ LOG_LEVEL: 'info' })).toBe(false);
    expect(verboseErrors({})).toBe(false);
  });
});
