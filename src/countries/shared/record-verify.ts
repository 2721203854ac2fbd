/**
 * Helpers for the plug-ins' `verifyRecord` (countries/types.ts): reading a stored XML
 * record and checking its enveloped signature, with the faults named in verify-chain's
 * vocabulary. The signature check is src/signing/xmldsig-verify.ts (the certificate of
 * the record's own KeyInfo; no trust anchors: the chain's integrity is the question, not
 * who the issuer is).
 */
import { SignatureError, parseXml, verifyEnvelopedSignature, type XmlElement } from '../../signing/xmldsig-verify.ts';
import type { RecordFault } from '../types.ts';

const ELEMENT = 1;

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
