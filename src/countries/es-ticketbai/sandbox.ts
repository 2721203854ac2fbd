/**
 * Stub Hacienda Foral. Accepting a TicketBAI invoice adds no id of ours to learn: the
 * TBAI identifier is made locally, so the answer echoes it (Araba/Gipuzkoa `Salida`:
 * `IdentificadorTBAI`, `Estado` 00 = received). Bizkaia receives through LROE batches.
 *
 * `reject:<code>` is a duplicate only where the real client reads that code as one: per
 * service (alta / anulación) and per channel (Araba and Gipuzkoa: response.ts
 * `DUPLICATE_CODES`; Bizkaia's LROE: lroe/response.ts `LROE_DUPLICATE_CODES`). So a
 * cancellation rehearsing `reject:005` (the alta's "already received") is refused, as the
 * Hacienda's 005 on an annulment would be; `reject:019` (B4_2000006 in Bizkaia) is the
 * annulment's own duplicate.
 */
import { withDuplicates } from '../es/sandbox.ts';
import type { SandboxSpec } from '../shared/sandbox.ts';
import type { LocationForFiscal, StoredRecord } from '../types.ts';
import { TICKETBAI_CODES } from './codes.ts';
import { LROE_DUPLICATE_CODES } from './lroe/response.ts';
import { DUPLICATE_CODES, type TicketBaiKind } from './response.ts';

const accept: SandboxSpec['accept'] = (record, ctx) => ({
  response: {
    estado: '00',
    identificador_tbai: record.fiscalId,
    territory: ctx.location.config.territory ?? null,
  },
});

const spec = (duplicates: readonly string[]): SandboxSpec => ({
  system: 'es-ticketbai',
  authority: 'the Hacienda Foral',
  codes: withDuplicates(TICKETBAI_CODES, duplicates),
  accept,
});

const SPECS: Readonly<Record<'realtime' | 'lroe', Readonly<Record<TicketBaiKind, SandboxSpec>>>> = {
  realtime: { alta: spec(DUPLICATE_CODES.alta), anulacion: spec(DUPLICATE_CODES.anulacion) },
  lroe: { alta: spec(LROE_DUPLICATE_CODES.alta), anulacion: spec(LROE_DUPLICATE_CODES.anulacion) },
};

/** The stub that answers `record` for a location of `territory` (Bizkaia: through LROE). */
export function ticketBaiSandboxFor(record: Pick<StoredRecord, 'kind'>, location: Pick<LocationForFiscal, 'config'>): SandboxSpec {
  const kind: TicketBaiKind = record.kind === 'cancellation' ? 'anulacion' : 'alta';
  return SPECS[location.config.territory === 'bizkaia' ? 'lroe' : 'realtime'][kind];
}
