/**
 * Independent checks of the XML we produce, with the reference tools:
 * - `xmllint` (libxml2) validates against the official XSDs in `../shared/schemas`,
 *   offline through its XML catalog (schemas/README.md);
 * - `xmlsec1` (XML Security Library) verifies XML signatures.
 * Both come from Debian packages (libxml2-utils, xmlsec1) that `.ci/run` installs. When
 * the schemas folder is absent the schema checks are skipped with a visible message.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** `../shared/schemas` beside the project's root. */
export const SCHEMAS_DIR = path.resolve(repoRoot, '..', 'shared', 'schemas');
export const HAVE_SCHEMAS = fs.existsSync(path.join(SCHEMAS_DIR, 'catalog.xml'));
export const SCHEMAS_MISSING_MESSAGE = `XSD validation skipped: ${SCHEMAS_DIR} is absent (official schemas live in ../shared/schemas)`;
if (!HAVE_SCHEMAS) console.warn(`\n*** ${SCHEMAS_MISSING_MESSAGE} ***\n`);

/** A path under the schemas folder, e.g. `es/ticketbai/ticketbaiv1-2-2.xsd`. */
export const schemaPath = (relative: string): string => path.join(SCHEMAS_DIR, relative);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'xml-tools-'));
let n = 0;
function tempFile(name: string, content: string | Buffer): string {
  const file = path.join(tmp, `${++n}-${name}`);
  fs.writeFileSync(file, content);
  return file;
}

export interface ToolResult {
  ok: boolean;
  /** What the tool printed (errors name the line and element). */
  output: string;
}

/** Validates a document against an XSD of `../shared/schemas` (relative path) with xmllint. */
export function xsdValidate(xml: string | Buffer, xsdRelative: string): ToolResult {
  const doc = tempFile('doc.xml', xml);
  const r = spawnSync('xmllint', ['--nonet', '--noout', '--schema', schemaPath(xsdRelative), doc], {
    encoding: 'utf8',
    env: { ...process.env, XML_CATALOG_FILES: path.join(SCHEMAS_DIR, 'catalog.xml') },
  });
  if (r.error) throw r.error;
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}`.trim() };
}

/** An attribute that carries IDs referenced by a signature (`Reference URI="#…"`). */
export interface IdAttribute {
  /** Attribute name (XAdES and XMLDSig use `Id`). */
  attr: string;
  /** Local name of the element carrying it. */
  node: string;
  /** Namespace URI of that element. */
  ns: string;
}

/**
 * The Id attributes of an enveloped XAdES signature: `xades:SignedProperties` and
 * `ds:KeyInfo` are referenced by Id. xmlsec1 knows no schema for them, and its
 * `--id-attr` needs the element named: `--id-attr:Id <namespace-uri>:<local-name>`.
 */
export const XADES_ID_ATTRIBUTES: readonly IdAttribute[] = [
  { attr: 'Id', node: 'SignedProperties', ns: 'http://uri.etsi.org/01903/v1.3.2#' },
  { attr: 'Id', node: 'KeyInfo', ns: 'http://www.w3.org/2000/09/xmldsig#' },
];

export interface VerifyOptions {
  /** PEM of the certificate to trust (self-signed test certificates). */
  trustedCertPem: string;
  /** Attributes carrying IDs referenced by the signature (default: XADES_ID_ATTRIBUTES). */
  idAttributes?: readonly IdAttribute[];
}

/**
 * Verifies every reference and the signature value of the document's `ds:Signature` with
 * xmlsec1, trusting the given certificate. The key comes from the document's KeyInfo
 * (X509Data only: the certificate must be the trusted one).
 */
export function xmlsecVerify(xml: string | Buffer, opts: VerifyOptions): ToolResult {
  const doc = tempFile('signed.xml', xml);
  const cert = tempFile('trusted.pem', opts.trustedCertPem);
  const args = ['--verify', '--enabled-key-data', 'x509', '--trusted-pem', cert, '--verification-time', '2030-01-01 00:00:00'];
  for (const id of opts.idAttributes ?? XADES_ID_ATTRIBUTES) args.push(`--id-attr:${id.attr}`, `${id.ns}:${id.node}`);
  args.push(doc);
  const r = spawnSync('xmlsec1', args, { encoding: 'utf8' });
  if (r.error) throw r.error;
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}`.trim() };
}

/** The text of the first `<name>…</name>` element (no attributes), '' when there is none: for reading a field of a fiscal XML in a test. */
export const firstTagText = (xml: string, name: string): string => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1] ?? '';
