import { describe, expect, it } from 'vitest';
import { SYSTEMS } from '../countries/registry.ts';
import { checkProcessors, createBatchProcessors } from './registry.ts';
import type { BatchProcessor, ProcessorDeps } from './types.ts';

/** Building a processor touches none of its deps (they are used when it runs). */
const deps = {} as ProcessorDeps;

const processor = (name: string, cron = '0 2 * * *'): BatchProcessor => ({
  name, country: 'ES', cron, scopesWithWork: async () => [], run: async () => {},
});

describe('batch registry', () => {
  it('the processors are those the registered systems contribute: TicketBAI spain/lroe, Documento Commerciale italy/corrispettivi, NF525 france/closures, SAF-T portugal/saft', () => {
    const processors = createBatchProcessors(deps);
    expect(processors.map((p) => [p.name, p.country, p.cron])).toEqual([['spain/lroe', 'ES', '0 2 * * *'], ['italy/corrispettivi', 'IT', '0 1 * * *'], ['france/closures', 'FR', '0 1 * * *'], ['portugal/saft', 'PT', '0 2 1 * *']]);
    expect(processors.map((p) => p.name)).toEqual(SYSTEMS.flatMap((s) => s.processors?.(deps) ?? []).map((p) => p.name));
    expect(checkProcessors(processors)).toBe(processors);
  });

  it('every name is `<country>/<name>`, each country its system\'s', () => {
    for (const s of SYSTEMS) {
      for (const p of s.processors?.(deps) ?? []) {
        expect(p.name).toMatch(/^[a-z]+\/[a-z0-9_-]+$/);
        expect(p.country).toBe(s.country);
      }
    }
  });

  it('refuses two processors of one name, and a cron the scheduler cannot run', () => {
    expect(() => checkProcessors([processor('spain/lroe'), processor('spain/lroe')])).toThrow('batch processor spain/lroe is registered twice');
    expect(() => checkProcessors([processor('france/closures', '*/5 * * * *')])).toThrow(/cron minute/);
  });
});
