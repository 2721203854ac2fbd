/**
 * What the daily takings add to the Documento Commerciale plug-in (../index.ts): the
 * `italy/corrispettivi` batch processor and the inspector's file.
 */
import type { FiscalSystem } from '../../types.ts';
import { CORRISPETTIVI_FILE } from './files.ts';
import { createCorrispettiviProcessor } from './processor.ts';

export const corrispettivi: Pick<FiscalSystem, 'processors' | 'locationFiles'> = {
  processors: (deps) => [createCorrispettiviProcessor(deps)],
  locationFiles: [CORRISPETTIVI_FILE],
};
