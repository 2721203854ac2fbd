/**
 * Test-only: golden files, the documents we build (records, requests) kept byte for byte
 * in a `golden/` folder beside the test, so that any change to what we send an authority
 * shows up in review.
 *
 * Each golden file has two copies:
 * - `golden/<stem>.xml`: the exact bytes (signed: the signature covers them). The test
 *   requires the built bytes to equal these.
 * - `golden/<stem>.pretty.xml`: the same document indented (pretty-xml.ts), for reading
 *   and diffing; the test requires it to be the pretty form of the exact copy, so a stale
 *   one fails. Correctness is judged on the exact copy only.
 *
 * Updating: `UPDATE_GOLDEN=1 npx vitest run --project unit <test files>` writes both
 * copies from what the code builds (the exact one only where it changed), then checks
 * them as usual; review the `.pretty.xml` diff before committing. Without it a missing
 * golden file fails the test rather than being written, so that nothing unreviewed is
 * taken as the truth.
 */
import fs from 'node:fs';
import { expect } from 'vitest';
import { prettyXml } from './pretty-xml.ts';

const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** `alta-first.xml` → `alta-first.pretty.xml`. */
export function prettyName(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}.pretty${name.slice(dot)}` : `${name}.pretty`;
}

/**
 * The check for the golden files of one folder:
 * `const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));`
 * then `expectGolden('alta-first.xml', record.body)`.
 */
export function goldenFiles(dir: URL): (name: string, built: string) => void {
  return function expectGolden(name: string, built: string): void {
    const exactFile = new URL(name, dir);
    const prettyFile = new URL(prettyName(name), dir);
    const bytes = Buffer.from(built, 'utf8');
    if (UPDATE) write(dir, exactFile, prettyFile, bytes);

    expect(fs.existsSync(exactFile), `golden/${name} is missing: run the tests with UPDATE_GOLDEN=1`).toBe(true);
    const golden = fs.readFileSync(exactFile);
    const goldenPretty = prettyXml(golden.toString('utf8'));
    const differs = `golden/${name} differs from the built bytes (UPDATE_GOLDEN=1 rewrites it)`;
    // A one-line signed document makes an unreadable diff: show the pretty forms' first.
    if (!golden.equals(bytes)) expect(prettyXml(built), `${differs}; pretty forms compared`).toBe(goldenPretty);
    expect(golden.equals(bytes), differs).toBe(true);

    const stale = `golden/${prettyName(name)} is not the pretty form of golden/${name} (UPDATE_GOLDEN=1 rewrites it)`;
    expect(fs.existsSync(prettyFile), stale).toBe(true);
    expect(fs.readFileSync(prettyFile, 'utf8'), stale).toBe(goldenPretty);
  };
}

function write(dir: URL, exactFile: URL, prettyFile: URL, bytes: Buffer): void {
  fs.mkdirSync(dir, { recursive: true });
  // Left alone when equal: a signed golden file is rewritten only when its bytes change.
  if (!fs.existsSync(exactFile) || !fs.readFileSync(exactFile).equals(bytes)) fs.writeFileSync(exactFile, bytes);
  fs.writeFileSync(prettyFile, prettyXml(bytes.toString('utf8')));
}
