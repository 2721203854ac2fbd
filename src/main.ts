import { CommanderError } from 'commander';
import { ConfigError } from './config.ts';
import { EXIT, ExitError } from './cli/exit.ts';
import { buildProgram } from './cli/program.ts';

/**
 * The command line: `serve`, `worker`, `migrate`, `rotate-token-key` and the operator's
 * tools (src/cli/program.ts; docs/cli.md lists commands and exit codes).
 */
let exitCode: number | undefined;
const program = buildProgram((code) => {
  exitCode = code;
});

program.parseAsync(process.argv).then(
  () => {
    // serve and worker keep running; finished commands exit now (open handles or not).
    if (exitCode !== undefined) process.exit(exitCode);
  },
  (err: unknown) => {
    if (err instanceof CommanderError) {
      // --help and --version are not errors; commander has printed the rest.
      process.exit(err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? EXIT.ok : EXIT.usage);
    }
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(EXIT.config);
    }
    if (err instanceof ExitError) {
      console.error(err.message);
      process.exit(err.code);
    }
    console.error(err);
    process.exit(EXIT.failed);
  },
);
