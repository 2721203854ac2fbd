/**
 * Enveloped XAdES-BES: the XAdES-EPES signer of ./xades-epes.ts without a
 * SignaturePolicyIdentifier (ETSI TS 101 903 §4.4.1, the basic form). Same algorithms,
 * same canonical-input contract (the document built canonical, its root declaring `ds`
 * and `xades`, the signature appended as the root's last child): RSA-SHA256, SHA-256
 * digests, inclusive C14N 1.0, three references (the document with the
 * enveloped-signature transform, SignedProperties, KeyInfo), SigningTime,
 * SigningCertificateV2 and a DataObjectFormat (text/xml).
 *
 * Used for Italian FatturaPA files to a public administration: the technical rules ask
 * for XAdES-BES enveloped, the `ds:Signature` a child of the document's root (the 1.2.2
 * XSD's optional last child `ds:Signature`; FORMATS.md §4.1).
 */
import { signXadesEnveloped, type SignedXml, type XadesInput } from './xades-epes.ts';

export type XadesBesInput = XadesInput;

export function signXadesBes(input: XadesBesInput): SignedXml {
  return signXadesEnveloped(input, undefined);
}
