import fs from 'node:fs';

/** The service's version (package.json), as records and /health report it. */
export function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}
