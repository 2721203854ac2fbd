/**
 * `GET /v1/locations/{id}/corrispettivi?date=YYYY-MM-DD` (DECISIONS "Files an inspector
 * asks for"): the day's DatiCorrispettivi of the location's register.
 * - The day was built for sending (whatever its status): the stored file, byte for byte
 *   (what AdE received or will receive). `X-Corrispettivi-Status` says pending / sent /
 *   accepted / rejected, `X-Corrispettivi-Id-Operazione` AdE's id once accepted.
 * - Not built yet (today, or a closed day the daily run has not reached): built now from
 *   the day's transactions, with the register's next Progressivo and signed at this time
 *   (`X-Corrispettivi-Status: not_sent`); today's file holds the takings so far.
 * - No document that day: 404.
 */
import { notFound } from '../../../core/errors.ts';
import { corrispettiviRepo } from '../../../store/repos/corrispettivi-repo.ts';
import type { LocationFile } from '../../types.ts';
import { buildDay, matricolaOf, prepareDay, sealKey } from './day.ts';

export const CORRISPETTIVI_FILE: LocationFile = {
  path: 'corrispettivi',
  param: { name: 'date', kind: 'date' },
  contentType: 'application/xml; charset=utf-8',
  summary: "Italy Documento Commerciale: the day's DatiCorrispettivi (daily takings) of the location's register, signed; the stored file once built for sending, else built on demand",
  async produce(deps, { location, value: day, environment }) {
    const matricola = matricolaOf(location);
    if (matricola === undefined) throw notFound('the location names no register (country_config.pem_matricola)');
    const key = { locationId: location.id, environment, matricola, day };
    const stored = await corrispettiviRepo.get(deps.db, key);
    if (stored) {
      return {
        body: stored.xml,
        headers: {
          'x-corrispettivi-status': stored.status,
          ...(stored.id_operazione ? { 'x-corrispettivi-id-operazione': stored.id_operazione } : {}),
        },
      };
    }
    const prepared = await prepareDay(deps.db, location, environment, day);
    if (prepared === undefined) throw notFound(`no corrispettivi for ${day}: the register issued no documents that day`);
    const seal = await sealKey(deps.signingKeys, location, environment, prepared.mode);
    const progressivo = await corrispettiviRepo.nextProgressivo(deps.db, key);
    return { body: buildDay(prepared, matricola, progressivo, environment, seal, deps.clock.now()), headers: { 'x-corrispettivi-status': 'not_sent' } };
  },
};
