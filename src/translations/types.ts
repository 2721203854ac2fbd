import type { TranslationCategory, TranslationSeverity } from '../store/repos/translations-repo.ts';

export type { TranslationCategory, TranslationSeverity };

export const CATEGORIES: readonly TranslationCategory[] = ['validation', 'auth', 'submission', 'network', 'configuration', 'unknown'];
export const SEVERITIES: readonly TranslationSeverity[] = ['error', 'warning', 'info'];

/** Countries the translation endpoint accepts (the spec: ES, IT, FR). */
export const TRANSLATION_COUNTRIES = ['ES', 'IT', 'FR'] as const;
export type TranslationCountry = (typeof TRANSLATION_COUNTRIES)[number];

/** Fiscal systems by their short name (the endpoint's `system`), per country. */
export const SYSTEMS_BY_COUNTRY = {
  ES: ['ticketbai', 'verifactu', 'sii'],
  IT: ['sdi', 'dc'],
  FR: ['nf525'],
} as const satisfies Record<TranslationCountry, readonly string[]>;
export type TranslationSystem = (typeof SYSTEMS_BY_COUNTRY)[TranslationCountry][number];
export const TRANSLATION_SYSTEMS: readonly TranslationSystem[] = Object.values(SYSTEMS_BY_COUNTRY).flat();

/** What a translation says about an error, wherever it came from. */
export interface Translated {
  translation: string;
  category: TranslationCategory;
  severity: TranslationSeverity;
  retriable: boolean;
  user_message: string;
}

/** The spec's Translation result. */
export interface TranslationResult extends Translated {
  error_code: string;
  country: string;
  system: string | null;
  original_message: string | null;
  source: 'static' | 'ai';
}
