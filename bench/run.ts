/**
 * Runs the benchmarks: `npm run bench` (all), `npm run bench -- locations` or `-- transactions` (by name).
 * Settings come from the environment (BENCH_DURATION, BENCH_CONNECTIONS, BENCH_WARMUP…):
 * see bench/README.md. Exits 1 if a benchmark fails (e.g. a non-2xx answer).
 */
import { main as locations } from './locations.ts';
import { main as transactions } from './transactions.ts';

const BENCHMARKS: Record<string, () => Promise<unknown>> = {
  locations,
  transactions,
};

const wanted = process.argv.slice(2);
const unknown = wanted.filter((n) => !(n in BENCHMARKS));
if (unknown.length) {
  console.error(`unknown benchmark: ${unknown.join(', ')} (known: ${Object.keys(BENCHMARKS).join(', ')})`);
  process.exit(2);
}

for (const name of wanted.length ? wanted : Object.keys(BENCHMARKS)) {
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
