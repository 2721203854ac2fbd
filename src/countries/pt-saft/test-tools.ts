/**
 * Test-only (not a test file): independent checks of what pt-saft produces.
 * - The SAF-T (PT) 1.04_01 schema is XSD 1.1 (asserts), which libxml2 cannot load
 *   (FORMATS.md §7.4): files are validated with Python `xmlschema` (`XMLSchema11`), the
 *   Debian package `python3-xmlschema` (`apt-get install -y python3-xmlschema`), run with
 *   the system Python. Missing (or the schemas folder absent), the check is skipped with a
 *   visible message.
 * - The same files are also validated by libxml2 (xmllint) against the schema with its
 *   XSD 1.1 assertions stripped by scripts/strip-xsd11-assertions.py (written once per run
 *   into a temp folder); the assertions' rules are checked in code (saft-assertions.ts).
 * - Document signatures are verified with `openssl dgst -sha1 -verify`, the producer's
 *   public key and the message rebuilt from the document.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, schemaPath } from '../../../test/support/xml-tools.ts';

export const SAFT_XSD = 'pt/saft-pt/SAFTPT1.04_01.xsd';

const CHECK = 'import xmlschema, sys; assert hasattr(xmlschema, "XMLSchema11")';
/** The first Python that has xmlschema: the system one (Debian package) first. */
const PYTHON = ['/usr/bin/python3', 'python3'].find((p) => {
  const r = spawnSync(p, ['-c', CHECK], { encoding: 'utf8' });
  return !r.error && r.status === 0;
});

export const HAVE_XSD11 = HAVE_SCHEMAS && PYTHON !== undefined;
export const XSD11_MISSING_MESSAGE = !HAVE_SCHEMAS
  ? SCHEMAS_MISSING_MESSAGE
  : 'SAF-T (PT) XSD 1.1 validation skipped: Python xmlschema is not installed (apt-get install -y python3-xmlschema)';
if (!HAVE_XSD11) console.warn(`\n*** ${XSD11_MISSING_MESSAGE} ***\n`);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pt-saft-'));
let n = 0;
const tempFile = (name: string, content: string | Buffer): string => {
  const file = path.join(tmp, `${++n}-${name}`);
  fs.writeFileSync(file, content);
  return file;
};

const VALIDATE = `
import sys, xmlschema
schema = xmlschema.XMLSchema11(sys.argv[1])
errors = list(schema.iter_errors(sys.argv[2]))
for e in errors[:20]:
    print(str(e).splitlines()[0], "|", getattr(e, "path", ""))
print("valid" if not errors else "%d error(s)" % len(errors))
sys.exit(1 if errors else 0)
`;

/** Validates a SAF-T (PT) file (its bytes, as written) against the official XSD 1.1. */
export function saftXsdValidate(bytes: Buffer): { ok: boolean; output: string } {
  if (PYTHON === undefined) throw new Error(XSD11_MISSING_MESSAGE);
  const doc = tempFile('saft.xml', bytes);
  const r = spawnSync(PYTHON, ['-c', VALIDATE, schemaPath(SAFT_XSD), doc], { encoding: 'utf8' });
  if (r.error) throw r.error;
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}`.trim() };
}

/** `openssl dgst -sha1 -verify <public key> -signature <hash> <message>`: true when OpenSSL says "Verified OK". */
export function opensslVerifyHash(message: string, hashBase64: string, publicKeyPem: string): { ok: boolean; output: string } {
  const msg = tempFile('message.txt', Buffer.from(message, 'utf8'));
  const sig = tempFile('hash.bin', Buffer.from(hashBase64, 'base64'));
  const pub = tempFile('producer.pub.pem', publicKeyPem);
  const r = spawnSync('openssl', ['dgst', '-sha1', '-verify', pub, '-signature', sig, msg], { encoding: 'utf8' });
  if (r.error) throw r.error;
  const output = `${r.stdout}${r.stderr}`.trim();
  return { ok: r.status === 0 && output.includes('Verified OK'), output };
}

const STRIP_SCRIPT = fileURLToPath(new URL('../../../scripts/strip-xsd11-assertions.py', import.meta.url));
let stripped: { xsd: string; log: string } | undefined;

/** The SAF-T XSD without its assertions, made by the repo's script (once per run). */
export function strippedSaftXsd(): { xsd: string; log: string } {
  if (stripped) return stripped;
  const xsd = path.join(tmp, 'SAFTPT1.04_01.no-asserts.xsd');
  const r = spawnSync('python3', [STRIP_SCRIPT, schemaPath(SAFT_XSD), xsd], { encoding: 'utf8' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`strip-xsd11-assertions.py failed: ${r.stderr}`);
  stripped = { xsd, log: r.stderr };
  return stripped;
}

/** xmllint (libxml2, XSD 1.0) against the SAF-T XSD with its assertions stripped. */
export function saftXmllintValidate(bytes: Buffer): { ok: boolean; output: string } {
  const { xsd } = strippedSaftXsd();
  const doc = tempFile('saft.xml', bytes);
  const r = spawnSync('xmllint', ['--nonet', '--noout', '--schema', xsd, doc], { encoding: 'utf8' });
  if (r.error) throw r.error;
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}`.trim() };
}
