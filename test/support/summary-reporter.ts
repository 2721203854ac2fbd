import type { Reporter, SerializedError, TestModule } from 'vitest/node';

/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, that CI
 * tooling reads regardless of the runner's own formatting; before it, the slowest test
 * files (CI must stay under 20 minutes: this says where the time goes).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError> = []): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      // A file that failed outside its tests (an import error, a failing beforeAll) counts once.
      failed += failedHere === 0 && mod.state() === 'failed' ? 1 : failedHere;
    }
    // An error outside any test (a failing global setup, an unhandled rejection) fails the run too.
    failed += unhandledErrors.length;
    const slowest = testModules
      .map((mod) => ({ file: `${mod.project.name}: ${mod.relativeModuleId}`, ms: mod.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 15);
    if (slowest.length > 0) {
      process.stdout.write('\nslowest test files:\n' + slowest.map((s) => `  ${(s.ms / 1000).toFixed(1).padStart(6)} s  ${s.file}`).join('\n') + '\n');
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n\n`);
  }
}
