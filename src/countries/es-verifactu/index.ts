import type { FiscalSystem } from '../types.ts';
import { validateVerifactuConfig } from './config.ts';

export const verifactu: FiscalSystem = {
  key: 'es-verifactu',
  country: 'ES',
  validateConfig: validateVerifactuConfig,
  secretConfigFields: [],
};
