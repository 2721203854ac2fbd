/**
 * Helpers for the plug-ins' `verifyRecord` (countries/types.ts): reading a stored XML
 * record and checking its enveloped signature, with the faults named in verify-chain's
 * vocabulary. The signature check is src/signing/xmldsig-verify.ts (the certificate of
 * the record's own KeyInfo; no trust anchors: the chain's integrity is the question, not
 * who the issuer is).
 */
import crypto from 'node:crypto';
import { readRoot } from '../../signing/namespaces.ts';
import { SignatureError, parseXml, verifyEnvelopedSignature, type XmlElement } from '../../signing/xmldsig-verify.ts';
import type { RecordFault } from '../types.ts';

const ELEMENT = 1;
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';

/** The root element of a stored XML record, or the fault of an unreadable body. */
export function xmlRoot(body: string): { root: XmlElement } | { fault: RecordFault } {
  try {
    return { root: parseXml(body).root };
  } catch (err) {
    return { fault: { kind: 'body_changed', reason: `the body is not readable XML: ${(err as Error).message}` } };
  }
}

const childElements = (el: XmlElement): XmlElement[] =>
  Array.from(el.childNodes).filter((c): c is XmlElement => c.nodeType === ELEMENT);

/** The first descendant (depth first) named `local` (any namespace), or undefined. */
export function findElement(el: XmlElement, local: string): XmlElement | undefined {
  for (const c of childElements(el)) {
    if (c.localName === local) return c;
    const found = findElement(c, local);
    if (found) return found;
  }
  return undefined;
}

/** The element at a path of local names from `el`'s children, or undefined. */
export function childAt(el: XmlElement, ...path: string[]): XmlElement | undefined {
  let at: XmlElement | undefined = el;
  for (const name of path) {
    at = at === undefined ? undefined : childElements(at).find((c) => c.localName === name);
  }
  return at;
}

/** The text of the element at `path` (children by local name), or undefined. */
export const textAt = (el: XmlElement, ...path: string[]): string | undefined => {
  const at = childAt(el, ...path);
  return at === undefined ? undefined : (at.textContent ?? '');
};

/**
 * Verifies the record's enveloped signature. A reference whose digest no longer matches
 * is a changed body; any other failure, an invalid signature.
 */
export function signatureFault(body: string): RecordFault | null {
  try {
    verifyEnvelopedSignature(parseXml(body), { now: new Date(0) });
    return null;
  } catch (err) {
    const message = err instanceof SignatureError ? err.message : (err as Error).message;
    return /digest does not match/.test(message)
      ? { kind: 'body_changed', reason: `signed content changed: ${message}` }
      : { kind: 'signature_invalid', reason: message };
  }
}

/** The base64 text of the record's `ds:SignatureValue` (whitespace removed), or undefined. */
export function signatureValueOf(root: XmlElement): string | undefined {
  const sig = childElements(root).find((c) => c.localName === 'Signature');
  const value = sig ? childAt(sig, 'SignatureValue') : undefined;
  return value === undefined ? undefined : (value.textContent ?? '').replace(/\s+/g, '');
}

/**
 * Verifies the enveloped XAdES signature of a document THIS service signed
 * (src/signing/xades-epes.ts), the way it was made: the signer writes every signed part in
 * its C14N form directly (the document, the SignedProperties, KeyInfo and Object subsets
 * with the root's namespace declarations on their apex), so each digest is recomputed over
 * those bytes, and the SignatureValue (RSA-SHA256) over the canonical SignedInfo with the
 * key of the certificate in KeyInfo. For documents whose root uses an upper-case prefix
 * (TicketBAI `T:`): xml-crypto orders namespace declarations case-insensitively, unlike C14N
 * (code point order) and xmlsec1, and so rejects valid signatures of such documents. A
 * document not in that form is reported, never accepted.
 */
export function ownXadesFault(body: string): RecordFault | null {
  const sigStart = body.lastIndexOf('<ds:Signature Id="');
  const rootClose = body.lastIndexOf('</');
  if (sigStart < 0 || rootClose < sigStart || !body.slice(0, rootClose).endsWith('</ds:Signature>')) {
    return { kind: 'signature_invalid', reason: 'no enveloped ds:Signature as the root\'s last child' };
  }
  const document = body.slice(0, sigStart) + body.slice(rootClose);
  const signature = body.slice(sigStart, rootClose);
  let ns: string;
  try {
    ns = readRoot(document).declarations;
  } catch (err) {
    return { kind: 'body_changed', reason: (err as Error).message };
  }
  const signedInfo = /<ds:SignedInfo>([\s\S]*?)<\/ds:SignedInfo>/.exec(signature)?.[1];
  if (signedInfo === undefined) return { kind: 'signature_invalid', reason: 'the signature has no ds:SignedInfo' };
  if (!signedInfo.includes(`<ds:SignatureMethod Algorithm="${RSA_SHA256}">`)) return { kind: 'signature_invalid', reason: 'unsupported signature method' };
  const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('base64');
  let coversDocument = false;
  for (const ref of signedInfo.matchAll(/<ds:Reference([^>]*)>([\s\S]*?)<\/ds:Reference>/g)) {
    const uri = /URI="([^"]*)"/.exec(ref[1]!)?.[1];
    const digest = /<ds:DigestValue>([^<]*)<\/ds:DigestValue>/.exec(ref[2]!)?.[1];
    if (uri === undefined || digest === undefined) return { kind: 'signature_invalid', reason: 'a ds:Reference without URI or digest' };
    if (uri === '') {
      coversDocument = true;
      if (sha256(document) !== digest) return { kind: 'body_changed', reason: 'signed content changed: the document\'s digest does not match its signature' };
      continue;
    }
    const id = uri.slice(1).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const part = new RegExp(`<(ds:KeyInfo|xades:SignedProperties|ds:Object) Id="${id}">([\\s\\S]*?)</\\1>`).exec(signature);
    if (!part) return { kind: 'signature_invalid', reason: `the signed part ${uri} is missing` };
    if (sha256(`<${part[1]}${ns} Id="${uri.slice(1)}">${part[2]}</${part[1]}>`) !== digest) {
      return { kind: 'body_changed', reason: `signed content changed: the digest of ${part[1]} does not match` };
    }
  }
  if (!coversDocument) return { kind: 'signature_invalid', reason: 'no reference covers the whole document' };
  const certificate = /<ds:X509Certificate>([^<]*)<\/ds:X509Certificate>/.exec(signature)?.[1];
  const value = /<ds:SignatureValue[^>]*>([^<]*)<\/ds:SignatureValue>/.exec(signature)?.[1];
  if (certificate === undefined || value === undefined) return { kind: 'signature_invalid', reason: 'no certificate or signature value' };
  let ok: boolean;
  try {
    const key = new crypto.X509Certificate(Buffer.from(certificate.replace(/\s+/g, ''), 'base64')).publicKey;
    ok = crypto.verify('sha256', Buffer.from(`<ds:SignedInfo${ns}>${signedInfo}</ds:SignedInfo>`, 'utf8'), key, Buffer.from(value.replace(/\s+/g, ''), 'base64'));
  } catch (err) {
    return { kind: 'signature_invalid', reason: `the signature cannot be verified: ${(err as Error).message}` };
  }
  return ok ? null : { kind: 'signature_invalid', reason: 'the signature value does not verify with the certificate of ds:KeyInfo' };
}
