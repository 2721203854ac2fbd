/**
 * Runs the benchmarks: `npm run bench` (locations and transactions), `npm run bench -- transactions` (by name),
 * `npm run bench -- transactions-profile` (the diagnostic, by name only), `npm run bench -- fleet` (by name).
 * Settings come from the environment (BENCH_DURATION, BENCH_CONNECTIONS, BENCH_WARMUP…):
 * see bench/README.md. Exits 1 if a benchmark fails (e.g. a non-2xx answer).
 */
import { main as fleet } from './fleet.ts';
import { main as engine } from './engine.ts';
import { main as locations } from './locations.ts';
import { main as transactions } from './transactions.ts';
import { main as transactionsProfile } from './transactions-profile.ts';

const BENCHMARKS: Record<string, () => Promise<unknown>> = {
  locations,
  transactions,
  fleet,
  engine,
  // A diagnostic, not a benchmark: run by name only (instruments the service; see the file).
  'transactions-profile': transactionsProfile,
};
/** Run by `npm run bench` with no name. */
const DEFAULT = ['locations', 'transactions'];

const wanted = process.argv.slice(2);
const unknown = wanted.filter((n) => !(n in BENCHMARKS));
if (unknown.length) {
  console.error(`unknown benchmark: ${unknown.join(', ')} (known: ${Object.keys(BENCHMARKS).join(', ')})`);
  process.exit(2);
}

for (const name of wanted.length ? wanted : DEFAULT) {
  const started = Date.now();
  console.error(`[bench] ${name}`);
  try {
    await BENCHMARKS[name]!();
  } catch (err) {
    console.error(`[bench] ${name} FAILED\n${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`);
    process.exit(1);
  }
  console.error(`[bench] ${name} done in ${Math.round((Date.now() - started) / 1000)} s`);
}
