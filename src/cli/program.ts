/**
 * The command line (`node --import tsx src/main.ts <command>`, docs/cli.md): one
 * `commander` program for the service's own commands (serve, worker, migrate,
 * rotate-token-key) and the operator's tools (verify-chain, export, replay-dead, keys).
 * Actions answer an exit code; main.ts maps errors to theirs (exit.ts).
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { EXIT } from './exit.ts';
import { packageVersion } from './version.ts';

// The commands' modules load the whole service: imported when a command runs, so --help
// and usage errors answer at once.
const operator = () => import('./operator.ts');
const server = () => import('./server.ts');

const environmentOption = (description: string) => new Option('--environment <env>', description).choices(['test', 'live']);

/** Sign-up's rules (POST /v1/accounts: name 1-100 characters once trimmed, not blank; billing_email an e-mail address, at most 254). */
const EMAIL = fullFormats.email as RegExp;
export function accountName(v: string): string {
  const n = [...v.trim()].length;
  if (n < 1 || n > 100) throw new InvalidArgumentError('the account name must be 1-100 characters (not blank).');
  return v;
}
export function billingEmail(v: string): string {
  if (v.length > 254 || !EMAIL.test(v)) throw new InvalidArgumentError('not an e-mail address (at most 254 characters).');
  return v;
}

const EXIT_CODES_HELP = `
Exit codes: 0 ok; 1 verification failed or nothing found; 2 usage error; 78 configuration error.
The store is the server's: DATABASE_URL (PostgreSQL), else the embedded store in DATA_DIR.`;

/**
 * The program. `setExit(code)` receives the code of a command that finished (serve and
 * worker keep running until a signal and set none).
 */
export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('fiscal')
    .description('Fiscalization API: the service and its operator tools')
    .version(packageVersion())
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EXIT_CODES_HELP);
  program.exitOverride();

  program.command('serve').description('run the HTTP API (with the job workers in-process unless WORKERS_IN_PROCESS=false)')
    .action(async () => (await server()).runService('serve'));
  program.command('worker').description('run job workers only (PostgreSQL: any number of processes)')
    .action(async () => (await server()).runService('worker'));
  program.command('local').description('run the local host: the API on 127.0.0.1:8080 over the embedded store, no scheduler (docs/local-host.md)')
    .action(async () => (await server()).runLocal());
  program.command('migrate').description('apply the database migrations and exit')
    .action(async () => setExit((await (await server()).migrateCommand(), EXIT.ok)));
  program.command('rotate-token-key').description('sign offline tokens with a new key')
    .option('--drop-retired', 'also unpublish the retired keys (after a leak)')
    .action(async (o: { dropRetired?: boolean }) => setExit((await (await server()).rotateTokenKeyCommand(o), EXIT.ok)));

  program.command('verify-chain')
    .description('recompute every link and signature of every chain of a location or issuer; report the first break of each chain')
    .option('--location <id...>', 'a location id (several may be given)')
    .option('--issuer <tax_id>', 'every location with this tax id')
    .addOption(environmentOption('only the chains of this environment (default: both)'))
    .option('--json', 'print the report as JSON')
    .addHelpText('after', '\nExit code 0: every chain is intact; 1: a chain is broken, or no such location.')
    .action(async (o) => setExit(await (await operator()).verifyChainCommand(o)));

  const exp = program.command('export').description('files for an inspector (SAF-T, NF525 archive, records)');
  exp.command('saft').description('Portugal: the SAF-T (PT) file of a month')
    .requiredOption('--location <id>', 'a location id')
    .requiredOption('--period <YYYY-MM>', 'the month')
    .addOption(environmentOption('environment of the documents').default('live'))
    .option('--out <file>', 'write to this file (default: stdout)')
    .action(async (o) => setExit((await (await operator()).exportSaftCommand(o), EXIT.ok)));
  exp.command('archive').description('France: a signed NF525 archive')
    .requiredOption('--location <id>', 'a location id')
    .option('--archive-id <id>', 'the archive')
    .option('--latest', 'the newest archive')
    .addOption(environmentOption('environment of the archive').default('live'))
    .option('--out <file>', 'write to this file (default: stdout)')
    .action(async (o) => setExit((await (await operator()).exportArchiveCommand(o), EXIT.ok)));
  exp.command('records').description('the fiscal records of a date range (UTC days of creation), one file each, with index.json')
    .requiredOption('--location <id>', 'a location id')
    .requiredOption('--from <YYYY-MM-DD>', 'first day')
    .requiredOption('--to <YYYY-MM-DD>', 'last day (included)')
    .requiredOption('--out <dir>', 'directory to write into')
    .addOption(environmentOption('only this environment (default: both)'))
    .addHelpText('after', '\nExit code 1: no record in the range.')
    .action(async (o) => setExit(await (await operator()).exportRecordsCommand(o)));

  program.command('replay-dead').description('move dead queue entries back to pending (attempts reset, due now)')
    .option('--account <id>', 'only this account\'s entries')
    .option('--system <key>', 'only entries of transactions of this system (a system key, as the location\'s "system" field shows it)')
    .option('--dry-run', 'print what would move, change nothing')
    .addHelpText('after', '\nExit code 1: no dead entry matched.')
    .action(async (o) => setExit(await (await operator()).replayDeadCommand(o)));

  const keys = program.command('keys').description('API keys without HTTP');
  keys.command('create').description('a root key for an account, or a new account with its first key; printed once (JSON)')
    .option('--account <id>', 'an existing account')
    .option('--new-account <name>', 'create an account with this name (1-100 characters)', accountName)
    .option('--email <email>', 'the new account\'s billing email', billingEmail)
    .addOption(environmentOption('the key\'s environment').default('test'))
    .action(async (o) => setExit((await (await operator()).keysCreateCommand(o), EXIT.ok)));

  return program;
}
