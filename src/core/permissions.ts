/**
 * API key permissions (DECISIONS.md "Keys, permissions, sessions").
 * A root key holds everything (stored as NULL permissions). A restricted key holds a
 * list of action permissions and, optionally, country scopes `country:XX`: with none
 * it may act in every country, with some only in those. The countries are the registered
 * systems' (countries/registry.ts `COUNTRIES`): callers pass them, as core loads no plug-in.
 */
import type { Country } from './country.ts';

export const ACTION_PERMISSIONS = [
  'transactions:read', 'transactions:write',
  'locations:read', 'locations:write',
  'certificates:read', 'certificates:write',
  'webhooks:read', 'webhooks:write',
  'api_keys:read', 'api_keys:write',
  'retry_queue:read',
  'batch:write',
  'fleet:read', 'fleet:write',
  'translations:write',
  'account:read', 'account:write',
] as const;
export type ActionPermission = (typeof ACTION_PERMISSIONS)[number];

/** Every permission name: the actions, then a `country:XX` scope per country served. */
export const allPermissions = (countries: readonly string[]): readonly string[] => [
  ...ACTION_PERMISSIONS,
  ...countries.map((c) => `country:${c}`),
];

/** What a key holds: null = root. */
export type Grant = readonly string[] | null;

/** The names in `perms` that are no permission, given the countries served. */
export function unknownPermissions(perms: readonly string[], countries: readonly string[]): string[] {
  const all = allPermissions(countries);
  return perms.filter((p) => !all.includes(p));
}

export function countryScopes(grant: Grant): Country[] {
  if (grant === null) return [];
  return grant.filter((p) => p.startsWith('country:')).map((p) => p.slice(8) as Country);
}

export function hasPermission(grant: Grant, perm: ActionPermission): boolean {
  return grant === null || grant.includes(perm);
}

/** May this key act in `country`? Root keys and keys without country scopes may act anywhere. */
export function allowsCountry(grant: Grant, country: string): boolean {
  const scopes = countryScopes(grant);
  return scopes.length === 0 || scopes.includes(country as Country);
}

/**
 * Does `holder` hold at least everything `requested` grants? Used against privilege
 * escalation: a key may only create (or rotate, or revoke) keys with equal or lesser
 * permissions. A requested key without country scopes may act everywhere, so only a
 * holder that may also act everywhere can grant it.
 */
export function covers(holder: Grant, requested: Grant): boolean {
  if (holder === null) return true;
  if (requested === null) return false;
  const actions = requested.filter((p) => !p.startsWith('country:'));
  if (!actions.every((p) => holder.includes(p))) return false;
  const holderCountries = countryScopes(holder);
  if (holderCountries.length === 0) return true;
  const requestedCountries = countryScopes(requested);
  return requestedCountries.length > 0 && requestedCountries.every((c) => holderCountries.includes(c));
}

/** A key of one environment acting on another's transaction (cancel, a numbered reprint): the 403's message. */
export const environmentMismatch = (key: string, transaction: string): string =>
  `a ${key} key cannot act on a ${transaction} transaction: use a ${transaction} key`;

