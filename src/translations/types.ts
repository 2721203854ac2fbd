import { SYSTEMS } from '../countries/registry.ts';
import { systemName, type FiscalSystem, type SystemName } from '../countries/types.ts';
import type { TranslationCategory, TranslationSeverity } from '../store/repos/translations-repo.ts';

export type { TranslationCategory, TranslationSeverity };

export const CATEGORIES: readonly TranslationCategory[] = ['validation', 'auth', 'submission', 'network', 'configuration', 'unknown'];
export const SEVERITIES: readonly TranslationSeverity[] = ['error', 'warning', 'info'];

/**
 * A country and a system (by its short name, the endpoint's `system`) as the plug-ins
 * type them. Which of them the endpoint serves is the registry's answer at run time:
 * the plug-ins with `errorTranslations` (the spec: ES, IT, FR), listed below.
 */
export type TranslationCountry = FiscalSystem['country'];
export type TranslationSystem = SystemName;

const served = SYSTEMS.filter((s) => s.errorTranslations === true);

/** Countries the translation endpoint accepts, in registry order. */
export const TRANSLATION_COUNTRIES: readonly TranslationCountry[] = [...new Set(served.map((s) => s.country))];

/** The served systems by their short name, per country, in registry order. */
export const SYSTEMS_BY_COUNTRY: Readonly<Partial<Record<TranslationCountry, readonly TranslationSystem[]>>> = Object.fromEntries(
  TRANSLATION_COUNTRIES.map((c) => [c, served.filter((s) => s.country === c).map((s) => systemName(s.key))]),
);
export const TRANSLATION_SYSTEMS: readonly TranslationSystem[] = served.map((s) => systemName(s.key));

/** "ES, IT or FR": the accepted countries, for messages and the API description. */
export const listCountries = (quote: (c: string) => string = (c) => c): string => {
  const names = TRANSLATION_COUNTRIES.map(quote);
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
};

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
