/**
 * Namespace declarations of documents we sign, and what inclusive Canonical XML 1.0
 * makes of them (W3C REC xml-c14n-20010315).
 *
 * Why this matters: under inclusive C14N, a document subset whose apex is not the root
 * (our `ds:SignedInfo`, `xades:SignedProperties` and `ds:KeyInfo`) is rendered with every
 * namespace node in scope at that apex, declared on the apex start tag (C14N §2.3 and
 * §4.7 "Superfluous Namespace Declarations" do not apply to the apex: nothing above it is
 * in the output). So the digest of `SignedProperties` covers `xmlns:T="urn:ticketbai:emision"`
 * inherited from the root even though the element never uses `T`. We keep every
 * declaration on the root element, so the set in scope inside the signature is exactly
 * the root's: it is read once from the root start tag and written in front of each
 * apex's attributes, in C14N order (default namespace first, then by prefix, comparing
 * code points: `T` < `ds` < `xades`).
 */
import { escapeAttr } from '../xml/escape.ts';

/** XML-Signature Syntax and Processing (W3C REC xmldsig-core). */
export const NS_DS = 'http://www.w3.org/2000/09/xmldsig#';
/** XAdES (ETSI TS 101 903 v1.3.2, kept by ETSI EN 319 132-1). */
export const NS_XADES = 'http://uri.etsi.org/01903/v1.3.2#';

/** Prefix → namespace URI; `''` is the default namespace. */
export type Namespaces = Readonly<Record<string, string>>;

/** C14N §2.3: namespace nodes sorted by local name (prefix), the default one first; code-point order. */
const byPrefix = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** ` xmlns:p="uri"…` in canonical order (what a canonical root start tag carries). */
export function namespaceDeclarations(ns: Namespaces): string {
  return Object.keys(ns)
    .sort(byPrefix)
    .map((prefix) => (prefix === '' ? ` xmlns="${escapeAttr(ns[prefix]!)}"` : ` xmlns:${prefix}="${escapeAttr(ns[prefix]!)}"`))
    .join('');
}

/**
 * The root start tag of a document signed here: the document's own namespaces plus the
 * `ds` and `xades` prefixes the enveloped signature uses, all declared on the root (see
 * the module note). `name` is the qualified root name, e.g. `T:TicketBai`.
 */
export function signableRootStartTag(name: string, own: Namespaces): string {
  return `<${name}${namespaceDeclarations({ ...own, ds: NS_DS, xades: NS_XADES })}>`;
}

export interface RootInfo {
  /** Qualified name of the root element. */
  name: string;
  /** Index just after the root start tag's `>`. */
  startTagEnd: number;
  /** The declarations in scope inside the root, in canonical order, ready to insert. */
  declarations: string;
}

// A canonical start tag: `<qname` then attributes `name="value"` separated by one space
// (C14N escapes `"` inside values as &quot;, so `[^"]*` is exact).
const ROOT_START = /^<([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)((?: [^\s="<>]+="[^"]*")*)>/;
const ATTRIBUTE = / ([^\s="<>]+)="([^"]*)"/g;

/**
 * Reads the root start tag of a canonical document (no XML declaration, no leading
 * whitespace), checks it binds `ds` and `xades` as the signature needs, and returns the
 * namespace declarations in scope inside it. Only the start tag is looked at: this is
 * not parsing the document.
 */
export function readRoot(document: string): RootInfo {
  const m = ROOT_START.exec(document);
  if (m === null) throw new Error('xades: the document must start with its root start tag, in canonical form (no XML declaration)');
  const name = m[1]!;
  const ns: Record<string, string> = {};
  const written: string[] = [];
  let attributesStarted = false;
  for (const [whole, attr, value] of m[2]!.matchAll(ATTRIBUTE)) {
    const prefix = attr === 'xmlns' ? '' : attr!.startsWith('xmlns:') ? attr!.slice(6) : undefined;
    if (prefix !== undefined) {
      // C14N §2.3: namespace declarations come before the attributes.
      if (attributesStarted) throw new Error('xades: the root start tag is not canonical (a namespace declaration after an attribute)');
      ns[prefix] = value!;
      written.push(whole);
      continue;
    }
    attributesStarted = true;
    // C14N §2.4: xml:* attributes are inherited by the apex of a document subset; we do
    // not render them there, so a root carrying one would make our digests wrong.
    if (attr!.startsWith('xml:')) throw new Error(`xades: the root must not carry ${attr} (inherited by C14N)`);
  }
  if (ns.ds !== NS_DS || ns.xades !== NS_XADES) {
    throw new Error(`xades: the root must declare xmlns:ds="${NS_DS}" and xmlns:xades="${NS_XADES}"`);
  }
  if (!document.endsWith(`</${name}>`)) throw new Error(`xades: the document must end with </${name}>`);
  // Values were already escaped in the canonical start tag: they are kept as written.
  const declarations = written.join('');
  const sorted = Object.keys(ns)
    .sort(byPrefix)
    .map((p) => (p === '' ? ` xmlns="${ns[p]}"` : ` xmlns:${p}="${ns[p]}"`))
    .join('');
  if (declarations !== sorted) throw new Error('xades: the root start tag is not canonical (namespace declarations out of order)');
  return { name, startTagEnd: m[0].length, declarations };
}
