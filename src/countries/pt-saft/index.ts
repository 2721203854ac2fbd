import type { FiscalSystem } from '../types.ts';
import { validateSaftConfig } from './config.ts';

export const saft: FiscalSystem = {
  key: 'pt-saft',
  country: 'PT',
  validateConfig: validateSaftConfig,
  secretConfigFields: [],
};
