/** The countries the service fiscalizes in (a location's `country`). */
export const COUNTRIES = ['ES', 'IT', 'FR', 'PT', 'GR'] as const;
export type Country = (typeof COUNTRIES)[number];
