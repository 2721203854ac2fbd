import { badRequest, conflict, forbidden } from '../core/errors.ts';
import { allowsCountry } from '../core/permissions.ts';
import type { LocationForFiscal } from '../countries/types.ts';
import type { Queryable } from '../store/db.ts';
import { locationsRepo, type LocationRow } from '../store/repos/locations-repo.ts';
import type { TransactionRow } from '../store/repos/transactions-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { LocationService } from './locations.ts';

/**
 * The location a transaction was issued at, as a record that follows it needs it (a
 * cancellation, a correction): read as create reads it (cached, with its config's check), or,
 * for a location deleted since, from the store (it still annuls or corrects what it issued).
 * Refused: a location moved to another system than the transaction's (409 `moved`: its config
 * no longer describes it), a key not allowed in the location's country (403), a config that
 * no longer passes its system's checks (400, fixed by a PATCH: spec "Versioning").
 */
export async function issuingLocation(
  locations: LocationService, db: Queryable, auth: Pick<AuthContext, 'permissions'>,
  t: Pick<TransactionRow, 'account_id' | 'location_id' | 'system'>, moved: string,
): Promise<{ row: LocationRow & { system: string }; location: LocationForFiscal }> {
  const cached = await locations.forTransaction(t.account_id, t.location_id);
  const row = cached?.row ?? (await locationsRepo.getById(db, t.location_id));
  if (!row?.system || row.system !== t.system) throw conflict(moved);
  if (!allowsCountry(auth.permissions, row.country)) throw forbidden(`API key is not allowed to act in country ${row.country}`);
  const location = cached?.fiscal ?? locations.toFiscal(row);
  const configError = cached ? cached.configError : locations.configErrorOf(row, location);
  if (configError !== null) throw badRequest(configError);
  return { row: row as LocationRow & { system: string }, location };
}
