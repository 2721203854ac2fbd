/** Stub AEAT for SII: an accepted submission returns the CSV, which becomes the fiscal id. */
import { derivedAlnum, type SandboxSpec } from '../shared/sandbox.ts';
import { SII_CODES } from './codes.ts';

export const siiSandbox: SandboxSpec = {
  system: 'es-sii',
  authority: 'AEAT',
  codes: SII_CODES,
  accept: (record) => {
    const csv = derivedAlnum(record.transactionId, 'aeat-csv', 16);
    return { fiscalId: csv, response: { EstadoEnvio: 'Correcto', EstadoRegistro: 'Correcto', CSV: csv } };
  },
};
