/**
 * Text read back from XML this service wrote (a stored record), without an XML parser:
 * the records are ours, their shape known, and a receipt or an answer needs one value.
 */

/** An XML text node's entities and character references, decoded. */
export const unescapeXml = (v: string): string =>
  v.replace(/&(?:#x([0-9a-fA-F]+)|#(\d+)|(amp|lt|gt|quot|apos));/g, (_m, hex: string | undefined, dec: string | undefined, name: string | undefined) =>
    hex ? String.fromCodePoint(parseInt(hex, 16)) : dec ? String.fromCodePoint(Number(dec)) : ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[name!]!);

/**
 * The text of the first element named `name` (any prefix) inside the first element named
 * `within` (any prefix), decoded and trimmed; undefined when either is missing or empty.
 */
export function textWithin(xml: string, within: string, name: string): string | undefined {
  const block = new RegExp(`<(?:[\\w.-]+:)?${within}(?:\\s[^>]*)?>([\\s\\S]*?)</(?:[\\w.-]+:)?${within}>`).exec(xml)?.[1];
  if (block === undefined) return undefined;
  const m = new RegExp(`<(?:[\\w.-]+:)?${name}>([^<]*)</(?:[\\w.-]+:)?${name}>`).exec(block);
  const text = m ? unescapeXml(m[1]!).trim() : '';
  return text === '' ? undefined : text;
}
