/**
 * The plug-in contract shared by every fiscal system (see docs/architecture.md).
 *
 * Issue #2 (platform) only needs the location side: which system a location's
 * `country_config` selects and how that config is validated. Building, signing and
 * submitting records are added to this contract by the transactions issue.
 */
export const COUNTRIES = ['ES', 'IT', 'FR', 'PT', 'GR'] as const;
export type Country = (typeof COUNTRIES)[number];

export const SYSTEM_KEYS = [
  'es-ticketbai',
  'es-verifactu',
  'es-sii',
  'it-sdi',
  'it-dc',
  'fr-nf525',
  'pt-saft',
  'gr-mydata',
] as const;
export type SystemKey = (typeof SYSTEM_KEYS)[number];

/** What the location service hands a plug-in to validate. */
export interface LocationConfigInput {
  /** The raw `country_config` from the request (may be undefined or any JSON value). */
  config: unknown;
  /** The location's `tax_id`, if given (immutable after creation). */
  taxId: string | null;
}

export interface FiscalSystem {
  key: SystemKey;
  country: Country;
  /**
   * Validates a location's `country_config` and returns the normalized config to
   * store. Throws `ValidationError` with the spec's exact message on bad input.
   * Pure: no I/O, no clock, no env.
   */
  validateConfig(input: LocationConfigInput): Record<string, unknown>;
  /**
   * Config fields that are secrets: the location service seals them at rest with
   * MASTER_KEY and masks them when a location is read (e.g. Greek `subscription_key`).
   */
  secretConfigFields: readonly string[];
}
