import { SYSTEMS } from '../countries/registry.ts';
import { systemName, type AuthorityCode, type FiscalSystem } from '../countries/types.ts';
import type { Translated, TranslationCountry, TranslationSystem } from './types.ts';

/**
 * The static translation catalog: authority error codes we know, in English, with a
 * short message a merchant can act on. Only codes whose meaning is certain are in it
 * (from the authorities' published code lists); anything else goes to the AI
 * translator, or is passed through untranslated.
 *
 * Built from the plug-ins (src/countries/registry.ts): every code with a `translation`
 * in the `codes` of a system with `errorTranslations`, under the system's short name
 * (its key without the country: `xx-name` → `name`). Adding a system or a code changes nothing here.
 *
 * Keyed by (country, system, code). One entry serves several systems when they share
 * the code's definition (the same object: AEAT's 1100, 3000 and 4104 in VERI*FACTU and
 * SII, src/countries/es/aeat-codes.ts); where a code means different things per system
 * (AEAT 1104, 1117, 4109, 4111), there is one entry per system, and a lookup without a
 * system finds neither (ambiguous).
 */
export interface CatalogEntry extends Translated {
  country: TranslationCountry;
  systems: readonly TranslationSystem[];
  code: string;
}

export function buildCatalog(systems: readonly FiscalSystem[]): CatalogEntry[] {
  const entries: Array<CatalogEntry & { systems: TranslationSystem[] }> = [];
  // The entry made from each code object: a system sharing the object joins that entry.
  const byDefinition = new Map<AuthorityCode, (typeof entries)[number]>();
  for (const system of systems) {
    if (system.errorTranslations !== true) continue;
    const name = systemName(system.key);
    for (const [code, definition] of Object.entries(system.codes)) {
      const t = definition.translation;
      if (t === undefined) continue;
      const shared = byDefinition.get(definition);
      if (shared !== undefined && shared.country === system.country && shared.code === code) {
        shared.systems.push(name);
        continue;
      }
      const entry = {
        country: system.country, systems: [name], code,
        translation: t.english ?? definition.message, user_message: t.userMessage,
        category: definition.category, severity: t.severity, retriable: definition.retriable,
      };
      byDefinition.set(definition, entry);
      entries.push(entry);
    }
  }
  return entries;
}

export const CATALOG: readonly CatalogEntry[] = buildCatalog(SYSTEMS);

/**
 * Codes this service itself reports for a failed submission (not an authority's), in
 * any country and system: already in English, never sent to the AI.
 */
export const SERVICE_CODES: Readonly<Record<string, Translated>> = {
  TIMEOUT: {
    translation: 'The tax authority did not answer in time.',
    category: 'network', severity: 'warning', retriable: true,
    user_message: 'The tax authority did not respond in time. The transaction will be sent again automatically.',
  },
};

/** Codes are matched trimmed and case-insensitively (TicketBAI's B4_… codes). */
export const normalizeCode = (code: string): string => code.trim().toUpperCase();

const index = new Map<string, CatalogEntry[]>();
// Keyed by country and code: a lookup without a system must see every system's entry.
for (const e of CATALOG) {
  const k = `${e.country}|${normalizeCode(e.code)}`;
  index.set(k, [...(index.get(k) ?? []), e]);
}

/**
 * The catalog entry for a code. With a system, the entry of that system; without one,
 * the entry of the country if exactly one entry has that code (else none: ambiguous).
 */
export function lookupStatic(country: string, system: string | undefined, code: string): CatalogEntry | undefined {
  const candidates = index.get(`${country.toUpperCase()}|${normalizeCode(code)}`) ?? [];
  if (system) return candidates.find((e) => (e.systems as readonly string[]).includes(system));
  return candidates.length === 1 ? candidates[0] : undefined;
}
