import type { FiscalSystem } from '../types.ts';
import { GREECE_SECRET_FIELDS, validateMyDataConfig } from './config.ts';

export const myData: FiscalSystem = {
  key: 'gr-mydata',
  country: 'GR',
  validateConfig: validateMyDataConfig,
  secretConfigFields: GREECE_SECRET_FIELDS,
};
