/**
 * The files an inspector asks for about one location (DECISIONS "Files an inspector asks
 * for"), whatever system produces them: each registered plug-in's `locationFiles`
 * (countries/types.ts `LocationFile`). This service knows no country: it checks the
 * location (the caller's account, deleted or not: otherwise 404; see `locate`), that its system offers a
 * file at that path (otherwise 404), and the parameter's form (otherwise 400), then asks
 * the plug-in.
 */
import { badRequest, notFound } from '../core/errors.ts';
import type { FiscalSystem, LocationFile, LocationFileBody, LocationFileDeps } from '../countries/types.ts';
import { isIsoDate } from '../countries/shared/dates.ts';
import { locationsRepo } from '../store/repos/locations-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { LocationService } from './locations.ts';

export interface LocationFileServiceDeps extends LocationFileDeps {
  locations: Pick<LocationService, 'toFiscal'>;
  systems: readonly FiscalSystem[];
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

type ValueParam = Extract<LocationFile['param'], { name: string }>;

/** The 400 of a missing parameter, or of one given that is not a date (month) that exists. */
export function paramError(param: ValueParam, given: boolean): string {
  const form = param.kind === 'date' ? 'a date in the form YYYY-MM-DD' : 'a month in the form YYYY-MM';
  return given ? `${param.name} must be ${form}` : `${param.name} is required: ${form}`;
}

/**
 * Years a fiscal file can be asked for. No system here keeps books from before 1970, and the
 * plug-ins turn the day or month into instants of the country's zone: year 1 (no midnight in
 * the zone's old local mean time) and 9999-12-31 (its next day is in the year 10000, which
 * no ISO date-time the store reads can hold) were 500s (platform audit).
 */
const FIRST_YEAR = 1970;
const LAST_YEAR = 9998;

export function checkParam(param: ValueParam, value: unknown): string {
  const ok = typeof value === 'string' && (param.kind === 'date' ? isIsoDate(value) : MONTH.test(value));
  if (!ok) throw badRequest(paramError(param, value !== undefined && value !== ''));
  const year = Number((value as string).slice(0, 4));
  if (year < FIRST_YEAR || year > LAST_YEAR) {
    throw badRequest(param.kind === 'date'
      ? `${param.name} must be a date from ${FIRST_YEAR}-01-01 to ${LAST_YEAR}-12-31`
      : `${param.name} must be a month from ${FIRST_YEAR}-01 to ${LAST_YEAR}-12`);
  }
  return value as string;
}

/**
 * A paged list's `limit` and `offset` (the route's schema has validated and defaulted
 * them already; checked again for other callers), with the spec's bounds and messages.
 */
export function checkPage(query: Record<string, unknown>): { limit: number; offset: number } {
  const num = (v: unknown, dflt: number) => (v === undefined ? dflt : typeof v === 'string' && /^[0-9]+$/.test(v) ? Number(v) : v);
  const limit = num(query.limit, 20);
  const offset = num(query.offset, 0);
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 100) throw badRequest('limit must be an integer between 1 and 100');
  if (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0 || offset > 10000) throw badRequest('offset must be an integer between 0 and 10000');
  return { limit, offset };
}

export function createLocationFileService(deps: LocationFileServiceDeps) {
  /** Every path any system serves, with the files of that path (one per system offering it). */
  const byPath = new Map<string, Array<{ system: string; file: LocationFile }>>();
  for (const s of deps.systems) {
    for (const file of s.locationFiles ?? []) {
      const list = byPath.get(file.path) ?? [];
      list.push({ system: s.key, file });
      byPath.set(file.path, list);
    }
  }

  /**
   * The caller's location (404 when another account's or unknown) and what its system
   * serves at `path`, picked from its file by `pick` (404 when it serves nothing).
   *
   * A deleted location's files are served too: deleting a location (closing a shop) ends
   * its sales, not the merchant's duty to show its books: they are kept for years (France:
   * six, Livre des procédures fiscales art. L102 B), and an inspector asks for them whether
   * the register still sells or not.
   */
  async function locate<T>(auth: AuthContext, locationId: string, path: string, pick: (file: LocationFile) => T | undefined) {
    const row = await locationsRepo.getOwned(deps.db, auth.accountId, locationId);
    if (!row) throw notFound('location not found');
    const entry = (byPath.get(path) ?? []).find((o) => o.system === row.system);
    const file = entry ? pick(entry.file) : undefined;
    if (file === undefined) throw notFound(`this location's fiscal system (${row.system ?? 'none'}) has no ${path} file`);
    return { file, location: deps.locations.toFiscal(row) };
  }

  return {
    /** The distinct paths, with the first file's description (routes and API reference). */
    paths(): Array<{ path: string; files: LocationFile[] }> {
      return [...byPath.entries()].map(([path, list]) => ({ path, files: list.map((l) => l.file) }));
    },

    async produce(auth: AuthContext, locationId: string, path: string, query: Record<string, unknown>): Promise<LocationFileBody & { contentType: string }> {
      const { file, location } = await locate(auth, locationId, path, (f) => f);
      const param = file.param;
      const input = 'name' in param
        ? { value: checkParam(param, query[param.name]) }
        : { value: '', page: checkPage(query) };
      const out = await file.produce(deps, { location, ...input, environment: auth.environment });
      return { ...out, contentType: file.contentType };
    },

    /**
     * One item of a listed file by its id (`LocationFile.item`): the same location checks;
     * a system without items at this path, or an unknown id (the plug-in's 404): 404.
     */
    async produceItem(auth: AuthContext, locationId: string, path: string, itemId: string): Promise<LocationFileBody & { contentType: string }> {
      const { file: item, location } = await locate(auth, locationId, path, (f) => f.item);
      const out = await item.produce(deps, { location, value: '', environment: auth.environment, itemId });
      return { ...out, contentType: item.contentType };
    },
  };
}

export type LocationFileService = ReturnType<typeof createLocationFileService>;
