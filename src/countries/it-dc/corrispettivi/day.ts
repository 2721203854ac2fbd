/**
 * One register's day, read from the store and built: what the processor sends and the
 * inspector file serves when nothing was sent yet.
 */
import type { ProcessorDeps } from '../../../batch/types.ts';
import type { Queryable } from '../../../store/db.ts';
import { corrispettiviRepo } from '../../../store/repos/corrispettivi-repo.ts';
import type { LocationForFiscal, SigningKey } from '../../types.ts';
import { configString } from '../../shared/config-fields.ts';
import { buildCorrispettivi, romeDayRange } from './build.ts';
import { aggregateDay, type DayTotals, type DayTransaction } from './totals.ts';

export const DC_SYSTEM = 'it-dc';

export interface DayRow extends DayTransaction {
  sandbox_mode: 'stub' | 'authority' | null;
}

export interface PreparedDay {
  totals: DayTotals;
  /** Sent to AdE (live keys, or a test day with a transaction made with `X-Svc-Sandbox: authority`) or answered by the stub. */
  mode: 'stub' | 'authority';
}

/** The register of a location: `pem_matricola`. */
export const matricolaOf = (location: LocationForFiscal): string | undefined => configString(location.config, 'pem_matricola');

/** The day's transactions and totals; undefined when the register issued nothing that day. */
export async function prepareDay(q: Queryable, location: LocationForFiscal, environment: 'test' | 'live', day: string): Promise<PreparedDay | undefined> {
  const { from, to } = romeDayRange(day);
  const rows = await corrispettiviRepo.dayTransactions<DayRow>(q, { locationId: location.id, environment, system: DC_SYSTEM, from, to });
  if (rows.length === 0) return undefined;
  const mode = environment === 'live' || rows.some((r) => r.sandbox_mode === 'authority') ? 'authority' : 'stub';
  return { totals: aggregateDay(day, rows), mode };
}

/**
 * The seal: the location's uploaded certificate; for a stub-mode test day without one, the
 * account's sandbox certificate (as the stub's documents are signed: services/signing-keys.ts).
 * Throws the signing-key service's 400 when there is none.
 */
export function sealKey(keys: Pick<ProcessorDeps['signingKeys'], 'forRecord'>, location: LocationForFiscal, environment: 'test' | 'live', mode: 'stub' | 'authority'): Promise<SigningKey> {
  return keys.forRecord(location, environment, mode);
}

export function buildDay(p: PreparedDay, matricola: string, progressivo: number, environment: 'test' | 'live', key: SigningKey, now: Date): string {
  return buildCorrispettivi({ totals: p.totals, matricola, progressivo, environment, key, now }).xml;
}
