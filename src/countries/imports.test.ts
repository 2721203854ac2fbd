/**
 * Plug-ins read the core's services only through what the core hands them (`ProcessorDeps`,
 * `SubmitContext`, the claim's rows), never by importing src/services: a service loads the
 * registry, which loads the plug-ins (docs/decisions.md, "Processors come from the
 * plug-ins"), and a plug-in that reads a service's helper reads it as the core does not
 * hand it (the LROE grouping read the kept issuer itself until the batch claim handed it).
 * Type-only imports included: the contract types say what a plug-in gets.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const COUNTRIES = path.dirname(fileURLToPath(import.meta.url));
const SERVICES = path.resolve(COUNTRIES, '..', 'services');
const IMPORT = /^\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/gm;

describe('plug-ins', () => {
  it('import nothing from src/services', () => {
    const offending: string[] = [];
    for (const rel of fs.readdirSync(COUNTRIES, { recursive: true, encoding: 'utf8' })) {
      if (!rel.endsWith('.ts') || rel.endsWith('.test.ts')) continue;
      const file = path.join(COUNTRIES, rel);
      for (const m of fs.readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const target = path.resolve(path.dirname(file), m[1]!);
        if (target === SERVICES || target.startsWith(SERVICES + path.sep)) offending.push(`${rel}: ${m[1]}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
