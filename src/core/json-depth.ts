/**
 * How deep a JSON text nests, checked before it is parsed. Code that walks a body
 * recursively (the idempotency hash's key sorting, normalisation, the XML of a record)
 * overflows the stack around a few thousand levels: a body nested that deep is refused
 * with a 400 at the door rather than failing later with a 500. No fiscal request needs
 * more than a handful of levels.
 */
export const MAX_JSON_DEPTH = 64;

export const TOO_DEEP_BODY = `request body is nested too deeply (at most ${MAX_JSON_DEPTH} levels of objects and arrays)`;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when objects and arrays in `text` (JSON) nest deeper than `limit`; brackets inside strings do not count. */
export function nestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++; // the escaped character, whatever it is
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}
