/**
 * Stub Hacienda Foral. Accepting a TicketBAI invoice adds no id of ours to learn: the
 * TBAI identifier is made locally, so the answer echoes it (Araba/Gipuzkoa `Salida`:
 * `IdentificadorTBAI`, `Estado` 00 = received). Bizkaia receives through LROE batches.
 */
import type { SandboxSpec } from '../shared/sandbox.ts';
import { TICKETBAI_CODES } from './codes.ts';

export const ticketBaiSandbox: SandboxSpec = {
  system: 'es-ticketbai',
  authority: 'the Hacienda Foral',
  codes: TICKETBAI_CODES,
  accept: (record, ctx) => ({
    response: {
      estado: '00',
      identificador_tbai: record.fiscalId,
      territory: ctx.location.config.territory ?? null,
    },
  }),
};
