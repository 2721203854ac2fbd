/**
 * Verification of an enveloped XML signature (XMLDSig 1.0, the form XAdES-BES uses) over
 * a document someone else wrote (an authority's signed messages, e.g. notifications). Our
 * signers (xades-epes.ts) write canonical bytes and never parse; a verifier must parse and
 * canonicalize what it is given, so this module carries a small XML reader and the two
 * canonicalizations signatures use:
 *
 * - Canonical XML 1.0 (`REC-xml-c14n-20010315`, with or without comments): a subset's apex
 *   carries every namespace in scope (and the `xml:` attributes of its ancestors);
 * - Exclusive XML Canonicalization 1.0 (`xml-exc-c14n#`): only the namespaces visibly
 *   used, plus an `InclusiveNamespaces PrefixList`.
 *
 * What is checked, in order (any failure is a `SignatureError` naming it):
 * 1. one `ds:Signature`, a child of the root (enveloped);
 * 2. at least one Reference covers the whole document (`URI=""` with the
 *    enveloped-signature transform): a signature over its own properties only would let
 *    anyone change the message;
 * 3. every Reference (`""` or `#id`, transforms: enveloped-signature, C14N 1.0, exclusive
 *    C14N) digests to its DigestValue (SHA-1, SHA-224/256/384/512);
 * 4. SignatureValue over the canonical SignedInfo, with the key of the first
 *    `X509Certificate` of KeyInfo (RSA PKCS#1 v1.5 or ECDSA, SHA-1/256/384/512);
 * 5. when trust anchors are given: that certificate is one of them, or is issued by one
 *    (directly, or through one intermediate carried in the same X509Data), and every
 *    certificate of the path is valid at `now`.
 *
 * Not supported (refused as unverifiable, never accepted): DOCTYPEs and entity
 * declarations, XPath transforms, references to other documents, other key forms
 * (KeyValue alone, RetrievalMethod).
 */
import crypto from 'node:crypto';

export class SignatureError extends Error {}

const NS_DS = 'http://www.w3.org/2000/09/xmldsig#';
const NS_XML = 'http://www.w3.org/XML/1998/namespace';

const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
const C14N_COMMENTS = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments';
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const EXC_C14N_COMMENTS = 'http://www.w3.org/2001/10/xml-exc-c14n#WithComments';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';

const DIGESTS: Readonly<Record<string, string>> = {
  'http://www.w3.org/2000/09/xmldsig#sha1': 'sha1',
  'http://www.w3.org/2001/04/xmldsig-more#sha224': 'sha224',
  'http://www.w3.org/2001/04/xmlenc#sha256': 'sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384': 'sha384',
  'http://www.w3.org/2001/04/xmlenc#sha512': 'sha512',
};

const SIGNATURES: Readonly<Record<string, { hash: string; ec: boolean }>> = {
  'http://www.w3.org/2000/09/xmldsig#rsa-sha1': { hash: 'sha1', ec: false },
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': { hash: 'sha256', ec: false },
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha384': { hash: 'sha384', ec: false },
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': { hash: 'sha512', ec: false },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha1': { hash: 'sha1', ec: true },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256': { hash: 'sha256', ec: true },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384': { hash: 'sha384', ec: true },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512': { hash: 'sha512', ec: true },
};

// ---------------------------------------------------------------------------------------
// A small XML reader: elements (qualified names, attributes in document order, namespace
// declarations apart), text (entities resolved, CDATA as text), comments, PIs.

interface Attr {
  /** The qualified name as written. */
  name: string;
  value: string;
}

export interface XmlElement {
  type: 'element';
  name: string;
  prefix: string;
  local: string;
  /** Namespace URI of the element ('' for none). */
  ns: string;
  /** Namespace declarations written on this element: prefix ('' default) → URI. */
  decls: Map<string, string>;
  /** Every namespace in scope here (declarations of ancestors and self). */
  scope: Map<string, string>;
  attrs: Attr[];
  children: XmlNode[];
  parent: XmlElement | undefined;
}
type XmlNode = XmlElement | { type: 'text'; value: string } | { type: 'comment'; value: string } | { type: 'pi'; target: string; data: string };

export interface XmlDocument {
  /** Nodes outside the root (comments, PIs) and the root, in order. */
  nodes: XmlNode[];
  root: XmlElement;
}

const NAME = /^[A-Za-z_\u00C0-\uFFFF][\w.\-\u00B7\u00C0-\uFFFF]*(:[A-Za-z_\u00C0-\uFFFF][\w.\-\u00B7\u00C0-\uFFFF]*)?/;

function decode(raw: string, where: number): string {
  if (!raw.includes('&')) return raw;
  return raw.replace(/&([^;&]*);?/g, (m, ent: string) => {
    if (!m.endsWith(';')) throw new SignatureError(`malformed XML: bare & at ${where}`);
    switch (ent) {
      case 'lt': return '<';
      case 'gt': return '>';
      case 'amp': return '&';
      case 'quot': return '"';
      case 'apos': return "'";
    }
    const num = /^#x([0-9a-fA-F]+)$/.exec(ent) ?? /^#([0-9]+)$/.exec(ent);
    if (num) {
      const code = parseInt(num[1]!, ent.startsWith('#x') ? 16 : 10);
      if (code > 0x10ffff || code === 0) throw new SignatureError('malformed XML: bad character reference');
      return String.fromCodePoint(code);
    }
    throw new SignatureError(`malformed XML: unknown entity &${ent};`);
  });
}

/** Parses a document (no DTD). Line ends are normalized to \n as an XML processor does. */
export function parseXml(input: string): XmlDocument {
  const src = input.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const nodes: XmlNode[] = [];
  let root: XmlElement | undefined;
  const stack: XmlElement[] = [];
  let i = 0;
  const add = (n: XmlNode) => {
    const top = stack[stack.length - 1];
    if (top) top.children.push(n);
    else if (n.type === 'text') {
      if (n.value.trim() !== '') throw new SignatureError('malformed XML: text outside the root element');
    } else nodes.push(n);
  };
  while (i < src.length) {
    if (src[i] !== '<') {
      const end = src.indexOf('<', i);
      const raw = src.slice(i, end === -1 ? src.length : end);
      add({ type: 'text', value: decode(raw, i) });
      i = end === -1 ? src.length : end;
      continue;
    }
    if (src.startsWith('<!--', i)) {
      const end = src.indexOf('-->', i + 4);
      if (end === -1) throw new SignatureError('malformed XML: unterminated comment');
      add({ type: 'comment', value: src.slice(i + 4, end) });
      i = end + 3;
    } else if (src.startsWith('<![CDATA[', i)) {
      const end = src.indexOf(']]>', i);
      if (end === -1 || stack.length === 0) throw new SignatureError('malformed XML: bad CDATA section');
      add({ type: 'text', value: src.slice(i + 9, end) });
      i = end + 3;
    } else if (src.startsWith('<?', i)) {
      const end = src.indexOf('?>', i);
      if (end === -1) throw new SignatureError('malformed XML: unterminated processing instruction');
      const body = src.slice(i + 2, end);
      const m = /^(\S+)\s*([\s\S]*)$/.exec(body);
      const target = m?.[1] ?? '';
      if (target.toLowerCase() !== 'xml') add({ type: 'pi', target, data: m?.[2] ?? '' });
      else if (i !== 0) throw new SignatureError('malformed XML: misplaced XML declaration');
      i = end + 2;
    } else if (src.startsWith('<!', i)) {
      throw new SignatureError('a signed document must not carry a DOCTYPE');
    } else if (src[i + 1] === '/') {
      const m = NAME.exec(src.slice(i + 2));
      const top = stack.pop();
      if (!m || !top || m[0] !== top.name) throw new SignatureError('malformed XML: mismatched end tag');
      const close = src.indexOf('>', i);
      if (close === -1 || src.slice(i + 2 + m[0].length, close).trim() !== '') throw new SignatureError('malformed XML: bad end tag');
      i = close + 1;
    } else {
      const m = NAME.exec(src.slice(i + 1));
      if (!m) throw new SignatureError('malformed XML: bad start tag');
      const name = m[0];
      let j = i + 1 + name.length;
      const attrs: Attr[] = [];
      const decls = new Map<string, string>();
      let selfClosing = false;
      for (;;) {
        const ws = /^\s*/.exec(src.slice(j))![0];
        j += ws.length;
        if (src.startsWith('/>', j)) { selfClosing = true; j += 2; break; }
        if (src[j] === '>') { j += 1; break; }
        if (ws === '') throw new SignatureError('malformed XML: attributes must be separated by white space');
        const a = NAME.exec(src.slice(j));
        if (!a) throw new SignatureError('malformed XML: bad attribute');
        j += a[0].length;
        const eq = /^\s*=\s*(["'])/.exec(src.slice(j));
        if (!eq) throw new SignatureError('malformed XML: attribute without a value');
        j += eq[0].length;
        const end = src.indexOf(eq[1]!, j);
        if (end === -1) throw new SignatureError('malformed XML: unterminated attribute value');
        const rawValue = src.slice(j, end);
        if (rawValue.includes('<')) throw new SignatureError('malformed XML: < in an attribute value');
        // Attribute-value normalization (XML 1.0 §3.3.3): white space characters become spaces.
        const value = decode(rawValue.replace(/[\t\n]/g, ' '), j);
        j = end + 1;
        if (attrs.some((x) => x.name === a[0]) || (a[0] === 'xmlns' && decls.has('')) || (a[0].startsWith('xmlns:') && decls.has(a[0].slice(6)))) {
          throw new SignatureError('malformed XML: duplicate attribute');
        }
        if (a[0] === 'xmlns') decls.set('', value);
        else if (a[0].startsWith('xmlns:')) decls.set(a[0].slice(6), value);
        else attrs.push({ name: a[0], value });
      }
      const parent = stack[stack.length - 1];
      if (!parent && root) throw new SignatureError('malformed XML: more than one root element');
      const scope = new Map(parent?.scope ?? [['xml', NS_XML]]);
      for (const [p, u] of decls) {
        if (u === '') scope.delete(p);
        else scope.set(p, u);
      }
      const colon = name.indexOf(':');
      const prefix = colon === -1 ? '' : name.slice(0, colon);
      const ns = scope.get(prefix) ?? '';
      if (prefix !== '' && ns === '') throw new SignatureError(`malformed XML: undeclared prefix ${prefix}`);
      for (const a of attrs) {
        const c = a.name.indexOf(':');
        if (c !== -1 && !scope.has(a.name.slice(0, c))) throw new SignatureError(`malformed XML: undeclared prefix ${a.name.slice(0, c)}`);
      }
      const el: XmlElement = { type: 'element', name, prefix, local: colon === -1 ? name : name.slice(colon + 1), ns, decls, scope, attrs, children: [], parent };
      add(el);
      if (!parent) root = el;
      if (!selfClosing) stack.push(el);
      i = j;
    }
  }
  if (stack.length > 0 || !root) throw new SignatureError('malformed XML: unclosed element');
  return { nodes, root };
}

// ---------------------------------------------------------------------------------------
// Canonicalization.

const escText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
const escAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;').replace(/\t/g, '&#x9;').replace(/\n/g, '&#xA;').replace(/\r/g, '&#xD;');

interface C14nOptions {
  exclusive: boolean;
  comments: boolean;
  /** Exclusive C14N's InclusiveNamespaces PrefixList ('#default' for the default namespace). */
  inclusivePrefixes: ReadonlySet<string>;
  /** A node left out with its subtree (the enveloped signature). */
  omit: XmlElement | undefined;
}

function attrNs(el: XmlElement, name: string): { ns: string; local: string } {
  const c = name.indexOf(':');
  if (c === -1) return { ns: '', local: name };
  return { ns: el.scope.get(name.slice(0, c)) ?? '', local: name.slice(c + 1) };
}

function sortedAttrs(el: XmlElement, extra: Attr[] = []): Attr[] {
  return [...el.attrs, ...extra]
    .map((a) => ({ a, k: attrNs(el, a.name) }))
    .sort((x, y) => (x.k.ns === y.k.ns ? (x.k.local < y.k.local ? -1 : x.k.local > y.k.local ? 1 : 0) : x.k.ns < y.k.ns ? -1 : 1))
    .map((x) => x.a);
}

const nsDecl = (prefix: string, uri: string) => (prefix === '' ? ` xmlns="${escAttr(uri)}"` : ` xmlns:${prefix}="${escAttr(uri)}"`);

/** Canonical form of `apex` and its subtree, as a document subset (XMLDSig: a Reference's `#id` or SignedInfo). */
export function canonicalize(apex: XmlElement, opts: C14nOptions): string {
  let out = '';
  // `rendered`: the namespaces the nearest output ancestor put in scope of the output.
  const walk = (el: XmlElement, rendered: Map<string, string>, isApex: boolean): void => {
    if (el === opts.omit) return;
    const next = new Map(rendered);
    const decls: [string, string][] = [];
    if (opts.exclusive) {
      const used = new Set<string>([el.prefix]);
      for (const a of el.attrs) {
        const c = a.name.indexOf(':');
        if (c !== -1) used.add(a.name.slice(0, c));
      }
      for (const p of opts.inclusivePrefixes) used.add(p === '#default' ? '' : p);
      for (const p of used) {
        if (p === 'xml') continue;
        const uri = el.scope.get(p) ?? '';
        if (p === '' && uri === '' && (rendered.get('') ?? '') === '') continue;
        if (p !== '' && uri === '') continue;
        if (rendered.get(p) !== uri) {
          decls.push([p, uri]);
          next.set(p, uri);
        }
      }
    } else {
      for (const [p, uri] of el.scope) {
        if (p === 'xml') continue;
        if (rendered.get(p) !== uri) {
          decls.push([p, uri]);
          next.set(p, uri);
        }
      }
      // A default namespace undeclared here that the output ancestor had declared.
      if (!el.scope.has('') && (rendered.get('') ?? '') !== '') {
        decls.push(['', '']);
        next.delete('');
      }
    }
    decls.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const extra: Attr[] = [];
    if (isApex && !opts.exclusive) {
      // Canonical XML 1.0: the apex of a subset inherits the xml: attributes of its ancestors.
      const seen = new Set(el.attrs.filter((a) => a.name.startsWith('xml:')).map((a) => a.name));
      for (let p = el.parent; p; p = p.parent) {
        for (const a of p.attrs) {
          if (a.name.startsWith('xml:') && !seen.has(a.name)) {
            seen.add(a.name);
            extra.push(a);
          }
        }
      }
    }
    out += `<${el.name}`;
    for (const [p, u] of decls) out += nsDecl(p, u);
    for (const a of sortedAttrs(el, extra)) out += ` ${a.name}="${escAttr(a.value)}"`;
    out += '>';
    for (const c of el.children) {
      if (c.type === 'element') walk(c, next, false);
      else if (c.type === 'text') out += escText(c.value);
      else if (c.type === 'comment') {
        if (opts.comments) out += `<!--${c.value}-->`;
      } else out += `<?${c.target}${c.data ? ` ${c.data}` : ''}?>`;
    }
    out += `</${el.name}>`;
  };
  walk(apex, new Map(), true);
  return out;
}

/** Canonical form of the whole document (a Reference `URI=""`): the root, with the comments and PIs around it. */
function canonicalizeDocument(doc: XmlDocument, opts: C14nOptions): string {
  const parts: string[] = [];
  let afterRoot = false;
  for (const n of doc.nodes) {
    if (n === doc.root) {
      parts.push(canonicalize(doc.root, opts));
      afterRoot = true;
      continue;
    }
    const text = n.type === 'comment' ? (opts.comments ? `<!--${n.value}-->` : undefined) : n.type === 'pi' ? `<?${n.target}${n.data ? ` ${n.data}` : ''}?>` : undefined;
    if (text !== undefined) parts.push(afterRoot ? `\n${text}` : `${text}\n`);
  }
  return parts.join('');
}

// ---------------------------------------------------------------------------------------
// The signature.

const childrenNamed = (el: XmlElement, ns: string, local: string): XmlElement[] =>
  el.children.filter((c): c is XmlElement => c.type === 'element' && c.ns === ns && c.local === local);
const child = (el: XmlElement, local: string, where: string): XmlElement => {
  const c = childrenNamed(el, NS_DS, local)[0];
  if (!c) throw new SignatureError(`${where} is missing its ds:${local}`);
  return c;
};
const textOf = (el: XmlElement): string => el.children.map((c) => (c.type === 'text' ? c.value : c.type === 'element' ? textOf(c) : '')).join('');
const attr = (el: XmlElement, name: string): string | undefined => el.attrs.find((a) => a.name === name)?.value;

function* elements(el: XmlElement): Generator<XmlElement> {
  yield el;
  for (const c of el.children) if (c.type === 'element') yield* elements(c);
}

function byId(doc: XmlDocument, id: string): XmlElement {
  const found = [...elements(doc.root)].filter((e) => e.attrs.some((a) => (a.name === 'Id' || a.name === 'ID' || a.name === 'id') && a.value === id));
  if (found.length !== 1) throw new SignatureError(found.length === 0 ? `no element with Id ${id}` : `more than one element with Id ${id}`);
  return found[0]!;
}

function c14nOf(algorithm: string | undefined, method: XmlElement | undefined): Omit<C14nOptions, 'omit'> {
  const prefixes = new Set<string>();
  if (method) {
    for (const inc of method.children) {
      if (inc.type === 'element' && inc.local === 'InclusiveNamespaces') {
        for (const p of (attr(inc, 'PrefixList') ?? '').split(/\s+/)) if (p) prefixes.add(p);
      }
    }
  }
  switch (algorithm) {
    case C14N: return { exclusive: false, comments: false, inclusivePrefixes: prefixes };
    case C14N_COMMENTS: return { exclusive: false, comments: true, inclusivePrefixes: prefixes };
    case EXC_C14N: return { exclusive: true, comments: false, inclusivePrefixes: prefixes };
    case EXC_C14N_COMMENTS: return { exclusive: true, comments: true, inclusivePrefixes: prefixes };
    default: throw new SignatureError(`unsupported canonicalization ${algorithm ?? '(none)'}`);
  }
}

const base64 = (s: string): Buffer => {
  const clean = s.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) throw new SignatureError('a base64 value is not base64');
  return Buffer.from(clean, 'base64');
};

export interface VerifyOptions {
  /** Trust anchors (PEM, one or more certificates). None: any certificate whose key verifies. */
  trustedCa?: string | undefined;
  now: Date;
}

export interface VerifiedSignature {
  /** The signing certificate (KeyInfo). */
  certificate: crypto.X509Certificate;
  /** Whether the certificate was checked against the trust anchors. */
  trusted: boolean;
}

/** The `ds:Signature` children of the root (what an enveloped signature is). */
export function envelopedSignatures(doc: XmlDocument): XmlElement[] {
  return childrenNamed(doc.root, NS_DS, 'Signature');
}

/** Splits a PEM bundle into certificates. */
export function pemCertificates(pem: string): crypto.X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new crypto.X509Certificate(b));
}

const validAt = (c: crypto.X509Certificate, now: Date) => new Date(c.validFrom) <= now && now <= new Date(c.validTo);

function checkTrust(leaf: crypto.X509Certificate, carried: crypto.X509Certificate[], anchorsPem: string, now: Date): void {
  const anchors = pemCertificates(anchorsPem);
  if (anchors.length === 0) throw new SignatureError('no trusted certificate configured');
  const issuedBy = (c: crypto.X509Certificate, issuer: crypto.X509Certificate) => c.checkIssued(issuer) && c.verify(issuer.publicKey);
  // The path: the leaf itself trusted, issued by an anchor, or through one carried intermediate.
  let path: crypto.X509Certificate[] | undefined;
  for (const a of anchors) {
    if (a.fingerprint256 === leaf.fingerprint256) path = [leaf];
    else if (issuedBy(leaf, a)) path = [leaf, a];
    if (path) break;
  }
  for (const mid of path ? [] : carried) {
    if (mid.fingerprint256 === leaf.fingerprint256 || !mid.ca || !issuedBy(leaf, mid)) continue;
    const a = anchors.find((x) => issuedBy(mid, x));
    if (a) {
      path = [leaf, mid, a];
      break;
    }
  }
  if (!path) throw new SignatureError('the signing certificate is not issued by a trusted certificate authority');
  if (!validAt(leaf, now)) throw new SignatureError('the signing certificate is expired or not yet valid');
  if (path.slice(1).some((c) => !validAt(c, now))) throw new SignatureError('a certificate of the signing path is expired or not yet valid');
}

/**
 * Verifies the enveloped signature of `doc` (exactly one `ds:Signature` child of its
 * root). Throws a `SignatureError` saying what failed.
 */
export function verifyEnvelopedSignature(doc: XmlDocument, opts: VerifyOptions): VerifiedSignature {
  const sigs = envelopedSignatures(doc);
  if (sigs.length !== 1) throw new SignatureError(sigs.length === 0 ? 'the document has no enveloped ds:Signature' : 'the document has more than one ds:Signature');
  const sig = sigs[0]!;
  const signedInfo = child(sig, 'SignedInfo', 'ds:Signature');
  const c14nMethod = child(signedInfo, 'CanonicalizationMethod', 'ds:SignedInfo');
  const sigMethod = attr(child(signedInfo, 'SignatureMethod', 'ds:SignedInfo'), 'Algorithm') ?? '';
  const algo = SIGNATURES[sigMethod];
  if (!algo) throw new SignatureError(`unsupported signature method ${sigMethod}`);
  const refs = childrenNamed(signedInfo, NS_DS, 'Reference');
  if (refs.length === 0) throw new SignatureError('ds:SignedInfo has no ds:Reference');

  let coversDocument = false;
  refs.forEach((ref, n) => {
    const uri = attr(ref, 'URI');
    const where = `Reference ${n + 1}${uri !== undefined ? ` (URI="${uri}")` : ''}`;
    let target: XmlElement;
    if (uri === '') target = doc.root;
    else if (uri !== undefined && /^#[^\s#]+$/.test(uri) && !uri.startsWith('#xpointer(')) target = byId(doc, uri.slice(1));
    else throw new SignatureError(`${where}: only same-document references are supported`);
    let enveloped = false;
    let c14n: Omit<C14nOptions, 'omit'> = { exclusive: false, comments: false, inclusivePrefixes: new Set() };
    const transforms = childrenNamed(ref, NS_DS, 'Transforms')[0];
    for (const t of transforms ? childrenNamed(transforms, NS_DS, 'Transform') : []) {
      const a = attr(t, 'Algorithm');
      if (a === ENVELOPED) enveloped = true;
      else c14n = c14nOf(a, t);
    }
    const digestAlg = attr(child(ref, 'DigestMethod', where), 'Algorithm') ?? '';
    const hash = DIGESTS[digestAlg];
    if (!hash) throw new SignatureError(`${where}: unsupported digest method ${digestAlg}`);
    // The enveloped transform removes this signature wherever it sits in the target (if at all).
    const omit = enveloped ? sig : undefined;
    const bytes = uri === '' ? canonicalizeDocument(doc, { ...c14n, comments: false, omit }) : canonicalize(target, { ...c14n, omit });
    const digest = crypto.createHash(hash).update(bytes, 'utf8').digest();
    const expected = base64(textOf(child(ref, 'DigestValue', where)));
    if (expected.length !== digest.length || !crypto.timingSafeEqual(expected, digest)) throw new SignatureError(`${where}: the digest does not match (the content was altered)`);
    if (uri === '' && enveloped) coversDocument = true;
  });
  if (!coversDocument) throw new SignatureError('no reference covers the whole document (URI="" with the enveloped-signature transform)');

  const keyInfo = child(sig, 'KeyInfo', 'ds:Signature');
  const certs = childrenNamed(keyInfo, NS_DS, 'X509Data').flatMap((d) => childrenNamed(d, NS_DS, 'X509Certificate'));
  if (certs.length === 0) throw new SignatureError('ds:KeyInfo carries no X509Certificate');
  let chain: crypto.X509Certificate[];
  try {
    chain = certs.map((c) => new crypto.X509Certificate(base64(textOf(c))));
  } catch (e) {
    if (e instanceof SignatureError) throw e;
    throw new SignatureError('an X509Certificate of ds:KeyInfo cannot be read');
  }
  const leaf = chain[0]!;
  const signedBytes = canonicalize(signedInfo, { ...c14nOf(attr(c14nMethod, 'Algorithm'), c14nMethod), omit: undefined });
  const value = base64(textOf(child(sig, 'SignatureValue', 'ds:Signature')));
  let ok: boolean;
  try {
    ok = crypto.verify(algo.hash, Buffer.from(signedBytes, 'utf8'), algo.ec ? { key: leaf.publicKey, dsaEncoding: 'ieee-p1363' } : leaf.publicKey, value);
  } catch {
    ok = false;
  }
  if (!ok) throw new SignatureError('the signature value does not verify with the certificate of ds:KeyInfo');
  if (opts.trustedCa !== undefined) checkTrust(leaf, chain.slice(1), opts.trustedCa, opts.now);
  return { certificate: leaf, trusted: opts.trustedCa !== undefined };
}
