/**
 * The fiscal systems this service implements, and how a location picks one.
 *
 * The list is explicit (no self-registering modules, no import side effects): adding a
 * system means adding it here, and this file is the one place to see them all. Everything
 * shared code knows of the systems is derived from it: the keys, the countries, the
 * routing, the status machine, the config fields naming certificates, the line fields.
 */
import { badRequest } from '../core/errors.ts';
import { CORE_STATUS_TABLE, StatusMachine } from '../core/status.ts';
import { CORE_EVENT_TYPES } from '../core/events.ts';
import { SPAIN_ROUTING } from './es/common.ts';
import { ITALY_ROUTING } from './it/common.ts';
import { readConfigObject } from './shared/config-fields.ts';
import type { Country, CountryRouting, FiscalSystem, LineField, SystemKey } from './types.ts';
import { ticketBai } from './es-ticketbai/index.ts';
import { verifactu } from './es-verifactu/index.ts';
import { sii } from './es-sii/index.ts';
import { sdi } from './it-sdi/index.ts';
import { documentoCommerciale } from './it-dc/index.ts';
import { nf525 } from './fr-nf525/index.ts';
import { saft } from './pt-saft/index.ts';
import { myData } from './gr-mydata/index.ts';

/** The plug-ins, in the order the API lists them (keys, countries, features, statuses). */
export const SYSTEMS = [ticketBai, verifactu, sii, sdi, documentoCommerciale, nf525, saft, myData] as const;

/**
 * The rules of the countries served by several systems (each in its country's shared
 * folder). A country with one system needs none; one with several must have one.
 */
const ROUTING: readonly CountryRouting[] = [SPAIN_ROUTING, ITALY_ROUTING];

/** Every registered system's key, in registry order. */
export const SYSTEM_KEYS: readonly SystemKey[] = SYSTEMS.map((s) => s.key);

/** The countries the service fiscalizes in: the systems' countries, in registry order. */
export const COUNTRIES: readonly Country[] = [...new Set(SYSTEMS.map((s) => s.country))];

/**
 * Every event a webhook may subscribe to: the core's facts (both vocabularies), then the
 * events each system announces (spec "Events"; DECISIONS "Events and webhooks").
 */
export const EVENT_TYPES: readonly string[] = [
  ...CORE_EVENT_TYPES.filter((e) => !e.startsWith('certificate.')),
  ...new Set(SYSTEMS.flatMap((s) => [...(s.events ?? []), ...Object.keys(s.eventAliases ?? {})])),
  ...CORE_EVENT_TYPES.filter((e) => e.startsWith('certificate.')),
];

/** The systems' second names of their events (`FiscalSystem.eventAliases`), both ways: name → its other name. */
export const SYSTEM_EVENT_ALIASES: ReadonlyMap<string, string> = new Map(
  SYSTEMS.flatMap((s) => Object.entries(s.eventAliases ?? {}).flatMap(([alias, event]): [string, string][] => [[alias, event], [event, alias]])),
);

/** The one status machine: the core's statuses and transitions, and every system's own (core/status.ts). */
export const statuses = new StatusMachine([CORE_STATUS_TABLE, ...SYSTEMS.flatMap((s) => (s.statuses ? [s.statuses] : []))]);

/**
 * Every config field that names an uploaded certificate, of any system, in registry order.
 * Shared code no longer reads it: a location stores the certificate it names
 * (`certificate_ref`, resolved per system by services/locations.ts); migration 0018's
 * backfill named these fields once. Kept for the registry test, which lists them.
 */
export const CERTIFICATE_FIELDS: readonly string[] = [...new Set(SYSTEMS.flatMap((s) => s.certificateFields))];

/**
 * The fields the systems add to a request's lines, each once, in registry order: the
 * request reads all of them (core/transaction-request.ts), before the location is known.
 * Two systems declaring one field must declare it alike.
 */
export const LINE_FIELDS: readonly LineField[] = unionOfLineFields(SYSTEMS);

export function unionOfLineFields(systems: readonly FiscalSystem[]): LineField[] {
  const byName = new Map<string, LineField>();
  for (const s of systems) {
    for (const f of s.lineFields ?? []) {
      const known = byName.get(f.name);
      if (known === undefined) byName.set(f.name, f);
      else if (!sameLineField(known, f)) {
        throw new Error(`line field ${f.name} is declared differently by ${s.key} and an earlier system`);
      }
    }
  }
  return [...byName.values()];
}

/** Two declarations of one line field agree: same type, and the same reading of it. */
function sameLineField(a: LineField, b: LineField): boolean {
  if (a.type === 'string' && b.type === 'string') return (a.upperCase === true) === (b.upperCase === true);
  if (a.type === 'surcharge' && b.type === 'surcharge') return a.amount === b.amount;
  return false;
}

const BY_KEY = new Map<string, FiscalSystem>(SYSTEMS.map((s) => [s.key, s]));

/** How a country's locations pick their system: its one system, or its routing rule. */
export type CountryEntry = { system: FiscalSystem } | { rule: CountryRouting };

/**
 * Per country, in order: its one system, or its rule. A country with several systems
 * must have one rule; a rule must be for a country some system serves.
 */
export function routingTable(systems: readonly FiscalSystem[], rules: readonly CountryRouting[]): Map<string, CountryEntry> {
  const table = new Map<string, CountryEntry>();
  for (const country of new Set(systems.map((s) => s.country))) {
    const served = systems.filter((s) => s.country === country);
    const own = rules.filter((r) => r.country === country);
    if (own.length > 1) throw new Error(`country ${country} has ${own.length} routing rules`);
    if (own[0] !== undefined) table.set(country, { rule: own[0] });
    else if (served.length === 1) table.set(country, { system: served[0]! });
    else throw new Error(`country ${country} has several systems and no routing rule`);
  }
  for (const r of rules) {
    if (!table.has(r.country)) throw new Error(`routing rule for ${r.country}, which no registered system serves`);
  }
  return table;
}

const BY_COUNTRY = routingTable(SYSTEMS, ROUTING);

export const isSupportedCountry = (country: string): country is Country => BY_COUNTRY.has(country);

export const isSystemKey = (key: string): key is SystemKey => BY_KEY.has(key);

/**
 * The plug-in for a stored system key. An unknown key is a bug or a corrupt row, not a
 * client error, so it throws a plain Error (a 500), never a 400.
 */
export function getSystem(key: string): FiscalSystem {
  const system = BY_KEY.get(key);
  if (system === undefined) throw new Error(`unknown fiscal system: ${key}`);
  return system;
}

/** The system a location's country and raw config select (no field validation). */
function routeSystem(country: Country, config: unknown): FiscalSystem {
  const entry = BY_COUNTRY.get(country)!;
  if ('system' in entry) return entry.system;
  const system = getSystem(entry.rule.route(readConfigObject(config)));
  if (system.country !== country) throw new Error(`the ${country} routing rule chose ${system.key}, a system of ${system.country}`);
  return system;
}

/**
 * Picks the fiscal system for a location and validates its config: the one call the
 * location service makes on create and on PATCH. Returns the plug-in and the normalized
 * config to store (`stored`: on a PATCH, the location's system and config as they are).
 * Throws ValidationError (400) with the client-facing message.
 */
export function resolveLocationSystem(
  country: string,
  config: unknown,
  taxId: string | null,
  stored?: { system: string | null; config: Readonly<Record<string, unknown>> | null },
): { system: FiscalSystem; config: Record<string, unknown> } {
  if (!isSupportedCountry(country)) throw badRequest(`country must be one of ${COUNTRIES.join(', ')}`);
  const system = routeSystem(country, config);
  // The stored config only to the system that wrote it (another reads none of its fields).
  const kept = stored?.system === system.key && stored.config !== null ? stored.config : undefined;
  return { system, config: system.validateConfig({ config, taxId, ...(kept === undefined ? {} : { stored: kept }) }) };
}
