/**
 * Enveloped XAdES-EPES (and XAdES-BES, ./xades-bes.ts) signatures over documents we
 * generated ourselves in canonical form.
 *
 * The input is the unsigned document exactly as inclusive Canonical XML 1.0 would write
 * it (built with ../xml/escape.ts: no XML declaration, no self-closing tags, no
 * whitespace between elements, attributes in canonical order, every namespace declared on
 * the root). Nothing is parsed: every digest is taken over bytes written here, already
 * canonical. The signature is appended as the last child of the root, so:
 *
 * - Reference URI="" with the enveloped-signature transform (XMLDSig §6.6.4): the document
 *   minus its `ds:Signature`, canonicalized (XMLDSig §4.4.3.2: a node-set becomes octets
 *   by Canonical XML 1.0), is the unsigned input itself. Its digest is the digest of the
 *   input bytes.
 * - `xades:SignedProperties` and `ds:KeyInfo`, referenced by Id, and `ds:SignedInfo`, the
 *   signed bytes: document subsets whose canonical form carries every namespace in scope
 *   on its apex (see ./namespaces.ts). The copy placed in the document has no
 *   declarations (the root's are inherited); the copy digested or signed has them.
 *
 * Canonicalization: inclusive C14N 1.0 (`REC-xml-c14n-20010315`), not Exclusive C14N.
 * The three official TicketBAI samples (Esquemas Alta y Anulación 1.2.2) use it for
 * `CanonicalizationMethod` and for the document reference, as do production libraries
 * talking to the three Haciendas Forales (invopop/xmldsig, used by gobl.ticketbai): it
 * is the form their validators are known to accept. Its one trap, the namespace context
 * of the subsets, is closed by construction here: all declarations live on the root and
 * are read from its start tag. Exclusive C14N would make the subsets context-free, but
 * TicketBAI files are sent alone (or base64-encoded in Bizkaia's LROE), never re-embedded
 * in another XML tree, so that property buys nothing here.
 *
 * Structure, after the official samples (TicketBAI signature policy 1.0; FORMATS.md §1.4):
 * RSA-SHA256; three references (document, SignedProperties, KeyInfo), SHA-256 digests;
 * KeyInfo with X509Data and RSAKeyValue; SignedProperties with SigningTime, the signing
 * certificate, SignaturePolicyIdentifier (Identifier, SigPolicyHash SHA-256, SPURI
 * qualifier) and a DataObjectFormat for the document (text/xml). Deliberate differences:
 * - SigningCertificateV2 (CertDigest SHA-256 + IssuerSerialV2, ETSI EN 319 132-1 §5.2.2)
 *   where the samples carry the older SigningCertificate: the policy names V2 and allows
 *   V1 only where Bizkaia's Anexo III does (FORMATS.md §1.4), so V2 is valid everywhere;
 * - no XPath transform `not(ancestor-or-self::ds:Signature)`: it repeats what the
 *   enveloped transform already does;
 * - SHA-256 digests where the samples use SHA-512: the policy asks "SHA-256 or stronger".
 */
import { createHash } from 'node:crypto';
import type { SigningKey } from '../core/signing-key.ts';
import { el } from '../xml/escape.ts';
import { certificateMaterial } from './certificate-material.ts';
import { readRoot } from './namespaces.ts';
import { signerOf } from './signer.ts';

export const C14N_INCLUSIVE = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
export const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
export const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
export const SIGNED_PROPERTIES_TYPE = 'http://uri.etsi.org/01903#SignedProperties';
/** MIME type "text/xml" as an OID (the `ObjectIdentifier` of the official samples' DataObjectFormat). */
const TEXT_XML_OID = 'urn:oid:1.2.840.10003.5.109.10';

/** An explicit signature policy (XAdES-EPES `SignaturePolicyId`). */
export interface SignaturePolicy {
  /** The policy identifier, a URL (also given as the SPURI qualifier). */
  identifier: string;
  /** SHA-256 of the policy document, base64 (`SigPolicyHash`). */
  sha256: string;
}

/** What every enveloped XAdES signature here takes (EPES adds a policy, BES none). */
export interface XadesInput {
  /** The unsigned document, canonical, its root declaring `ds` and `xades` (namespaces.ts). */
  document: string;
  key: SigningKey;
  /** `xades:SigningTime`, an xsd:dateTime (e.g. local time with its offset). */
  signingTime: string;
  /** Base of the signature's Id attributes: letters, digits, `.`, `_`, `-` (an NCName tail). */
  idBase: string;
  /**
   * Optional: one more signed `ds:Object`, placed after the QualifyingProperties and
   * covered by a fourth reference (XMLDSig §4.5: an Object's content is signed by
   * referencing its Id). Its content is canonical XML in the prefixes the root declares;
   * it receives the signature's Id (a `ds:SignatureProperty` must name its `Target`).
   * Used, for example, to seal a chain link together with the document it follows.
   */
  signedObject?: { idSuffix: string; content(signatureId: string): string } | undefined;
}

export interface XadesEpesInput extends XadesInput {
  policy: SignaturePolicy;
}

export interface SignedXml {
  /** The document with `ds:Signature` as the last child of its root. */
  xml: string;
  /** The base64 `ds:SignatureValue`. */
  signatureValue: string;
}

const ID_BASE = /^[A-Za-z0-9._-]{1,100}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const sha256 = (...parts: string[]): string => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p, 'utf8');
  return h.digest('base64');
};

const method = (name: string, algorithm: string): string => `<ds:${name} Algorithm="${algorithm}"></ds:${name}>`;
const digestPair = (value: string): string => method('DigestMethod', SHA256) + el('ds:DigestValue', value);

/** XAdES-EPES: the signed properties carry the explicit `SignaturePolicyIdentifier`. */
export function signXadesEpes(input: XadesEpesInput): SignedXml {
  return signXadesEnveloped(input, input.policy);
}

/** The `xades:SignaturePolicyIdentifier` of an explicit policy (XAdES-EPES). */
const policyIdentifier = (policy: SignaturePolicy): string =>
  '<xades:SignaturePolicyIdentifier><xades:SignaturePolicyId>' +
  `<xades:SigPolicyId>${el('xades:Identifier', policy.identifier)}</xades:SigPolicyId>` +
  `<xades:SigPolicyHash>${digestPair(policy.sha256)}</xades:SigPolicyHash>` +
  `<xades:SigPolicyQualifiers><xades:SigPolicyQualifier>${el('xades:SPURI', policy.identifier)}</xades:SigPolicyQualifier></xades:SigPolicyQualifiers>` +
  '</xades:SignaturePolicyId></xades:SignaturePolicyIdentifier>';

/**
 * The enveloped signature shared by both forms: with a policy, XAdES-EPES (TicketBAI);
 * without one, XAdES-BES (ETSI TS 101 903 §4.4.1: SigningTime, the signing certificate and
 * the DataObjectFormat, no SignaturePolicyIdentifier; ./xades-bes.ts).
 * Everything else (algorithms, references, Ids, canonical forms) is the same bytes.
 */
export function signXadesEnveloped(input: XadesInput, policy: SignaturePolicy | undefined): SignedXml {
  const { document, key } = input;
  if (!ID_BASE.test(input.idBase)) throw new Error('xades: idBase must be 1-100 letters, digits, ".", "_" or "-"');
  if (!DATE_TIME.test(input.signingTime)) throw new Error('xades: signingTime must be an xsd:dateTime with a time zone');
  const root = readRoot(document);
  const ns = root.declarations;
  const material = certificateMaterial(key);

  const base = `Signature-${input.idBase}`;
  const ids = {
    signature: `${base}-Signature`,
    signatureValue: `${base}-SignatureValue`,
    keyInfo: `${base}-KeyInfo`,
    qualifying: `${base}-QualifyingProperties`,
    signedProperties: `${base}-SignedProperties`,
    reference: `Reference-${input.idBase}`,
    object: `${base}-${input.signedObject?.idSuffix ?? 'Object'}`,
  };
  const objectContent = input.signedObject?.content(ids.signature);
  const objectOpen = (decl: string) => `<ds:Object${decl} Id="${ids.object}">`;

  // Attributes below are written in C14N order: unqualified ones by name (Id < Type < URI).
  const keyInfoOpen = (decl: string) => `<ds:KeyInfo${decl} Id="${ids.keyInfo}">`;
  const keyInfoClose = '</ds:KeyInfo>';

  const signedPropertiesContent =
    '<xades:SignedSignatureProperties>' +
    el('xades:SigningTime', input.signingTime) +
    '<xades:SigningCertificateV2><xades:Cert>' +
    `<xades:CertDigest>${digestPair(material.certDigest)}</xades:CertDigest>` +
    el('xades:IssuerSerialV2', material.issuerSerialV2) +
    '</xades:Cert></xades:SigningCertificateV2>' +
    (policy === undefined ? '' : policyIdentifier(policy)) +
    '</xades:SignedSignatureProperties>' +
    '<xades:SignedDataObjectProperties>' +
    `<xades:DataObjectFormat ObjectReference="#${ids.reference}">` +
    `<xades:ObjectIdentifier><xades:Identifier Qualifier="OIDAsURN">${TEXT_XML_OID}</xades:Identifier></xades:ObjectIdentifier>` +
    '<xades:MimeType>text/xml</xades:MimeType>' +
    '</xades:DataObjectFormat>' +
    '</xades:SignedDataObjectProperties>';
  const signedPropertiesOpen = (decl: string) => `<xades:SignedProperties${decl} Id="${ids.signedProperties}">`;
  const signedPropertiesClose = '</xades:SignedProperties>';

  // Digests: the document (enveloped transform: the unsigned bytes), then the subsets in
  // their canonical form, i.e. with the namespaces in scope on their apex.
  const documentDigest = sha256(document);
  const signedPropertiesDigest = sha256(signedPropertiesOpen(ns), signedPropertiesContent, signedPropertiesClose);
  const keyInfoDigest = sha256(keyInfoOpen(ns), material.keyInfoContent, keyInfoClose);
  const objectReference =
    objectContent === undefined ? '' : `<ds:Reference URI="#${ids.object}">${digestPair(sha256(objectOpen(ns), objectContent, '</ds:Object>'))}</ds:Reference>`;

  const signedInfoContent =
    method('CanonicalizationMethod', C14N_INCLUSIVE) +
    method('SignatureMethod', RSA_SHA256) +
    `<ds:Reference Id="${ids.reference}" URI="">` +
    `<ds:Transforms>${method('Transform', ENVELOPED)}</ds:Transforms>` +
    digestPair(documentDigest) +
    '</ds:Reference>' +
    `<ds:Reference Type="${SIGNED_PROPERTIES_TYPE}" URI="#${ids.signedProperties}">${digestPair(signedPropertiesDigest)}</ds:Reference>` +
    `<ds:Reference URI="#${ids.keyInfo}">${digestPair(keyInfoDigest)}</ds:Reference>` +
    objectReference;
  const signedInfoOpen = (decl: string) => `<ds:SignedInfo${decl}>`;

  // SignatureMethod RSA-SHA256 (RFC 6931 §2.3.2): RSASSA-PKCS1-v1_5 over SHA-256 of the
  // canonical SignedInfo.
  const canonicalSignedInfo = signedInfoOpen(ns) + signedInfoContent + '</ds:SignedInfo>';
  // Through the key's signer: node:crypto in process, CKM_SHA256_RSA_PKCS in the PKCS#11 token (HardwareDevice mode).
  const signatureValue = signerOf(key).sign('sha256', Buffer.from(canonicalSignedInfo, 'utf8')).toString('base64');

  const signature =
    `<ds:Signature Id="${ids.signature}">` +
    signedInfoOpen('') + signedInfoContent + '</ds:SignedInfo>' +
    `<ds:SignatureValue Id="${ids.signatureValue}">${signatureValue}</ds:SignatureValue>` +
    keyInfoOpen('') + material.keyInfoContent + keyInfoClose +
    `<ds:Object><xades:QualifyingProperties Id="${ids.qualifying}" Target="#${ids.signature}">` +
    signedPropertiesOpen('') + signedPropertiesContent + signedPropertiesClose +
    '</xades:QualifyingProperties></ds:Object>' +
    (objectContent === undefined ? '' : objectOpen('') + objectContent + '</ds:Object>') +
    '</ds:Signature>';

  const closeAt = document.length - root.name.length - 3;
  return { xml: document.slice(0, closeAt) + signature + document.slice(closeAt), signatureValue };
}
