/**
 * The NF525 archive of a closed period (DECISIONS "Files an inspector asks for": France's
 * signed archives, verifiable offline with the public key inside). One per monthly closure
 * and one per annual closure of a register (location) and environment, produced by the
 * `france/closures` run right after the closure (closures/archives.ts) and journaled in the
 * JET (code 50). No archive library is installed, so the container is a documented JSON
 * file (`application/json`), not a zip:
 *
 *   {
 *     "format": "nf525.archive",
 *     "version": 1,
 *     "files": [ { "name": "<file name>", "content": "<the file's text, UTF-8>" }, ... ]
 *   }
 *
 * Every file is text; its bytes are the UTF-8 of `content` (extract one with
 * `jq -j '.files[] | select(.name == "records.json") | .content' archive.json`). The files,
 * in this order:
 *   - `manifest.json`  what the archive holds (`Nf525ArchiveManifest`): register,
 *                      environment, kind and period, the closure archived (number, seq,
 *                      signature), per chain the count and first/last seq, and every other
 *                      file's name, size and lowercase hex SHA-256 (except `manifest.sig`);
 *   - `manifest.sig`   the ES256 signature of manifest.json's bytes with the location's record
 *                      key: base64url (no padding) of the raw 64-byte r || s, as the records
 *                      (record.ts `rawToDer` gives OpenSSL's DER:
 *                      `openssl dgst -sha256 -verify public_key.pem -signature sig.der manifest.json`);
 *   - `public_key.pem` the location's public key (SPKI PEM); `public_key.jwk` the same as a JWK;
 *   - `records.json`   `{"before": <record> | null, "records": [...]}`: the register chain's
 *                      records from the closure's first to its last record seq (both
 *                      environments: they share the chain, so the links verify), and the
 *                      record just before (already archived) to anchor the first link;
 *   - `closures.json`  `{"before", "closures"}`: the closure chain since the previous archive
 *                      of the same kind, up to the closure archived (a monthly archive: the
 *                      month's daily closures and the monthly one; an annual archive: the
 *                      year's closures);
 *   - `jet.json`       `{"before", "entries"}`: the JET since the previous archive of the same
 *                      kind, up to the last entry before this archive's own event (code 50).
 * Each document is the signed body as stored (parsed), so it verifies on its own (verify.ts,
 * closures/verify.ts). A manifest is rebuilt from the store on download, byte for byte:
 * its SHA-256 and signature are kept in the JET event, nothing else is stored.
 */
import crypto from 'node:crypto';

export const ARCHIVE_FORMAT = 'nf525.archive';
export const ARCHIVE_VERSION = 1;
export const MANIFEST_FORMAT = 'nf525.archive.manifest';

/** The files of an archive, in order. */
export const ARCHIVE_FILES = ['manifest.json', 'manifest.sig', 'public_key.pem', 'public_key.jwk', 'records.json', 'closures.json', 'jet.json'] as const;
export type ArchiveFileName = (typeof ARCHIVE_FILES)[number];

export interface SeqRange {
  count: number;
  first_seq: number | null;
  last_seq: number | null;
}

export interface Nf525ArchiveManifest {
  format: typeof MANIFEST_FORMAT;
  version: typeof ARCHIVE_VERSION;
  archive_id: string;
  register_id: string;
  environment: 'test' | 'live';
  kind: 'monthly' | 'annual';
  period: string;
  /** When the archive was produced, Paris wall time with offset. */
  created_at: string;
  software: { name: string; version: string };
  key_id: string;
  closure: { number: string; seq: number; signature: string };
  /** The records file: all its records (both environments), and those of the archive's environment. */
  records: SeqRange & { environment_count: number };
  closures: SeqRange;
  jet: SeqRange;
  /** Every file but the manifest and its signature. */
  files: Array<{ name: string; bytes: number; sha256: string }>;
}

export interface ArchiveFile {
  name: string;
  content: string;
}

export const sha256Hex = (text: string): string => crypto.createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

/** `monthly-2026-03`, `annual-2026`: an archive's id, unique per register and environment. */
export const archiveIdOf = (kind: 'monthly' | 'annual', period: string): string => `${kind}-${period}`;
export const ARCHIVE_ID = /^(monthly-\d{4}-(0[1-9]|1[0-2])|annual-\d{4})$/;

/** The download's file name. */
export const archiveFileName = (registerId: string, environment: string, archiveId: string): string =>
  `nf525-${registerId.replace(/[^A-Za-z0-9_-]/g, '_')}-${environment}-${archiveId}.json`;

/** The content files (everything but the manifest and its signature), as text. */
export function contentFiles(s: {
  publicKeyPem: string;
  records: { before: unknown; docs: unknown[] };
  closures: { before: unknown; docs: unknown[] };
  jet: { before: unknown; docs: unknown[] };
}): ArchiveFile[] {
  const pem = s.publicKeyPem.endsWith('\n') ? s.publicKeyPem : `${s.publicKeyPem}\n`;
  const jwk = crypto.createPublicKey(pem).export({ format: 'jwk' });
  const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
  return [
    { name: 'public_key.pem', content: pem },
    { name: 'public_key.jwk', content: json({ kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, alg: 'ES256', use: 'sig' }) },
    { name: 'records.json', content: json({ before: s.records.before ?? null, records: s.records.docs }) },
    { name: 'closures.json', content: json({ before: s.closures.before ?? null, closures: s.closures.docs }) },
    { name: 'jet.json', content: json({ before: s.jet.before ?? null, entries: s.jet.docs }) },
  ];
}

/** manifest.json's text (keys in the interface's order, pretty-printed, a final newline). */
export function manifestText(m: Omit<Nf525ArchiveManifest, 'files'>, files: readonly ArchiveFile[]): string {
  const manifest: Nf525ArchiveManifest = {
    ...m,
    files: files.map((f) => ({ name: f.name, bytes: Buffer.byteLength(f.content, 'utf8'), sha256: sha256Hex(f.content) })),
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** The archive's bytes: the container around the manifest, its signature and the content files. */
export function archiveBytes(manifest: string, signature: string, files: readonly ArchiveFile[]): Buffer {
  const all: ArchiveFile[] = [{ name: 'manifest.json', content: manifest }, { name: 'manifest.sig', content: signature }, ...files];
  return Buffer.from(`${JSON.stringify({ format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, files: all }, null, 2)}\n`, 'utf8');
}

/** A run of chain documents' count and seq range. */
export const rangeOf = (docs: readonly { seq: number }[]): SeqRange => ({
  count: docs.length, first_seq: docs[0]?.seq ?? null, last_seq: docs[docs.length - 1]?.seq ?? null,
});
