import { buildProgram } from './cli/program.ts';
import { exitCodeFor, verboseErrors } from './cli/report.ts';

/**
 * The command line: `serve`, `worker`, `migrate`, `rotate-token-key` and the operator's
 * tools (src/cli/program.ts; docs/cli.md lists commands and exit codes). A failure ends
 * with one line on stderr and its exit code (src/cli/report.ts), never a stack trace.
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
    process.exit(exitCodeFor(err, { write: (line) => console.error(line), verbose: verboseErrors(process.env) }));
  },
);
