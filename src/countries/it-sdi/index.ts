import type { FiscalSystem } from '../types.ts';
import { validateSdiConfig } from './config.ts';

export const sdi: FiscalSystem = {
  key: 'it-sdi',
  country: 'IT',
  validateConfig: validateSdiConfig,
  secretConfigFields: [],
};
