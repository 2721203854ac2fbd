/**
 * Helpers for writing a system's `codes.ts`: one line per code, its kind named by the
 * helper (`v('Invalid field.')`), its catalog translation by the severity
 * (`error('Fix the field.')`, `warning(…)`).
 */
import type { AuthorityCode, CodeTranslation } from '../types.ts';

/** A helper for one kind of code: `const v = codeKind('validation', false)`. */
export const codeKind =
  (category: AuthorityCode['category'], retriable: boolean, options: { duplicate?: boolean } = {}) =>
  (message: string, translation?: CodeTranslation): AuthorityCode => ({
    message,
    category,
    retriable,
    ...(options.duplicate === true && { duplicate: true }),
    ...(translation !== undefined && { translation }),
  });

const translation = (severity: CodeTranslation['severity'], userMessage: string, english: string | undefined): CodeTranslation =>
  english === undefined ? { userMessage, severity } : { userMessage, severity, english };

/** Not accepted: the merchant (or support) has something to change. */
export const error = (userMessage: string, english?: string): CodeTranslation => translation('error', userMessage, english);

/** Accepted with remarks, already registered, or retried automatically: nothing to fix. */
export const warning = (userMessage: string, english?: string): CodeTranslation => translation('warning', userMessage, english);

/** The user message's ending when the transaction's data must change. */
export const RESEND = 'Correct it and send the transaction again.';
