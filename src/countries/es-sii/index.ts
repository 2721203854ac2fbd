import type { FiscalSystem } from '../types.ts';
import { validateSiiConfig } from './config.ts';

export const sii: FiscalSystem = {
  key: 'es-sii',
  country: 'ES',
  validateConfig: validateSiiConfig,
  secretConfigFields: [],
};
