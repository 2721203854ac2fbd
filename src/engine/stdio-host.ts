/**
 * The stdio host (`npm run engine`; DECISIONS "Entry names"): one JSON envelope per line on
 * stdin, one response line on stdout, in request order, so a Java, C# or C program can run
 * the engine as a child process. Logs go to stderr only (stdout carries answers and nothing
 * else). Requests are answered in order but run side by side (a POS may pipeline many
 * sales); a line is written once its answer is ready and every earlier answer was written.
 * At EOF: the calls under way finish, the engine shuts down (worker stopped, store
 * closed), and the process exits 0.
 */
import readline from 'node:readline';
import { createEngine } from './engine.ts';

const engine = createEngine();
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
let tail: Promise<void> = Promise.resolve();

rl.on('line', (line) => {
  if (line.trim() === '') return;
  const answer = engine.call(line);
  // Ordered output: each write waits for the previous one.
  tail = tail.then(async () => {
    const text = await answer;
    await new Promise<void>((resolve) => (process.stdout.write(text + '\n') ? resolve() : process.stdout.once('drain', resolve)));
  });
});

rl.on('close', () => {
  void (async () => {
    await tail;
    if (engine.initialized) await engine.call({ version: 1, method: 'shutdown' });
    process.exit(0);
  })();
});
