/**
 * Escaping for XML we write ourselves, already in canonical form (Canonical XML 1.0 /
 * Exclusive C14N, W3C REC §2.3 "Character Modifications"): a document built only with
 * these functions, with no XML declaration, attributes in canonical order, no
 * self-closing tags and no whitespace between elements, is its own canonical form. That
 * lets us sign the bytes we build without parsing them again (the speed goal).
 */

import { ValidationError } from '../core/errors.ts';

/** Characters XML 1.0 cannot carry at all (C0 controls except tab, LF, CR; FFFE/FFFF). */
export const XML_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

/**
 * Text bound for a fiscal document holds such a character: the input's fault, a 400
 * wherever it comes from (the JSON parser refuses them in API bodies already; this is
 * for the other ways in: portal forms, the engine's calls, stored data).
 */
export class XmlCharacterError extends ValidationError {
  constructor(readonly value: string) {
    super('text contains a control character that XML cannot carry');
    this.name = 'XmlCharacterError';
  }
}

function check(value: string): void {
  if (XML_FORBIDDEN.test(value)) throw new XmlCharacterError(value);
}

const TEXT_RE = /[&<>\r]/g;
/** The same class, not global: a test with no state, for text that needs no escape (most: amounts, dates, codes). */
const TEXT_ANY = /[&<>\r]/;
const TEXT_MAP: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '\r': '&#xD;' };

/** Text node content, as C14N writes it (`&`, `<`, `>` and CR escaped). */
export function escapeText(value: string): string {
  check(value);
  return TEXT_ANY.test(value) ? value.replace(TEXT_RE, (c) => TEXT_MAP[c]!) : value;
}

const ATTR_RE = /[&<"\t\n\r]/g;
const ATTR_ANY = /[&<"\t\n\r]/;
const ATTR_MAP: Record<string, string> = { '&': '&amp;', '<': '&lt;', '"': '&quot;', '\t': '&#x9;', '\n': '&#xA;', '\r': '&#xD;' };

/** Attribute value content (between double quotes), as C14N writes it. */
export function escapeAttr(value: string): string {
  check(value);
  return ATTR_ANY.test(value) ? value.replace(ATTR_RE, (c) => ATTR_MAP[c]!) : value;
}

/** `<name>text</name>` with the text escaped; the name is trusted (a literal of ours). */
export const el = (name: string, text: string): string => `<${name}>${escapeText(text)}</${name}>`;

/** `el` when the value is present, '' otherwise (optional schema elements). */
export const optEl = (name: string, text: string | null | undefined): string =>
  text === null || text === undefined || text === '' ? '' : el(name, text);
