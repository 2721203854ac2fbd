import type { SYSTEMS } from '../countries/registry.ts';

/**
 * A country the service fiscalizes in (a location's `country`): the country of a
 * registered system (each plug-in declares its own; countries/registry.ts lists the
 * plug-ins, and its `COUNTRIES` is this list at run time). Only a type is taken from the
 * registry: core code never loads a plug-in.
 */
export type Country = (typeof SYSTEMS)[number]['country'];
