/**
 * Stub AEAT for VERI*FACTU: accepting a submission returns a CSV (código seguro de
 * verificación, 16 uppercase letters and digits), which becomes the fiscal id.
 */
import { derivedAlnum, type SandboxSpec } from '../shared/sandbox.ts';
import { VERIFACTU_CODES } from './codes.ts';

export const verifactuSandbox: SandboxSpec = {
  system: 'es-verifactu',
  authority: 'AEAT',
  codes: VERIFACTU_CODES,
  accept: (record) => {
    const csv = derivedAlnum(record.transactionId, 'aeat-csv', 16);
    return { fiscalId: csv, response: { EstadoEnvio: 'Correcto', EstadoRegistro: 'Correcto', CSV: csv } };
  },
};
