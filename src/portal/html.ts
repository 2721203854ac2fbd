/**
 * HTML templating for the portal: template literals through a tag that escapes every
 * interpolated value unless it is already markup built by this tag (`SafeHtml`). Nothing
 * reaches a page unescaped by accident: a string is always text, never markup.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;', '=': '&#61;',
};

/**
 * Text → HTML text, safe in element content and in quoted attribute values. `=` and the
 * backtick are escaped too, so even an unquoted attribute cannot be broken out of.
 */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`=]/g, (c) => ESCAPES[c]!);
}

/** Markup the `html` tag built (or `raw` vouched for): interpolated as it is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** An interpolated value: markup, text, a number, nothing (null/undefined/false → ''), or a list of them. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(v: HtmlValue): string {
  if (v instanceof SafeHtml) return v.value;
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

/** The tag: `html\`<p>${text}</p>\`` escapes `text`; nested `html` results pass through. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Markup from a trusted constant (never from input). */
export const raw = (markup: string): SafeHtml => new SafeHtml(markup);

/** A value for a URL path segment (ids come from the URL, so they are encoded, then escaped by the tag). */
export const seg = (value: string): string => encodeURIComponent(value);
