import { ApiError, badRequest, forbidden, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { allowsCountry } from '../core/permissions.ts';
import { resolveLocationSystem, getSystem } from '../countries/registry.ts';
import type { FiscalSystem, LocationChange, LocationChangeDeps, LocationConfigChange, LocationForFiscal } from '../countries/types.ts';
import { isDeepStrictEqual } from 'node:util';
import type { Country } from '../core/country.ts';
import { isSealed, maskSecret, seal, unseal } from '../crypto/sealed.ts';
import { nifMismatchWarning } from '../certificates/nif-match.ts';
import { certificatesRepo } from '../store/repos/certificates-repo.ts';
import { locationsRepo, type LocationFilter, type LocationRow } from '../store/repos/locations-repo.ts';
import { transactionsRepo } from '../store/repos/transactions-repo.ts';
import { InvalidatingCache } from '../core/invalidating-cache.ts';
import type { ChangeFeed } from '../store/change-feed.ts';
import type { Queryable } from '../store/db.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';
import type { ListResult, Page } from './pagination.ts';

export interface LocationView {
  id: string;
  account_id: string;
  name: string;
  country: string;
  system: string | null;
  address: string | null;
  tax_id: string | null;
  country_config: Record<string, unknown>;
  status: 'active' | 'inactive';
  cert_expiry: Date | null;
  created_at: Date;
  updated_at: Date;
  /** On create and PATCH: e.g. the referenced certificate's NIF is not the location's tax_id. */
  warnings?: string[];
}

export interface CreateLocationInput {
  name: string;
  country: string;
  address?: string | undefined;
  tax_id?: string | undefined;
  country_config?: unknown;
}

export interface PatchLocationInput {
  name?: string | undefined;
  address?: string | null | undefined;
  country_config?: unknown;
  status?: 'active' | 'inactive' | undefined;
  country?: string | undefined;
  tax_id?: string | undefined;
}

const secretAad = (locationId: string, field: string) => `location:${locationId}:${field}`;

/** A location as a create needs it: the row, and its fiscal view with secrets unsealed. */
export interface CachedLocation {
  row: LocationRow;
  fiscal: LocationForFiscal;
  /** The country check its stored config fails (`configErrorOf`), or null. */
  configError: string | null;
}

/**
 * Every create reads its location: cached per id, dropped when the database reports a change
 * (a PATCH, a deactivation, a deletion; store/change-feed.ts) on any node. Without a live
 * change feed every create reads the database.
 */
const LOCATION_CACHE = { ttlMs: 300_000, maxEntries: 50_000 };

/**
 * The certificate a location's config names: the first of its system's `certificateFields`
 * that is set (e.g. a Spanish system's `certificate_id`); stored as the
 * location's `certificate_ref`, which the cert_expiry trigger and the certificates repo read.
 */
export function certificateRefOf(system: Pick<FiscalSystem, 'certificateFields'>, config: Record<string, unknown>): string | null {
  const value = system.certificateFields.map((f) => config[f]).find((v) => v !== undefined && v !== null);
  return typeof value === 'string' ? value : null;
}

export interface LocationServiceOptions {
  /**
   * Called in the same database transaction as a change of the account's active locations
   * (one created, deleted, or its status changed): HardwareDevice mode re-quotes the
   * subscription's location floor (billing/floor-requote.ts). Absent: nothing to do.
   */
  onActiveLocationsChanged?: (q: Queryable, accountId: string, now: Date) => Promise<void>;
  /**
   * What a system's `onLocationChanged` is handed besides the store (its journal is a chain:
   * the ledger, the location's record key, this software's identity). Read when a change
   * is committed: the runtime builds the ledger after this service.
   */
  changeDeps?: () => Omit<LocationChangeDeps, 'db' | 'clock' | 'log'>;
}

/**
 * The `country_config` fields whose stored value changes, in the order of the new config
 * then the fields it drops. `before`/`after` are the plain values (`beforeConfig` with its
 * secrets unsealed); a secret field is named, never valued.
 */
export function configChanges(beforeConfig: Record<string, unknown>, afterConfig: Record<string, unknown>, secrets: readonly string[]): LocationConfigChange[] {
  const fields = [...new Set([...Object.keys(afterConfig), ...Object.keys(beforeConfig)])];
  return fields.flatMap((field) => {
    const before = beforeConfig[field];
    const after = afterConfig[field];
    if (isDeepStrictEqual(before, after)) return [];
    const secret = secrets.includes(field);
    return [secret ? { field, secret } : { field, secret, ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) }];
  });
}

export function createLocationService(deps: Deps, changes?: ChangeFeed, opts: LocationServiceOptions = {}) {
  const { db, clock, keys } = deps;
  const onActive = opts.onActiveLocationsChanged;
  /** `write`, and the hook in its transaction when `changed` (without a hook, just `write`). */
  async function withActiveChange<T>(changed: boolean, accountId: string, now: Date, write: (q: Queryable) => Promise<T>): Promise<T> {
    if (!onActive || !changed) return write(db);
    return db.transaction(async (tx) => {
      const out = await write(tx);
      if (out) await onActive(tx, accountId, now); // a write that found nothing changed nothing
      return out;
    });
  }
  /**
   * Commits a change of a location: through its system's `onLocationChanged` when it has
   * one (the system journals it in the same database transaction), else as
   * `withActiveChange` does. `write` answers null when the location is gone (404).
   */
  async function commitChange<T>(
    system: FiscalSystem | undefined, change: LocationChange | undefined, activeChanged: boolean, accountId: string, now: Date,
    write: (q: Queryable) => Promise<T | null | undefined>,
  ): Promise<T> {
    const hook = system?.onLocationChanged;
    if (hook === undefined || change === undefined) {
      const out = await withActiveChange(activeChanged, accountId, now, write);
      if (!out) throw notFound('location not found');
      return out;
    }
    if (!opts.changeDeps) throw new Error(`locations: ${system!.key} journals location changes, and this service was given no ledger (changeDeps)`);
    let out: T | null = null;
    await hook({ db, clock, log: deps.log, ...opts.changeDeps() }, change, async (q) => {
      out = null; // a transaction rolled back and run again writes again
      const written = await write(q);
      if (!written) throw notFound('location not found'); // rolls back what the system wrote with it
      if (activeChanged && onActive) await onActive(q, accountId, now);
      out = written;
    });
    if (out === null) throw new Error(`locations: ${system!.key}'s onLocationChanged resolved without committing the change`);
    return out;
  }
  const cache = new InvalidatingCache<string, CachedLocation | undefined>({ ...LOCATION_CACHE, live: () => changes?.live() ?? false });
  changes?.on('locations', (id) => cache.invalidate(id));
  changes?.onReset(() => cache.clear());

  function secretFields(system: string | null): readonly string[] {
    return system ? getSystem(system).secretConfigFields : [];
  }

  /** Secrets are sealed at rest with MASTER_KEY and bound to this location and field. */
  function sealSecrets(locationId: string, system: string, config: Record<string, unknown>): Record<string, unknown> {
    const out = { ...config };
    for (const f of secretFields(system)) {
      if (typeof out[f] === 'string') out[f] = seal(keys.seal, out[f] as string, secretAad(locationId, f));
    }
    return out;
  }

  function openSecret(row: LocationRow, field: string): string | undefined {
    const v = row.country_config[field];
    return isSealed(v) ? unseal(keys.seal, v, secretAad(row.id, field)) : undefined;
  }

  /** Read form: secrets masked, never the value. */
  function toView(row: LocationRow): LocationView {
    const config = { ...row.country_config };
    for (const f of secretFields(row.system)) {
      const plain = openSecret(row, f);
      if (plain !== undefined) config[f] = maskSecret(plain);
    }
    return {
      id: row.id,
      account_id: row.account_id,
      name: row.name,
      country: row.country,
      system: row.system,
      address: row.address,
      tax_id: row.tax_id,
      country_config: config,
      status: row.status,
      cert_expiry: row.cert_expiry,
      created_at: row.created_at,
      updated_at: row.updated_at,
    };
  }

  /**
   * Adds a warning when the certificate the config names (the first of its system's
   * `certificateFields` that is set) belongs to another tax id.
   */
  async function withWarnings(view: LocationView): Promise<LocationView> {
    const certId = view.system ? certificateRefOf(getSystem(view.system), view.country_config) : null;
    if (certId === null) return view;
    const cert = await certificatesRepo.get(db, view.account_id, certId);
    const warning = cert ? nifMismatchWarning(cert.nif, view.tax_id, 'this location') : null;
    return warning ? { ...view, warnings: [warning] } : view;
  }

  function assertCountryAllowed(auth: AuthContext, country: string) {
    if (!allowsCountry(auth.permissions, country)) throw forbidden(`API key is not allowed to act in country ${country}`);
  }

  async function create(auth: AuthContext, input: CreateLocationInput): Promise<LocationView> {
    const country = input.country.trim().toUpperCase();
    const taxId = input.tax_id?.trim() || null;
    assertCountryAllowed(auth, country); // a key scoped elsewhere learns nothing about the config rules
    const { system, config } = resolveLocationSystem(country, input.country_config, taxId);
    const id = newId();
    const now = clock.now();
    const row: LocationRow = {
      id,
      account_id: auth.accountId,
      name: input.name.trim(),
      country,
      system: system.key,
      address: input.address?.trim() || null,
      tax_id: taxId,
      country_config: sealSecrets(id, system.key, config),
      certificate_ref: certificateRefOf(system, config),
      status: 'active',
      cert_expiry: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
    };
    return withWarnings(toView(await withActiveChange(true, auth.accountId, now, (q) => locationsRepo.insert(q, row))));
  }

  async function get(auth: AuthContext, id: string): Promise<LocationView> {
    const row = await locationsRepo.get(db, auth.accountId, id);
    if (!row) throw notFound('location not found');
    return toView(row);
  }

  async function list(auth: AuthContext, filter: LocationFilter, page: Page): Promise<ListResult<LocationView>> {
    const { rows, total } = await locationsRepo.list(db, auth.accountId, filter, page.limit, page.offset);
    return { data: rows.map(toView), total, ...page };
  }

  async function patch(auth: AuthContext, id: string, input: PatchLocationInput): Promise<LocationView> {
    const row = await locationsRepo.get(db, auth.accountId, id);
    if (!row) throw notFound('location not found');
    assertCountryAllowed(auth, row.country);
    // country and tax_id are immutable; repeating the current value is harmless.
    if (input.country !== undefined && input.country.trim().toUpperCase() !== row.country) throw badRequest('country cannot be changed');
    if (input.tax_id !== undefined && (input.tax_id.trim() || null) !== row.tax_id) throw badRequest('tax_id cannot be changed');

    let system: string | undefined;
    let config: Record<string, unknown> | undefined;
    let certificateRef: string | null | undefined;
    /** What the change does to the config, as the location's system is told (`onLocationChanged`). */
    let changedConfig: LocationConfigChange[] = [];
    if (input.country_config !== undefined) {
      const incoming = keepUnchangedSecrets(row, input.country_config);
      const resolved = resolveLocationSystem(row.country, incoming, row.tax_id, { system: row.system, config: row.country_config });
      system = resolved.system.key;
      // The config is sealed once records exist (spec: Location): a location that issued
      // TicketBAI invoices cannot turn VERI*FACTU (nor SDI into Documento Commerciale), or
      // a later cancel would annul them in a system that never received them.
      const moved = system !== row.system
        ? 'system'
        : (resolved.system.sealedConfigFields ?? []).find((f) => resolved.config[f] !== (row.country_config as Record<string, unknown> | null)?.[f]);
      if (moved && row.system && (await transactionsRepo.anyAtLocation(db, auth.accountId, id))) {
        throw badRequest(moved === 'system'
          ? `country_config.system cannot be changed once the location has transactions (it issues ${row.system} records): create a new location for ${system}`
          : `country_config.${moved} cannot be changed once the location has transactions: create a new location`);
      }
      config = sealSecrets(row.id, system, resolved.config);
      certificateRef = certificateRefOf(resolved.system, resolved.config);
      changedConfig = configChanges(toFiscal(row).config, resolved.config, resolved.system.secretConfigFields);
    }
    const now = clock.now();
    const statusChanged = input.status !== undefined && input.status !== row.status;
    const changes = {
      name: input.name?.trim(),
      // As on create, a blank address is no address (null), not an empty string.
      address: input.address === undefined ? undefined : input.address?.trim() || null,
      status: input.status,
      system,
      country_config: config,
      certificate_ref: certificateRef,
    };
    // The location's system is told of a change of its config or status (after it: the
    // system the config names now), and commits it with whatever it journals.
    const after = system ?? row.system;
    // The printed fields too (a ticket's header names the shop): a system that journals its
    // parameters journals these with them. No address (null) is "not set": no value, rather
    // than the text "null", which could be an address.
    const printed = (name: string, address: string | null) => ({ name, ...(address === null ? {} : { address }) });
    const changedFields = configChanges(printed(row.name, row.address), printed(changes.name ?? row.name, changes.address === undefined ? row.address : changes.address), []);
    const change: LocationChange | undefined = after !== null && (changedConfig.length > 0 || changedFields.length > 0 || statusChanged)
      ? {
          kind: 'updated',
          location: toFiscal({
            ...row, name: changes.name ?? row.name, address: changes.address === undefined ? row.address : changes.address,
            system: after, country_config: config ?? row.country_config, certificate_ref: certificateRef === undefined ? row.certificate_ref : certificateRef,
          }),
          config: changedConfig,
          fields: changedFields,
          ...(statusChanged ? { status: { before: row.status, after: input.status! } } : {}),
          environment: auth.environment,
        }
      : undefined;
    const updated = await commitChange(after !== null ? getSystem(after) : undefined, change, statusChanged, auth.accountId, now,
      (q) => locationsRepo.update(q, auth.accountId, id, changes, now));
    cache.invalidate(id); // this node at once; the others through the trigger's notification
    return withWarnings(toView(updated));
  }

  /**
   * A client that PATCHes back the config it read sends the masked secret: keep the
   * stored secret then, rather than replacing it with the mask.
   */
  function keepUnchangedSecrets(row: LocationRow, incoming: unknown): unknown {
    if (!incoming || typeof incoming !== 'object' || Array.isArray(incoming)) return incoming;
    const out: Record<string, unknown> = { ...(incoming as Record<string, unknown>) };
    for (const f of secretFields(row.system)) {
      const plain = openSecret(row, f);
      if (plain !== undefined && out[f] === maskSecret(plain)) out[f] = plain;
    }
    return out;
  }

  /** The location as fiscal systems see it: secrets unsealed (never leaves the process). */
  function toFiscal(row: LocationRow): LocationForFiscal {
    const config = { ...row.country_config };
    for (const f of secretFields(row.system)) {
      const plain = openSecret(row, f);
      if (plain !== undefined) config[f] = plain;
    }
    return {
      id: row.id, account_id: row.account_id, name: row.name, country: row.country as Country, tax_id: row.tax_id, address: row.address, config,
      certificateRef: row.certificate_ref,
    };
  }

  /**
   * The country check a location's stored config fails now, or null (spec "Versioning":
   * locations registered before configs were validated were backfilled with an empty
   * config and "fail country checks at the next transaction until PATCHed"). The same
   * validation create and PATCH run (idempotent on a config they stored), so the message
   * is the one a PATCH with that config would get. Before, such a location issued
   * records built from an empty config (or failed with a 500), and one whose system was
   * never resolved answered `location not found` although GET showed it.
   */
  function configErrorOf(row: LocationRow, fiscal: LocationForFiscal): string | null {
    try {
      // Checked as its own stored config: a value a newer rule refuses only in new configs stays usable.
      const { system } = resolveLocationSystem(row.country, fiscal.config, row.tax_id, { system: row.system, config: fiscal.config });
      return system.key === row.system ? null : `location country_config must be updated (PATCH /v1/locations/${row.id}) before it can issue transactions`;
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) return err.message;
      throw err;
    }
  }

  async function remove(auth: AuthContext, id: string): Promise<void> {
    const row = await locationsRepo.get(db, auth.accountId, id);
    if (!row) throw notFound('location not found');
    assertCountryAllowed(auth, row.country);
    const now = clock.now();
    // The location's system is told before it goes (its records stay: the deletion is soft).
    const change: LocationChange | undefined = row.system !== null ? { kind: 'deleted', location: toFiscal(row), status: row.status, environment: auth.environment } : undefined;
    await commitChange(row.system !== null ? getSystem(row.system) : undefined, change, row.status === 'active', auth.accountId, now,
      async (q) => ((await locationsRepo.softDelete(q, auth.accountId, id, now)) ? true : null));
    cache.invalidate(id);
  }

  /**
   * The account's location a transaction is created at (not deleted; another account's id
   * is not found), from the cache when it can be trusted. Unknown ids are not cached.
   */
  async function forTransaction(accountId: string, id: string): Promise<CachedLocation | undefined> {
    const found = await cache.get(
      id,
      async () => {
        const row = await locationsRepo.get(db, accountId, id);
        if (!row) return undefined;
        const fiscal = toFiscal(row);
        return { row, fiscal, configError: configErrorOf(row, fiscal) };
      },
      (v) => v !== undefined,
    );
    // The cache is keyed by id alone: the account check applies to every hit.
    return found && found.row.account_id === accountId ? found : undefined;
  }

  return { create, get, list, patch, remove, toFiscal, configErrorOf, forTransaction };
}

export type LocationService = ReturnType<typeof createLocationService>;
