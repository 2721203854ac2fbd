/**
 * The batch processors this service runs, one explicit list (spec "Batch": "Runs all
 * registered processors in sequence. Registered: `spain/lroe`"; DECISIONS "Batch": more
 * may register, e.g. `portugal/saft` monthly). Adding one means adding it here.
 */
import { parseCron } from './schedule.ts';
import { createSpainLroeProcessor, type SpainLroeDeps } from './spain-lroe.ts';
import type { BatchProcessor } from './types.ts';

export type BatchProcessorDeps = SpainLroeDeps;

export function createBatchProcessors(deps: BatchProcessorDeps): BatchProcessor[] {
  return [createSpainLroeProcessor(deps)];
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
