/**
 * What a benchmark run must undo (servers, databases, data directories), undone in
 * reverse order at the end, and also on Ctrl-C so no `bench_*` database is left behind.
 */
export function cleanupStack(interruptMessage: string) {
  const steps: Array<() => Promise<void>> = [];
  const run = async () => {
    while (steps.length) {
      try {
        await steps.pop()!();
      } catch (err) {
        console.error(`cleanup: ${(err as Error).message}`);
      }
    }
  };
  const onSigint = () => {
    console.error(`\ninterrupted: ${interruptMessage}`);
    void run().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSigint);
  return {
    push: (step: () => Promise<void>) => void steps.push(step),
    /** Takes the last step off (the caller ran it, or runs it now). */
    pop: () => steps.pop(),
    /** Undoes everything and stops listening for Ctrl-C. */
    async done() {
      await run();
      process.off('SIGINT', onSigint);
    },
  };
}
