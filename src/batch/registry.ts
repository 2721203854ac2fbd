/**
 * The batch processors this service runs (spec "Batch": "Runs all registered processors in
 * sequence. Registered: `spain/lroe`"; DECISIONS "Batch": more may register, e.g.
 * `portugal/saft` monthly, `france/closures`): those the fiscal systems of
 * countries/registry.ts contribute (`FiscalSystem.processors`), built from the one set of
 * generic deps. A system adds a processor in its own folder; nothing here names one.
 */
import { SYSTEMS } from '../countries/registry.ts';
import { parseCron } from './schedule.ts';
import type { BatchProcessor, ProcessorDeps } from './types.ts';

/** Every processor of every registered system, in the registry's order. */
export function createBatchProcessors(deps: ProcessorDeps): BatchProcessor[] {
  return SYSTEMS.flatMap((s) => s.processors?.(deps) ?? []);
}

/** Refuses a list the scheduler could not run: a bad cron, or two processors of one name. */
export function checkProcessors(processors: readonly BatchProcessor[]): readonly BatchProcessor[] {
  const names = new Set<string>();
  for (const p of processors) {
    if (names.has(p.name)) throw new Error(`batch processor ${p.name} is registered twice`);
    names.add(p.name);
    parseCron(p.cron);
  }
  return processors;
}
