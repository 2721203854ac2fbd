/**
 * Verification of an enveloped XML signature (XMLDSig 1.0, the form XAdES-BES uses) over
 * a document someone else wrote (an authority's signed messages, e.g. notifications).
 * Parsing is `@xmldom/xmldom`'s, reference digests, canonicalization (C14N 1.0 and
 * exclusive C14N, with or without comments, the enveloped-signature transform) and the
 * signature value are `xml-crypto`'s `SignedXml.checkSignature`. This module decides what
 * is acceptable around it, because xml-crypto verifies whatever signature it is handed:
 *
 * 1. one `ds:Signature`, a child of the root (enveloped);
 * 2. before anything is computed, the SignedInfo is read here: only the algorithms listed
 *    below, only same-document references (`""` or `#id`, the Id found exactly once), no
 *    other transforms (XPath, XSLT...), and at least one Reference covers the whole
 *    document (`URI=""` with the enveloped-signature transform): a signature over its own
 *    properties only, or over an element moved elsewhere (signature wrapping), would let
 *    anyone change the message we read, which is the root;
 * 3. every Reference digests to its DigestValue and the SignatureValue verifies over the
 *    canonical SignedInfo (xml-crypto), with the key of the first `X509Certificate` of
 *    `ds:KeyInfo/ds:X509Data`, and with no other key: a `KeyValue` (a key the document
 *    picks) is never used;
 * 4. the references xml-crypto checked are the ones read in 2;
 * 5. when trust anchors are given: that certificate is one of them, or is issued by one
 *    (directly, or through one intermediate carried in the same X509Data), and every
 *    certificate of the path is valid at `now`.
 *
 * Any failure is a `SignatureError` naming it; nothing else is thrown for bad input.
 * Not supported (refused as unverifiable, never accepted): DOCTYPEs, XPath transforms,
 * references to other documents, other key forms (KeyValue alone, RetrievalMethod).
 */
import crypto from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { SignedXml, type HashAlgorithm, type SignatureAlgorithm } from 'xml-crypto';

export class SignatureError extends Error {}

const NS_DS = 'http://www.w3.org/2000/09/xmldsig#';
// DOM node types.
const ELEMENT = 1;
const TEXT = 3;
const PROCESSING_INSTRUCTION = 7;
const DOCUMENT_TYPE = 10;
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const CANONICALIZATIONS: ReadonlySet<string> = new Set([
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments',
  'http://www.w3.org/2001/10/xml-exc-c14n#',
  'http://www.w3.org/2001/10/xml-exc-c14n#WithComments',
]);

/** The digest methods accepted (URI → Node hash). */
const DIGESTS: Readonly<Record<string, string>> = {
  'http://www.w3.org/2000/09/xmldsig#sha1': 'sha1',
  'http://www.w3.org/2001/04/xmldsig-more#sha224': 'sha224',
  'http://www.w3.org/2001/04/xmlenc#sha256': 'sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384': 'sha384',
  'http://www.w3.org/2001/04/xmlenc#sha512': 'sha512',
};

/** The signature methods accepted: RSA PKCS#1 v1.5 or ECDSA. */
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

// xml-crypto's tables hold RSA SHA-1/256/512 (and RSA-PSS, not accepted here) and digests
// SHA-1/256/512: the others we accept are added through its algorithm interfaces.
const digestAlgorithm = (uri: string, hash: string) =>
  class implements HashAlgorithm {
    getAlgorithmName = () => uri;
    getHash = (xml: string) => crypto.createHash(hash).update(xml, 'utf8').digest('base64');
  };
const signatureAlgorithm = (uri: string, { hash, ec }: { hash: string; ec: boolean }) =>
  class {
    getAlgorithmName = () => uri;
    getSignature = (): never => {
      throw new Error('verification only');
    };
    // XMLDSig's ECDSA SignatureValue is r || s (RFC 4050), not DER.
    verifySignature = (material: string, key: crypto.KeyLike, value: string): boolean =>
      crypto.verify(hash, Buffer.from(material, 'utf8'), ec ? { key: crypto.createPublicKey(key), dsaEncoding: 'ieee-p1363' } : key, Buffer.from(value, 'base64'));
  } as unknown as new () => SignatureAlgorithm;

type C14nClass = SignedXml['CanonicalizationAlgorithms'][string];

/**
 * xml-crypto (6.x) sorts namespace declarations with `localeCompare`, a locale collation:
 * `xmlns:ds` before `xmlns:T`. Canonical XML sorts them by prefix in code-point order
 * (C14N 1.0 §2.2: "lexicographic order … namespace URI as primary key" for attributes and
 * "local name" for namespace nodes, compared as code points), so `T` (U+0054) comes before
 * `ds` (U+0064). With the locale order, every TicketBAI record (root `T:TicketBai` with
 * `xmlns:ds`, `xmlns:xades`) failed its whole-document digest here while xmlsec1 accepted
 * it. The classes with a `nsCompare` get one in code-point order; the others are kept.
 */
function codePointNamespaceOrder(c14n: C14nClass): C14nClass {
  if (typeof (c14n.prototype as { nsCompare?: unknown }).nsCompare !== 'function') return c14n;
  const Base = c14n as unknown as new () => { nsCompare(a: { prefix: string }, b: { prefix: string }): number };
  return class extends Base {
    override nsCompare(a: { prefix: string }, b: { prefix: string }): number {
      return a.prefix === b.prefix ? 0 : a.prefix < b.prefix ? -1 : 1;
    }
  } as unknown as C14nClass;
}

/** A `SignedXml` that knows exactly the algorithms accepted here and takes its key from `key()`. */
function signedXml(key: () => string): SignedXml {
  const sx = new SignedXml({ getCertFromKeyInfo: key });
  const builtIn = { hash: sx.HashAlgorithms, sig: sx.SignatureAlgorithms, c14n: sx.CanonicalizationAlgorithms };
  sx.HashAlgorithms = Object.fromEntries(Object.entries(DIGESTS).map(([uri, h]) => [uri, builtIn.hash[uri] ?? digestAlgorithm(uri, h)]));
  sx.SignatureAlgorithms = Object.fromEntries(Object.entries(SIGNATURES).map(([uri, s]) => [uri, builtIn.sig[uri] ?? signatureAlgorithm(uri, s)]));
  sx.CanonicalizationAlgorithms = Object.fromEntries([...CANONICALIZATIONS, ENVELOPED].map((uri) => [uri, codePointNamespaceOrder(builtIn.c14n[uri]!)]));
  wholeDocumentWithInstructions(sx);
  return sx;
}

type CanonReference = (doc: Document, ref: { uri?: string }, node: Node) => string;

/**
 * xml-crypto dereferences `URI=""` as the root element, but XMLDSig's `URI=""` is the
 * document: its processing instructions outside the root (the `xml-stylesheet` that SdI
 * notifications carry) are signed too, and C14N writes them before the root followed by a
 * line feed, after it preceded by one (comments are left out of `URI=""`). Without them a
 * document signed with one (by xmlsec1, by SdI) never verifies. xml-crypto has no hook for
 * this: its (private) `getCanonReferenceXml` is wrapped; the test that signs such a
 * document with xmlsec1 fails if a new xml-crypto moves it.
 */
function wholeDocumentWithInstructions(sx: SignedXml): void {
  const target = sx as unknown as { getCanonReferenceXml: CanonReference };
  const inner = target.getCanonReferenceXml;
  if (typeof inner !== 'function') throw new SignatureError('the signature cannot be verified: xml-crypto has no getCanonReferenceXml (see xmldsig-verify.ts)');
  target.getCanonReferenceXml = (doc, ref, node) => {
    const canonical = inner.call(sx, doc, ref, node);
    if (ref.uri !== '' || node !== doc.documentElement) return canonical;
    let out = '';
    let afterRoot = false;
    for (const n of Array.from(doc.childNodes)) {
      if (n.nodeType === ELEMENT) {
        out += canonical;
        afterRoot = true;
      } else if (n.nodeType === PROCESSING_INSTRUCTION && n.nodeName.toLowerCase() !== 'xml') {
        const pi = n as ProcessingInstruction;
        const text = `<?${pi.target}${pi.data ? ` ${pi.data}` : ''}?>`;
        out += afterRoot ? `\n${text}` : `${text}\n`;
      }
    }
    return out;
  };
}

// ---------------------------------------------------------------------------------------
// The document.

export type XmlElement = Element;

export interface XmlDocument {
  /** The text parsed (without a byte order mark): xml-crypto verifies its own parse of it. */
  xml: string;
  root: XmlElement;
}

/** The element and its descendants, in document order; a loop, not recursion: a hostile document may nest deeper than the stack. */
function* elements(root: Element): Generator<Element> {
  const stack: Element[] = [root];
  for (let el = stack.pop(); el !== undefined; el = stack.pop()) {
    yield el;
    const children = Array.from(el.childNodes).filter((c): c is Element => c.nodeType === ELEMENT);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
}

/** Parses a document (no DTD) with xmldom, refusing what it only warns about. */
export function parseXml(input: string): XmlDocument {
  const xml = input.replace(/^\uFEFF/, '');
  const problems: string[] = [];
  const report = (m: string) => problems.push(m.replace(/^\[xmldom [a-zA-Z]+\]\s*/, '').split('\n')[0]!.trim());
  let dom: Document | undefined;
  try {
    dom = new DOMParser({ errorHandler: { warning: report, error: report, fatalError: report } }).parseFromString(xml, 'text/xml');
  } catch (e) {
    report(e instanceof Error ? e.message : String(e));
  }
  if (dom?.doctype || Array.from(dom?.childNodes ?? []).some((n) => n.nodeType === DOCUMENT_TYPE) || (problems.length > 0 && /<!DOCTYPE/i.test(xml))) {
    throw new SignatureError('a signed document must not carry a DOCTYPE');
  }
  if (problems.length > 0) throw new SignatureError(/redefined/.test(problems[0]!) ? 'malformed XML: duplicate attribute' : `malformed XML: ${problems[0]}`);
  const root = dom?.documentElement;
  if (!dom || !root) throw new SignatureError('malformed XML: no root element');
  // xmldom 0.8 accepts these silently.
  if (Array.from(dom.childNodes).some((n) => n.nodeType === TEXT && (n.nodeValue ?? '').trim() !== '')) {
    throw new SignatureError('malformed XML: text outside the root element');
  }
  for (const el of elements(root)) {
    for (const n of [el, ...Array.from(el.attributes)]) {
      if (n.prefix && n.prefix !== 'xmlns' && !n.namespaceURI) throw new SignatureError(`malformed XML: undeclared prefix ${n.prefix}`);
    }
  }
  return { xml, root };
}

// ---------------------------------------------------------------------------------------
// The signature.

const childrenNamed = (el: Element, ns: string, local: string): Element[] =>
  Array.from(el.childNodes).filter((c): c is Element => c.nodeType === ELEMENT && (c as Element).namespaceURI === ns && (c as Element).localName === local);
const child = (el: Element, local: string, where: string): Element => {
  const c = childrenNamed(el, NS_DS, local)[0];
  if (!c) throw new SignatureError(`${where} is missing its ds:${local}`);
  return c;
};
const attr = (el: Element, name: string): string | undefined => (el.hasAttribute(name) ? el.getAttribute(name)! : undefined);

const base64 = (s: string): Buffer => {
  const clean = s.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean)) throw new SignatureError('a base64 value is not base64');
  return Buffer.from(clean, 'base64');
};

/** The element a `#id` reference names, found the way xml-crypto finds it (an Id, ID or id attribute, any prefix), exactly once. */
function byId(root: Element, id: string): Element {
  const found = [...elements(root)].filter((e) => Array.from(e.attributes).some((a) => ['Id', 'ID', 'id'].includes(a.localName) && a.value === id));
  if (found.length !== 1) throw new SignatureError(found.length === 0 ? `no element with Id ${id}` : `more than one element with Id ${id}`);
  return found[0]!;
}

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
  let anchors: crypto.X509Certificate[];
  try {
    anchors = pemCertificates(anchorsPem);
  } catch {
    throw new SignatureError('a trusted certificate cannot be read');
  }
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

/** The certificates of `ds:KeyInfo/ds:X509Data`, the signing one first. */
function keyInfoCertificates(sig: Element): crypto.X509Certificate[] {
  const keyInfo = child(sig, 'KeyInfo', 'ds:Signature');
  const certs = childrenNamed(keyInfo, NS_DS, 'X509Data').flatMap((d) => childrenNamed(d, NS_DS, 'X509Certificate'));
  if (certs.length === 0) throw new SignatureError('ds:KeyInfo carries no X509Certificate');
  try {
    return certs.map((c) => new crypto.X509Certificate(base64(c.textContent ?? '')));
  } catch (e) {
    if (e instanceof SignatureError) throw e;
    throw new SignatureError('an X509Certificate of ds:KeyInfo cannot be read');
  }
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
  const c14nMethod = attr(child(signedInfo, 'CanonicalizationMethod', 'ds:SignedInfo'), 'Algorithm');
  if (c14nMethod === undefined || !CANONICALIZATIONS.has(c14nMethod)) throw new SignatureError(`unsupported canonicalization ${c14nMethod ?? '(none)'}`);
  const sigMethod = attr(child(signedInfo, 'SignatureMethod', 'ds:SignedInfo'), 'Algorithm') ?? '';
  const algo = SIGNATURES[sigMethod];
  if (!algo) throw new SignatureError(`unsupported signature method ${sigMethod}`);
  const refs = childrenNamed(signedInfo, NS_DS, 'Reference');
  if (refs.length === 0) throw new SignatureError('ds:SignedInfo has no ds:Reference');

  // What xml-crypto is allowed to compute: read here first.
  let coversDocument = false;
  const read = refs.map((ref, n) => {
    const uri = attr(ref, 'URI');
    const where = `Reference ${n + 1}${uri !== undefined ? ` (URI="${uri}")` : ''}`;
    if (uri === '') {
      // the root
    } else if (uri !== undefined && /^#[^\s#'"]+$/.test(uri) && !uri.startsWith('#xpointer(')) byId(doc.root, uri.slice(1));
    else throw new SignatureError(`${where}: only same-document references are supported`);
    const transforms = childrenNamed(ref, NS_DS, 'Transforms').flatMap((t) => childrenNamed(t, NS_DS, 'Transform')).map((t) => attr(t, 'Algorithm') ?? '');
    for (const t of transforms) if (t !== ENVELOPED && !CANONICALIZATIONS.has(t)) throw new SignatureError(`unsupported canonicalization ${t || '(none)'}`);
    const digestAlg = attr(child(ref, 'DigestMethod', where), 'Algorithm') ?? '';
    if (!DIGESTS[digestAlg]) throw new SignatureError(`${where}: unsupported digest method ${digestAlg}`);
    base64(child(ref, 'DigestValue', where).textContent ?? '');
    if (uri === '' && transforms.includes(ENVELOPED)) coversDocument = true;
    return { uri, where, transforms };
  });
  if (!coversDocument) throw new SignatureError('no reference covers the whole document (URI="" with the enveloped-signature transform)');

  // xml-crypto asks for the key once every reference verified: the certificate of our
  // ds:KeyInfo, whatever else KeyInfo carries.
  let chain: crypto.X509Certificate[] | undefined;
  const key = (): string => {
    chain = keyInfoCertificates(sig);
    if (chain[0]!.publicKey.asymmetricKeyType !== (algo.ec ? 'ec' : 'rsa')) throw new SignatureError(`the key of the certificate of ds:KeyInfo does not fit the signature method ${sigMethod}`);
    base64(child(sig, 'SignatureValue', 'ds:Signature').textContent ?? '');
    return chain[0]!.toString();
  };
  const sx = signedXml(key);
  let ok: boolean;
  try {
    sx.loadSignature(sig);
    // xml-crypto finds these by local name anywhere in the signature: the ones read above.
    if (sx.canonicalizationAlgorithm !== c14nMethod || sx.signatureAlgorithm !== sigMethod) throw new SignatureError('the signature cannot be verified: ds:SignedInfo is not where it should be');
    ok = sx.checkSignature(doc.xml);
  } catch (e) {
    if (e instanceof SignatureError) throw e;
    const message = e instanceof Error ? e.message : String(e);
    if (message.startsWith('invalid signature: the signature value')) throw new SignatureError('the signature value does not verify with the certificate of ds:KeyInfo');
    throw new SignatureError(`the signature cannot be verified: ${message}`);
  }
  const checked = sx.getReferences();
  if (!ok) {
    const n = checked.findIndex((r) => r.validationError);
    const where = read[n]?.where ?? 'a reference';
    const message = checked[n]?.validationError?.message ?? '';
    throw new SignatureError(/calculated digest/.test(message) || n === -1 ? `${where}: the digest does not match (the content was altered)` : `${where}: ${message}`);
  }
  // The references verified are the ones read above (same count, URIs and transforms).
  const same =
    checked.length === read.length &&
    checked.every((r, n) => (r.uri ?? '') === (read[n]!.uri ?? '') && read[n]!.transforms.every((t, i) => r.transforms[i] === t));
  if (!same || !chain) throw new SignatureError('the signature cannot be verified: the references checked are not the ones read');
  const leaf = chain[0]!;
  if (opts.trustedCa !== undefined) checkTrust(leaf, chain.slice(1), opts.trustedCa, opts.now);
  return { certificate: leaf, trusted: opts.trustedCa !== undefined };
}
