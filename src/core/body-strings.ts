/**
 * What strings in a request may not hold, whichever door it comes in by (the HTTP body
 * parser reads the JSON text, http/app.ts; the engine's envelope walks its params,
 * engine/engine.ts): the store cannot hold a NUL, and XML 1.0 (every fiscal document but
 * France's) can carry neither the other C0 controls but tab, LF and CR, nor U+FFFE/U+FFFF,
 * nor a lone UTF-16 surrogate (a SAF-T month file with one could not be parsed at all).
 */
export const NUL_IN_BODY = 'strings in the body may not contain the NUL character (\\u0000)';
export const CONTROL_IN_BODY = 'strings in the body may not contain control characters other than tab, line feed and carriage return (nor U+FFFE, U+FFFF): fiscal documents cannot carry them';
export const LONE_SURROGATE_IN_BODY = 'strings in the body may not contain a lone UTF-16 surrogate (\\uD800 to \\uDFFF without its pair): fiscal documents cannot carry it';

/** A high surrogate not followed by a low one, or a low one not after a high one (code units). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// eslint-disable-next-line no-control-regex
const XML_FORBIDDEN = /[\u0001-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

export const hasLoneSurrogate = (s: string): boolean => LONE_SURROGATE.test(s);

/** The message for a string a request may not hold, or null when it may. */
export function stringFault(s: string): string | null {
  if (s.includes('\0')) return NUL_IN_BODY;
  if (XML_FORBIDDEN.test(s)) return CONTROL_IN_BODY;
  if (LONE_SURROGATE.test(s)) return LONE_SURROGATE_IN_BODY;
  return null;
}
