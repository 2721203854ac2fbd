import { CommanderError, type Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from './program.ts';
import { EXIT, ExitError } from './exit.ts';

/** Every command answers --help (exit 0) without touching a store; bad usage is a CommanderError (main.ts: exit 2). */
function program(): { root: Command; out: () => string } {
  let text = '';
  const root = buildProgram(() => undefined);
  const capture = (c: Command) => {
    c.configureOutput({ writeOut: (s) => void (text += s), writeErr: (s) => void (text += s) });
    c.commands.forEach(capture);
  };
  capture(root);
  return { root, out: () => text };
}

async function parse(args: string[]): Promise<{ code: string; exitCode: number; text: string }> {
  const { root, out } = program();
  try {
    await root.parseAsync(['node', 'main', ...args]);
  } catch (err) {
    if (err instanceof CommanderError) return { code: err.code, exitCode: err.exitCode, text: out() };
    throw err;
  }
  return { code: 'none', exitCode: 0, text: out() };
}

const COMMANDS = [
  ['serve'], ['worker'], ['local'], ['migrate'], ['rotate-token-key'], ['verify-chain'],
  ['export'], ['export', 'saft'], ['export', 'archive'], ['export', 'records'], ['replay-dead'], ['keys'], ['keys', 'create'],
];

describe('cli program', () => {
  it('lists every command; each has --help', async () => {
    const top = await parse(['--help']);
    expect(top.code).toBe('commander.helpDisplayed');
    for (const name of ['serve', 'worker', 'local', 'migrate', 'rotate-token-key', 'verify-chain', 'export', 'replay-dead', 'keys']) expect(top.text).toContain(name);
    expect(top.text).toContain('Exit codes: 0 ok; 1 verification failed or nothing found; 2 usage error; 78 configuration error.');
    for (const cmd of COMMANDS) {
      const h = await parse([...cmd, '--help']);
      expect(h.code, cmd.join(' ')).toBe('commander.helpDisplayed');
      expect(h.text).toContain(`Usage: fiscal ${cmd.join(' ')}`);
    }
    expect((await parse(['verify-chain', '--help'])).text).toMatch(/--location <id\.\.\.>[\s\S]*--issuer <tax_id>[\s\S]*--environment <env>/);
    expect((await parse(['replay-dead', '--help'])).text).toMatch(/--account[\s\S]*--system[\s\S]*--dry-run/);
  });

  it('refuses unknown commands, unknown options, missing and malformed values', async () => {
    for (const args of [['bogus'], ['verify-chain', '--nope'], ['export', 'saft', '--location', 'x'], ['verify-chain', '--environment', 'prod'], ['keys', 'create', '--email', 'not-an-email']]) {
      const r = await parse(args);
      expect(r.code, args.join(' ')).not.toBe('none');
      expect(r.code).not.toBe('commander.helpDisplayed');
      expect(r.exitCode).not.toBe(0);
    }
  });

  it('keys create: the account name and e-mail follow sign-up\'s rules (usage error before the store is opened)', async () => {
    const email = ['--email', 'ops@example.com'];
    for (const [args, message] of [
      [['--new-account', '', ...email], 'the account name must be 1-100 characters (not blank).'],
      [['--new-account', '   ', ...email], 'the account name must be 1-100 characters (not blank).'],
      [['--new-account', 'x'.repeat(101), ...email], 'the account name must be 1-100 characters (not blank).'],
      [['--new-account', 'Ops', '--email', `${'a'.repeat(245)}@example.com`], 'not an e-mail address (at most 254 characters).'],
      [['--new-account', 'Ops', '--email', 'ops@example'], 'not an e-mail address (at most 254 characters).'],
      [['--new-account', 'Ops', '--email', 'ops @example.com'], 'not an e-mail address (at most 254 characters).'],
    ] as const) {
      const r = await parse(['keys', 'create', ...args]);
      expect(r.code, args.join(' ')).toBe('commander.invalidArgument');
      expect(r.exitCode).not.toBe(0);
      expect(r.text).toContain(message);
    }
    // --email with an existing account is a mistake, not ignored.
    const err = await parse(['keys', 'create', '--account', '00000000-0000-4000-8000-000000000000', ...email]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExitError);
    expect(err).toMatchObject({ code: EXIT.usage, message: '--email goes with --new-account: an existing account keeps its billing email' });
  }, 60_000); // the last case loads the operator's module (the whole service)

  it('verify-chain: an empty --issuer is a usage error (exit 2) before the store is opened', async () => {
    for (const issuer of ['', '  ']) {
      const err = await parse(['verify-chain', '--issuer', issuer]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ExitError);
      expect(err).toMatchObject({ code: EXIT.usage, message: '--issuer must not be empty' });
    }
  });
});
