/**
 * Child process for durability.test.ts: opens a file-backed PGlite store and commits
 * rows one by one, writing markers to stderr (which strace sees as write(2, …)) and an
 * "ACK n" line to stdout after each commit returns.
 * argv: <durable|stock> <dataDir> <commits>
 */
import { PGlite } from '@electric-sql/pglite';
import { openPgliteDb } from '../../src/store/pglite-db.ts';

const [mode, dataDir, n] = process.argv.slice(2);
const commits = Number(n);

const db =
  mode === 'durable'
    ? await openPgliteDb(dataDir)
    : await (async () => {
        const pg = await PGlite.create({ dataDir }); // PGlite as shipped, the control
        return { query: (sql: string, p?: unknown[]) => pg.query(sql, p), close: () => pg.close() };
      })();

await db.query('CREATE TABLE IF NOT EXISTS receipts (n int PRIMARY KEY, body text NOT NULL)');
process.stderr.write('DURABILITY-START\n');
for (let i = 1; i <= commits; i++) {
  await db.query('INSERT INTO receipts (n, body) VALUES ($1, $2)', [i, `receipt ${i}`]);
  process.stdout.write(`ACK ${i}\n`);
}
process.stderr.write('DURABILITY-END\n');
if (process.env.HOLD_OPEN) await new Promise(() => {}); // wait to be killed
await db.close();
