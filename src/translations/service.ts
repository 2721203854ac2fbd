import crypto from 'node:crypto';
import type { TranslationAiConfig } from '../config.ts';
import { badRequest } from '../core/errors.ts';
import type { Deps } from '../services/deps.ts';
import { translationsRepo, type TranslationKey } from '../store/repos/translations-repo.ts';
import { AiTranslationError, createAiClient, type AiClient } from './ai-client.ts';
import { SERVICE_CODES, lookupStatic, normalizeCode } from './catalog.ts';
import {
  SYSTEMS_BY_COUNTRY, TRANSLATION_COUNTRIES, listCountries, type Translated, type TranslationCountry, type TranslationResult,
} from './types.ts';

/**
 * Error translation (DECISIONS "Translations"):
 * 1. the static catalog (catalog.ts) by (country, system, code);
 * 2. else, with an AI endpoint configured: the permanent cache, else one AI call whose
 *    validated answer is cached for good per (country, system, code, message hash);
 * 3. else (no AI, or the AI failed): the raw message as the "translation", category
 *    `unknown`, source `static`. A failed AI call is never cached: the next request
 *    asks again.
 *
 * Concurrent identical first requests in one process share one AI call; across
 * processes the cache's primary key keeps one row (ON CONFLICT DO NOTHING) and every
 * caller answers with the stored row.
 */
export interface TranslateErrorInput {
  error_code: string;
  country: string;
  error_message?: string | null | undefined;
  system?: string | null | undefined;
}

/** What `resolve` found: the result, and why the AI could not help when it could not. */
export interface Resolution {
  result: TranslationResult;
  /** Set when an AI answer was wanted and none came (the result is then the fallback). */
  aiError?: string;
}

export type TranslatorDeps = Pick<Deps, 'db' | 'clock' | 'log'>;

/** TRANSLATION_AI_* (config.ts `translationAi`); the timeout defaults to 10 s. */
export type TranslationAiSettings = Omit<TranslationAiConfig, 'key' | 'timeoutMs'> & { key?: string | undefined; timeoutMs?: number | undefined };

export const GENERIC_USER_MESSAGE =
  'The tax authority reported an error for this transaction. Check the transaction details, or contact support if it keeps happening.';

/** Longest code and message accepted (also the HTTP schema's limits). */
export const MAX_CODE_LENGTH = 100;
export const MAX_MESSAGE_LENGTH = 4000;

/** `xx-name` (a location's system key) and `name` (its short name) are the same system here. */
export function normalizeSystem(system: string | null | undefined): string | undefined {
  const s = system?.trim().toLowerCase();
  if (!s) return undefined;
  return s.replace(/^[a-z]{2}-/, '');
}

export const messageHash = (message: string | null): string => crypto.createHash('sha256').update(message ?? '', 'utf8').digest('hex');

/**
 * @param ai the AI endpoint settings (undefined or null: no AI), or a ready client (tests).
 */
export function createTranslator(deps: TranslatorDeps, ai?: TranslationAiSettings | AiClient | null) {
  const { db, clock, log } = deps;
  const client: AiClient | null = !ai ? null : 'translate' in ai ? ai : createAiClient(ai);
  /** In-flight AI calls by cache key: concurrent identical requests share one. */
  const inFlight = new Map<string, Promise<Translated>>();

  function result(code: string, country: string, system: string | null, message: string | null, t: Translated, source: 'static' | 'ai'): TranslationResult {
    return {
      error_code: code, country, system, original_message: message,
      translation: t.translation, category: t.category, severity: t.severity, retriable: t.retriable, user_message: t.user_message,
      source,
    };
  }

  function fallback(code: string, message: string | null): Translated {
    return { translation: message ?? code, category: 'unknown', severity: 'error', retriable: false, user_message: GENERIC_USER_MESSAGE };
  }

  /** The cached answer, or one AI call (shared by concurrent callers) stored once. */
  async function aiTranslate(key: TranslationKey, input: { country: string; system: string | undefined; code: string; message: string | null }): Promise<Translated> {
    const cached = await translationsRepo.getCached(db, key);
    if (cached) return cached;
    const flightKey = JSON.stringify(key);
    let flight = inFlight.get(flightKey);
    if (!flight) {
      flight = (async () => {
        const answer = await client!.translate({ country: input.country, system: input.system ?? null, code: input.code, message: input.message });
        await translationsRepo.insertCached(db, { ...key, original_message: input.message, ...answer, model: client!.model, created_at: clock.now() });
        // Another node may have stored its answer first: every caller answers with the stored row.
        return (await translationsRepo.getCached(db, key)) ?? answer;
      })().finally(() => inFlight.delete(flightKey));
      inFlight.set(flightKey, flight);
    }
    return flight;
  }

  type ResolveInput = { country: string; system?: string | null | undefined; code: string; message?: string | null | undefined };

  function normalized(input: ResolveInput) {
    return { country: input.country.trim().toUpperCase(), system: normalizeSystem(input.system), code: input.code.trim(), message: input.message?.trim() || null };
  }

  /**
   * The answer when no AI call is needed: a catalog hit, one of this service's own codes,
   * or (no AI configured) the raw message. Undefined when only the AI (or its cache) can
   * answer. A failed submission's `error_message` is written from this at once
   * (services/authority-outcome.ts), so it is null only while an AI translation is pending.
   */
  function resolveWithoutAi(input: ResolveInput): TranslationResult | undefined {
    const { country, system, code, message } = normalized(input);
    const entry = lookupStatic(country, system, code);
    if (entry) {
      const named = system ?? (entry.systems.length === 1 ? entry.systems[0]! : null);
      return result(code, country, named, message, entry, 'static');
    }
    const own = SERVICE_CODES[normalizeCode(code)];
    if (own) return result(code, country, system ?? null, message, own, 'static');
    if (!client) return result(code, country, system ?? null, message, fallback(code, message), 'static');
    return undefined;
  }

  /**
   * Translates an already validated error (any country: the translate_error job also
   * sends PT and GR errors). Never throws for an AI failure: it falls back and says why.
   */
  async function resolve(input: ResolveInput): Promise<Resolution> {
    const known = resolveWithoutAi(input);
    if (known) return { result: known };
    const { country, system, code, message } = normalized(input);
    const key: TranslationKey = { country, system: system ?? '', error_code: normalizeCode(code), message_hash: messageHash(message) };
    try {
      const t = await aiTranslate(key, { country, system, code, message });
      return { result: result(code, country, system ?? null, message, t, 'ai') };
    } catch (err) {
      if (!(err instanceof AiTranslationError)) throw err; // a database failure is not a translation failure
      const why = err.message;
      log.warn({ err, country, system, code }, 'AI translation failed; answering with the untranslated message');
      return { result: result(code, country, system ?? null, message, fallback(code, message), 'static'), aiError: why };
    }
  }

  /** POST /v1/translations/errors: checks the input (the spec's 400 messages), then resolves. */
  async function translate(input: TranslateErrorInput): Promise<TranslationResult> {
    const code = typeof input.error_code === 'string' ? input.error_code.trim() : '';
    if (!code) throw badRequest('error_code is required');
    const country = typeof input.country === 'string' ? input.country.trim().toUpperCase() : '';
    if (!country) throw badRequest('country is required');
    if (!(TRANSLATION_COUNTRIES as readonly string[]).includes(country)) throw badRequest(`country must be ${listCountries()}`);
    const system = normalizeSystem(input.system);
    if (system !== undefined) {
      const allowed: readonly string[] = SYSTEMS_BY_COUNTRY[country as TranslationCountry] ?? [];
      if (!allowed.includes(system)) throw badRequest(`system must be one of ${allowed.join(', ')} for country ${country}`);
    }
    return (await resolve({ country, system, code, message: input.error_message })).result;
  }

  return { translate, resolve, resolveWithoutAi, aiEnabled: client !== null };
}

export type Translator = ReturnType<typeof createTranslator>;
