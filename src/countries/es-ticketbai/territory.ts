/**
 * The three TicketBAI territories. Each Basque provincial treasury (Hacienda Foral)
 * runs its own TicketBAI service, so the territory decides endpoint, schema variant
 * and (for Bizkaia) the LROE batch flow.
 *
 * The codes are the INE province codes (Instituto Nacional de Estadística), which is
 * how the engine config and the location reference write them.
 */
import { badRequest } from '../../core/errors.ts';
import type { ConfigObject } from '../shared/config-fields.ts';

export const TERRITORIES = { gipuzkoa: '20', araba: '01', bizkaia: '48' } as const;
export type Territory = keyof typeof TERRITORIES;
export type TerritoryCode = (typeof TERRITORIES)[Territory];

const INVALID = 'country_config.territory must be one of gipuzkoa, araba, bizkaia (or 20, 01, 48)';

const byName = (value: string): Territory | undefined =>
  (Object.keys(TERRITORIES) as Territory[]).find((name) => name === value.toLowerCase());
const byCode = (value: string): Territory | undefined =>
  (Object.keys(TERRITORIES) as Territory[]).find((name) => TERRITORIES[name] === value);

/**
 * Reads `territory` (a name in any case, or an INE code) and the optional
 * `territory_code`, which must then name the same territory.
 * Returns both forms so every consumer finds the one it needs.
 */
export function readTerritory(config: ConfigObject): { territory: Territory; territory_code: TerritoryCode } {
  const raw = config.territory;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    throw badRequest('country_config.territory is required for ticketbai');
  }
  if (typeof raw !== 'string') throw badRequest(INVALID);
  const value = raw.trim();
  const territory = byName(value) ?? byCode(value);
  if (territory === undefined) throw badRequest(INVALID);

  const rawCode = config.territory_code;
  if (rawCode !== undefined && rawCode !== null && !(typeof rawCode === 'string' && rawCode.trim() === '')) {
    if (typeof rawCode !== 'string' || rawCode.trim() !== TERRITORIES[territory]) {
      throw badRequest('country_config.territory_code does not match territory');
    }
  }
  return { territory, territory_code: TERRITORIES[territory] };
}
