/**
 * The VAT-number prefixes of the EU member states as VIES writes them (Greece `EL`,
 * Northern Ireland `XI`), and the ISO 3166-1 country each means: one table for every
 * plug-in that reads a customer's country from the prefix of its tax id (Spain's IDOtro
 * type, Portugal's CustomerTaxID without the prefix).
 */
export const EU_VAT_PREFIXES: Readonly<Record<string, string>> = {
  AT: 'AT', BE: 'BE', BG: 'BG', CY: 'CY', CZ: 'CZ', DE: 'DE', DK: 'DK', EE: 'EE', EL: 'GR', ES: 'ES', FI: 'FI', FR: 'FR',
  HR: 'HR', HU: 'HU', IE: 'IE', IT: 'IT', LT: 'LT', LU: 'LU', LV: 'LV', MT: 'MT', NL: 'NL', PL: 'PL', PT: 'PT', RO: 'RO',
  SE: 'SE', SI: 'SI', SK: 'SK', XI: 'GB',
};

/** The EU member states by ISO code (Greece is GR there; Northern Ireland's XI is not one). */
export const EU_MEMBER_STATES: ReadonlySet<string> = new Set(Object.values(EU_VAT_PREFIXES).filter((c) => c !== 'GB'));
