/**
 * The fiscal systems this service implements, and how a location picks one.
 *
 * The list is explicit (no self-registering modules, no import side effects): adding a
 * system means adding it here, and this file is the one place to see them all.
 */
import { badRequest } from '../core/errors.ts';
import { CORE_STATUS_TABLE, StatusMachine } from '../core/status.ts';
import { readSpainSystem } from './es/common.ts';
import { routeItaly } from './it/common.ts';
import { readConfigObject } from './shared/config-fields.ts';
import { COUNTRIES, SYSTEM_KEYS, type Country, type FiscalSystem, type SystemKey } from './types.ts';
import { ticketBai } from './es-ticketbai/index.ts';
import { verifactu } from './es-verifactu/index.ts';
import { sii } from './es-sii/index.ts';
import { sdi } from './it-sdi/index.ts';
import { documentoCommerciale } from './it-dc/index.ts';
import { nf525 } from './fr-nf525/index.ts';
import { saft } from './pt-saft/index.ts';
import { myData } from './gr-mydata/index.ts';

export const SYSTEMS: readonly FiscalSystem[] = [ticketBai, verifactu, sii, sdi, documentoCommerciale, nf525, saft, myData];

/** The one status machine: the core's statuses and transitions, and every system's own (core/status.ts). */
export const statuses = new StatusMachine([CORE_STATUS_TABLE, ...SYSTEMS.flatMap((s) => (s.statuses ? [s.statuses] : []))]);

const BY_KEY = new Map<string, FiscalSystem>(SYSTEMS.map((s) => [s.key, s]));

export const isSupportedCountry = (country: string): country is Country =>
  (COUNTRIES as readonly string[]).includes(country);

export const isSystemKey = (key: string): key is SystemKey => (SYSTEM_KEYS as readonly string[]).includes(key);

/**
 * The plug-in for a stored system key. An unknown key is a bug or a corrupt row, not a
 * client error, so it throws a plain Error (a 500), never a 400.
 */
export function getSystem(key: string): FiscalSystem {
  const system = BY_KEY.get(key);
  if (system === undefined) throw new Error(`unknown fiscal system: ${key}`);
  return system;
}

/** The system key a location's country and raw config select (no field validation). */
function routeSystem(country: Country, config: unknown): SystemKey {
  switch (country) {
    case 'ES': {
      const obj = readConfigObject(config);
      return `es-${readSpainSystem(obj)}`;
    }
    case 'IT':
      return routeItaly(readConfigObject(config));
    case 'FR':
      return 'fr-nf525';
    case 'PT':
      return 'pt-saft';
    case 'GR':
      return 'gr-mydata';
  }
}

/**
 * Picks the fiscal system for a location and validates its config: the one call the
 * location service makes on create and on PATCH. Returns the plug-in and the normalized
 * config to store. Throws ValidationError (400) with the client-facing message.
 */
export function resolveLocationSystem(
  country: string,
  config: unknown,
  taxId: string | null,
): { system: FiscalSystem; config: Record<string, unknown> } {
  if (!isSupportedCountry(country)) throw badRequest('country must be one of ES, IT, FR, PT, GR');
  const system = getSystem(routeSystem(country, config));
  return { system, config: system.validateConfig({ config, taxId }) };
}
