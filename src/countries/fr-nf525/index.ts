import type { FiscalSystem } from '../types.ts';
import { validateNf525Config } from './config.ts';

export const nf525: FiscalSystem = {
  key: 'fr-nf525',
  country: 'FR',
  validateConfig: validateNf525Config,
  secretConfigFields: [],
};
