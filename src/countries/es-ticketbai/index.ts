import type { FiscalSystem } from '../types.ts';
import { validateTicketBaiConfig } from './config.ts';

export const ticketBai: FiscalSystem = {
  key: 'es-ticketbai',
  country: 'ES',
  validateConfig: validateTicketBaiConfig,
  secretConfigFields: [],
};
