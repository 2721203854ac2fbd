import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { MAX_CODE_LENGTH, MAX_MESSAGE_LENGTH, type TranslateErrorInput, type Translator } from '../../../translations/service.ts';
import { TRANSLATION_SYSTEMS, listCountries } from '../../../translations/types.ts';
import { StringEnum, authErrors, ErrorBody, Nullable } from '../../schemas.ts';

const Category = StringEnum(['validation', 'auth', 'submission', 'network', 'configuration', 'unknown']);
const Severity = StringEnum(['error', 'warning', 'info']);

export const TranslationResultSchema = Type.Object({
  error_code: Type.String(),
  country: Type.String(),
  system: Nullable(Type.String({ description: 'the system asked for, or the one the catalog matched; null when neither' })),
  original_message: Nullable(Type.String({ description: 'the error_message sent, or null' })),
  translation: Type.String({ description: 'English text of the error (the original message when it could not be translated)' }),
  category: Category,
  severity: Severity,
  retriable: Type.Boolean({ description: 'sending the same document again unchanged may succeed' }),
  user_message: Type.String({ description: 'a short sentence for the merchant' }),
  source: StringEnum(['static', 'ai'], { description: '`static`: the built-in catalog (or no translation); `ai`: an AI translation, cached permanently' }),
});

// Blank values are checked in the service, which answers the spec's "… is required" for them too.
const Body = Type.Object({
  error_code: Type.String({
    maxLength: MAX_CODE_LENGTH, description: 'the authority error code, e.g. 1100, 00404, 0429',
    'x-error-required': 'error_code is required', 'x-error': `error_code must be a string of at most ${MAX_CODE_LENGTH} characters`,
  }),
  country: Type.String({
    maxLength: 8, description: `${listCountries((c) => `\`${c}\``)} (any case)`,
    'x-error-required': 'country is required', 'x-error': `country must be ${listCountries()}`,
  }),
  error_message: Type.Optional(Type.Unsafe<string | null>({
    type: ['string', 'null'], maxLength: MAX_MESSAGE_LENGTH, description: 'the authority message, in its language',
    'x-error': `error_message must be a string of at most ${MAX_MESSAGE_LENGTH} characters`,
  })),
  system: Type.Optional(StringEnum(TRANSLATION_SYSTEMS, { 'x-error': `system must be one of ${TRANSLATION_SYSTEMS.join(', ')}` })),
});

export function translationRoutes(app: FastifyInstance, s: { translations: Translator }) {
  app.post('/v1/translations/errors', {
    config: { permission: 'translations:write' },
    schema: {
      tags: ['translations'],
      summary: 'Translate an authority error code into English',
      description: `Known codes of the systems served (${TRANSLATION_SYSTEMS.join(', ')}) are answered from a static catalog. `
        + 'Unknown codes are translated by an AI model when one is configured and cached permanently per (country, system, code, message); '
        + 'without one, `translation` is the original message and `category` is `unknown`.',
      security: [{ bearer: [] }],
      body: Body,
      response: { 200: TranslationResultSchema, 400: ErrorBody, ...authErrors },
    },
  }, async (req) => s.translations.translate((req.body ?? {}) as TranslateErrorInput));
}
