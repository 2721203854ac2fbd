/**
 * Stub AEAT for SII: an accepted submission returns the CSV, which becomes the fiscal id.
 * `reject:<code>` is read as the real client reads AEAT's code (response.ts): 3000 is a
 * duplicate, and 3001 too on a baja (`BAJA_HELD_CODE`: the invoice is already off the
 * book); on an alta 3001 is a refusal.
 */
import { withDuplicates } from '../es/sandbox.ts';
import { derivedAlnum, type SandboxSpec } from '../shared/sandbox.ts';
import type { StoredRecord } from '../types.ts';
import { SII_CODES } from './codes.ts';
import { BAJA_HELD_CODE } from './response.ts';

const spec = (duplicates: readonly string[]): SandboxSpec => ({
  system: 'es-sii',
  authority: 'AEAT',
  codes: withDuplicates(SII_CODES, duplicates),
  accept: (record) => {
    const csv = derivedAlnum(record.transactionId, 'aeat-csv', 16);
    return { fiscalId: csv, response: { EstadoEnvio: 'Correcto', EstadoRegistro: 'Correcto', CSV: csv } };
  },
});

const HELD = Object.entries(SII_CODES).filter(([, c]) => c.duplicate === true).map(([code]) => code);
const ALTA = spec(HELD);
const BAJA = spec([...HELD, BAJA_HELD_CODE]);

/** The stub for an alta (`record`) or a baja (`cancellation`). */
export const siiSandboxFor = (record: Pick<StoredRecord, 'kind'>): SandboxSpec => (record.kind === 'cancellation' ? BAJA : ALTA);
