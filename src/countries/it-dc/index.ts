import type { FiscalSystem } from '../types.ts';
import { validateDcConfig } from './config.ts';

export const documentoCommerciale: FiscalSystem = {
  key: 'it-dc',
  country: 'IT',
  validateConfig: validateDcConfig,
  secretConfigFields: [],
};
