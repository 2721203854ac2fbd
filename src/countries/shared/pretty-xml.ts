/**
 * Test-only: XML laid out one element a line, indented, so that a golden file's change
 * reads as a diff (signed records are one long line). It is for people: what a record
 * means is still checked on its exact bytes.
 *
 * fast-xml-parser (already a dependency) does the layout. Text and attribute values pass
 * through verbatim (no entity decoding, no trimming, no number parsing); only whitespace
 * between elements is dropped and laid out anew. An empty element is always written
 * `<a></a>` (the canonical form our signed records use): the parser keeps no trace of
 * `<a/>`. A layout that would change anything else (single-quoted attributes, which the
 * builder double-quotes, included) is refused, so a pretty copy never misleads.
 */
import { XMLBuilder, XMLParser } from 'fast-xml-parser';

const OPTIONS = {
  preserveOrder: true,
  ignoreAttributes: false,
  processEntities: false,
  htmlEntities: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  ignoreDeclaration: false,
  ignorePiTags: false,
  commentPropName: '#comment',
  cdataPropName: '#cdata',
} as const;

const parser = new XMLParser(OPTIONS);
const builder = new XMLBuilder({ ...OPTIONS, format: true, indentBy: '  ', suppressEmptyNode: false });

type Node = Record<string, unknown>;

/** Whitespace-only text between elements is layout, not content: the builder lays it out again. */
function withoutLayout(nodes: Node[]): Node[] {
  return nodes
    .filter((n) => !('#text' in n && /^\s*$/.test(String(n['#text']))))
    .map((n) => Object.fromEntries(Object.entries(n).map(([k, v]) => [k, k !== ':@' && Array.isArray(v) ? withoutLayout(v as Node[]) : v])));
}

/** The document with whitespace between tags removed and empty elements in one form. */
function content(xml: string): string {
  return xml
    .replace(/>\s+</g, '><')
    .trim()
    .replace(/<([^\s/>!?]+)((?:\s+[^\s=]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*\/>/g, '<$1$2></$1>');
}

/** The pretty form of `xml`, ending with a newline (diff tools expect one). */
export function prettyXml(xml: string): string {
  const pretty = `${(builder.build(withoutLayout(parser.parse(xml) as Node[])) as string).replace(/^\n+/, '')}\n`;
  if (content(pretty) !== content(xml)) {
    throw new Error('prettyXml: the layout would change the document beyond whitespace between elements');
  }
  return pretty;
}
