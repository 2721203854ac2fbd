/**
 * `verifyNf525Archive(bytes)`: checks an NF525 archive (archive.ts) offline, with nothing but
 * the archive (the public key is inside; pass `expectedKeyId` to pin it). The checks, in this
 * order, stop at the first break, which they name (`check`, the file, and for a chain the
 * document's index, seq and number):
 *   1. `container`   the JSON container, its format and version, the seven files once each;
 *   2. `public_key`  public_key.pem is a P-256 key; public_key.jwk is the same key; its key id
 *                    is the manifest's (and `expectedKeyId`, if given);
 *   3. `manifest`    manifest.json is a manifest of this format; manifest.sig verifies over
 *                    its bytes with the public key;
 *   4. `records`, `closures`, `jet`  each chain, with the chain verifiers (verify.ts
 *                    `verifyNf525Chain`, closures/verify.ts `verifyClosures`, `verifyJet`):
 *                    every signature, every link (to the `before` document too, itself
 *                    checked), the sums; the chains come before the digests so that a break
 *                    names the altered, missing or misplaced document rather than its file;
 *   5. `contents`    the chains hold what the manifest says (counts, first/last seq); the
 *                    last closure is the manifest's closure, of its kind and period, and its
 *                    records are the records file's (first/last seq, the environment's count
 *                    and totals); every record of the environment is in exactly one daily
 *                    closure of the archive, each the count, totals and perpetual grand
 *                    total of the records in its seq range (a record stamped on a day
 *                    closed already is in the next daily closure);
 *   6. `digest`      every file listed has the manifest's size and SHA-256, and every content
 *                    file is listed.
 */
import crypto from 'node:crypto';
import { recordKeyId } from '../../crypto/record-key.ts';
import { ARCHIVE_FILES, ARCHIVE_FORMAT, ARCHIVE_VERSION, MANIFEST_FORMAT, sha256Hex, type Nf525ArchiveManifest } from './archive.ts';
import { verifyMessage, type Nf525Record } from './record.ts';
import { verifyNf525Chain, type Nf525ChainVerification } from './verify.ts';
import { closureMessage, type Nf525Closure } from './closures/closure.ts';
import type { Nf525JetEntry } from './closures/jet.ts';
import { verifyClosures, verifyJet } from './closures/verify.ts';

export type ArchiveCheck = 'container' | 'public_key' | 'manifest' | 'records' | 'closures' | 'jet' | 'contents' | 'digest';

export interface ArchiveBreak {
  check: ArchiveCheck;
  file: string | null;
  /** For a chain: the document's index in its file, its seq and number. */
  index?: number | undefined;
  seq?: number | null | undefined;
  documentNumber?: string | null | undefined;
  reason: string;
}

export type Nf525ArchiveVerification =
  | { ok: true; manifest: Nf525ArchiveManifest; counts: { records: number; closures: number; jet: number } }
  | { ok: false; break: ArchiveBreak; message: string };

/** One line naming a break, as the CLI prints it. */
export function describeBreak(b: ArchiveBreak): string {
  const doc = b.documentNumber ? ` ${b.documentNumber}` : b.seq != null ? ` seq ${b.seq}` : '';
  const where = b.file ? `${b.file}${b.index !== undefined ? ` [${b.index}]${doc}` : ''}: ` : '';
  return `${b.check}: ${where}${b.reason}`;
}

const fail = (b: ArchiveBreak): Nf525ArchiveVerification => ({ ok: false, break: b, message: describeBreak(b) });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The closure before the archive's first one: its own signature only (the period rules of
 * `verifyClosures` need the closures before it, which a previous archive holds).
 */
function closureBeforeBreak(c: Nf525Closure, key: crypto.KeyObject, keyId: string): Nf525ArchiveVerification | null {
  let ok = false;
  try {
    ok = c.signature?.key_id === keyId && verifyMessage(closureMessage(c), c.signature.value, key);
  } catch {
    ok = false;
  }
  if (ok) return null;
  return fail({ check: 'closures', file: 'closures.json', seq: typeof c.seq === 'number' ? c.seq : null, documentNumber: typeof c.number === 'string' ? c.number : null, reason: 'the document before the archive: its signature does not verify' });
}

export function verifyNf525Archive(bytes: Buffer | Uint8Array | string, options: { expectedKeyId?: string } = {}): Nf525ArchiveVerification {
  // 1. The container.
  let container: unknown;
  try {
    container = JSON.parse(typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8'));
  } catch {
    return fail({ check: 'container', file: null, reason: 'not JSON' });
  }
  if (!isObject(container) || container.format !== ARCHIVE_FORMAT || container.version !== ARCHIVE_VERSION || !Array.isArray(container.files)) {
    return fail({ check: 'container', file: null, reason: `not an ${ARCHIVE_FORMAT} version ${ARCHIVE_VERSION} container` });
  }
  const files = new Map<string, string>();
  for (const f of container.files as unknown[]) {
    if (!isObject(f) || typeof f.name !== 'string' || typeof f.content !== 'string') return fail({ check: 'container', file: null, reason: 'a file without a name or text content' });
    if (files.has(f.name)) return fail({ check: 'container', file: f.name, reason: 'the file is there twice' });
    if (!(ARCHIVE_FILES as readonly string[]).includes(f.name)) return fail({ check: 'container', file: f.name, reason: 'a file an archive does not hold' });
    files.set(f.name, f.content);
  }
  for (const name of ARCHIVE_FILES) if (!files.has(name)) return fail({ check: 'container', file: name, reason: 'the file is missing' });
  const text = (name: string) => files.get(name)!;
  const json = (name: string): Record<string, unknown> | null => {
    try {
      const v = JSON.parse(text(name)) as unknown;
      return isObject(v) ? v : null;
    } catch {
      return null;
    }
  };

  // 2. The public key.
  let key: crypto.KeyObject;
  try {
    key = crypto.createPublicKey(text('public_key.pem'));
  } catch {
    return fail({ check: 'public_key', file: 'public_key.pem', reason: 'not a public key in PEM' });
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return fail({ check: 'public_key', file: 'public_key.pem', reason: 'not an ECDSA P-256 key' });
  const keyId = recordKeyId(key);
  try {
    const jwk = json('public_key.jwk');
    if (!jwk || !crypto.createPublicKey({ key: jwk as crypto.JsonWebKey, format: 'jwk' }).equals(key)) throw new Error('differs');
  } catch {
    return fail({ check: 'public_key', file: 'public_key.jwk', reason: 'not the key of public_key.pem' });
  }
  if (options.expectedKeyId !== undefined && options.expectedKeyId !== keyId) {
    return fail({ check: 'public_key', file: 'public_key.pem', reason: `key id ${keyId} is not the expected ${options.expectedKeyId}` });
  }

  // 3. The manifest and its signature.
  const m = json('manifest.json') as Nf525ArchiveManifest | null;
  if (!m || m.format !== MANIFEST_FORMAT || m.version !== ARCHIVE_VERSION || !Array.isArray(m.files) || !isObject(m.closure) || !isObject(m.records) || !isObject(m.closures) || !isObject(m.jet)) {
    return fail({ check: 'manifest', file: 'manifest.json', reason: `not an ${MANIFEST_FORMAT} version ${ARCHIVE_VERSION}` });
  }
  if (m.key_id !== keyId) return fail({ check: 'public_key', file: 'public_key.pem', reason: `key id ${keyId} is not the manifest's ${String(m.key_id)}` });
  if (!verifyMessage(text('manifest.json'), text('manifest.sig').trim(), key)) {
    return fail({ check: 'manifest', file: 'manifest.sig', reason: 'the signature does not verify over manifest.json with the public key' });
  }

  // 4. The chains.
  const chainFile = <T>(name: string, list: string): { before: T | undefined; docs: T[] } | null => {
    const v = json(name);
    if (!v || !Array.isArray(v[list]) || !(v.before === null || isObject(v.before))) return null;
    return { before: (v.before ?? undefined) as T | undefined, docs: v[list] as T[] };
  };
  const chainBreak = (check: 'records' | 'closures' | 'jet', file: string, r: Nf525ChainVerification, beforeShift: boolean): Nf525ArchiveVerification | null => {
    if (r.ok) return null;
    const b = r.break;
    return fail({ check, file, index: beforeShift ? undefined : b.index, seq: b.seq, documentNumber: b.documentNumber, reason: beforeShift ? `the document before the archive: ${b.reason}` : b.reason });
  };
  const records = chainFile<Nf525Record>('records.json', 'records');
  if (!records) return fail({ check: 'records', file: 'records.json', reason: 'not {"before", "records": [...]}' });
  const closures = chainFile<Nf525Closure>('closures.json', 'closures');
  if (!closures) return fail({ check: 'closures', file: 'closures.json', reason: 'not {"before", "closures": [...]}' });
  const jet = chainFile<Nf525JetEntry>('jet.json', 'entries');
  if (!jet) return fail({ check: 'jet', file: 'jet.json', reason: 'not {"before", "entries": [...]}' });
  const broken =
    (records.before ? chainBreak('records', 'records.json', verifyNf525Chain([records.before], key), true) : null)
    ?? chainBreak('records', 'records.json', verifyNf525Chain(records.docs, key, { before: records.before }), false)
    ?? (closures.before ? closureBeforeBreak(closures.before, key, keyId) : null)
    ?? chainBreak('closures', 'closures.json', verifyClosures(closures.docs, key, { before: closures.before }), false)
    ?? (jet.before ? chainBreak('jet', 'jet.json', verifyJet([jet.before], key), true) : null)
    ?? chainBreak('jet', 'jet.json', verifyJet(jet.docs, key, { before: jet.before }), false);
  if (broken) return broken;

  // 5. What the chains hold against the manifest.
  const range = (docs: readonly { seq: number }[]) => ({ count: docs.length, first_seq: docs[0]?.seq ?? null, last_seq: docs[docs.length - 1]?.seq ?? null });
  const sameRange = (a: { count: number; first_seq: number | null; last_seq: number | null }, b: { count: number; first_seq: number | null; last_seq: number | null }) =>
    a.count === b.count && a.first_seq === b.first_seq && a.last_seq === b.last_seq;
  const contents = (file: string, reason: string) => fail({ check: 'contents', file, reason });
  const r = range(records.docs);
  if (!sameRange(r, m.records)) return contents('records.json', `holds ${r.count} records, seq ${r.first_seq}-${r.last_seq}; the manifest says ${m.records.count}, seq ${m.records.first_seq}-${m.records.last_seq}`);
  const ofEnv = records.docs.filter((x) => x.environment === m.environment);
  if (ofEnv.length !== m.records.environment_count) return contents('records.json', `holds ${ofEnv.length} ${m.environment} records; the manifest says ${m.records.environment_count}`);
  const c = range(closures.docs);
  if (!sameRange(c, m.closures)) return contents('closures.json', `holds ${c.count} closures, seq ${c.first_seq}-${c.last_seq}; the manifest says ${m.closures.count}, seq ${m.closures.first_seq}-${m.closures.last_seq}`);
  const j = range(jet.docs);
  if (!sameRange(j, m.jet)) return contents('jet.json', `holds ${j.count} entries, seq ${j.first_seq}-${j.last_seq}; the manifest says ${m.jet.count}, seq ${m.jet.first_seq}-${m.jet.last_seq}`);
  const last = closures.docs[closures.docs.length - 1];
  if (!last || last.number !== m.closure.number || last.seq !== m.closure.seq || last.signature.value !== m.closure.signature || last.kind !== m.kind || last.period !== m.period) {
    return contents('closures.json', `the last closure is not the manifest's ${m.kind} ${m.period} closure ${m.closure.number}`);
  }
  if (last.environment !== m.environment || last.register_id !== m.register_id) return contents('closures.json', 'the closure is not of the manifest\'s register and environment');
  if (last.records.first_seq !== r.first_seq || last.records.last_seq !== r.last_seq) {
    return contents('records.json', `the closure covers records ${last.records.first_seq}-${last.records.last_seq}; the file holds ${r.first_seq}-${r.last_seq}`);
  }
  const sumOf = (list: readonly Nf525Record[]) => list.reduce((s, x) => ({ excl: s.excl + x.totals.excl_tax, tax: s.tax + x.totals.tax, incl: s.incl + x.totals.incl_tax }), { excl: 0, tax: 0, incl: 0 });
  const sum = sumOf(ofEnv);
  if (ofEnv.length !== last.records.count || sum.excl !== last.totals.excl_tax || sum.tax !== last.totals.tax || sum.incl !== last.totals.incl_tax) {
    return contents('records.json', `the ${m.environment} records (${ofEnv.length}) do not sum to the closure's totals (${last.records.count} records)`);
  }
  // Every record in exactly one daily closure, which is the sum of its records (by seq: a
  // record stamped on a day closed already is in the next daily closure, not its own day's).
  let covered = 0;
  for (const d of closures.docs) {
    if (d.kind !== 'daily' || r.first_seq === null || d.records.first_seq < r.first_seq || d.records.last_seq > r.last_seq!) continue;
    const own = ofEnv.filter((x) => x.seq >= d.records.first_seq && x.seq <= d.records.last_seq);
    const t = sumOf(own);
    const gt = own[own.length - 1]?.grand_totals.perpetual;
    if (own.length !== d.records.count || t.excl !== d.totals.excl_tax || t.tax !== d.totals.tax || t.incl !== d.totals.incl_tax
      || gt?.excl_tax !== d.grand_total.perpetual.excl_tax || gt?.incl_tax !== d.grand_total.perpetual.incl_tax) {
      return contents('closures.json', `daily ${d.period} (${d.number}) is not the sum of its records ${d.records.first_seq}-${d.records.last_seq}`);
    }
    covered += own.length;
  }
  if (covered !== ofEnv.length) return contents('records.json', `${ofEnv.length - covered} ${m.environment} records are in no daily closure`);

  // 6. The digests.
  const listed = new Set<string>();
  for (const f of m.files) {
    if (!isObject(f) || typeof f.name !== 'string') return fail({ check: 'manifest', file: 'manifest.json', reason: 'a file entry without a name' });
    if (f.name === 'manifest.json' || f.name === 'manifest.sig' || !files.has(f.name)) return fail({ check: 'digest', file: f.name, reason: 'the manifest lists a file the archive does not hold' });
    listed.add(f.name);
    const content = text(f.name);
    if (Buffer.byteLength(content, 'utf8') !== f.bytes || sha256Hex(content) !== f.sha256) return fail({ check: 'digest', file: f.name, reason: 'its SHA-256 (or size) is not the manifest\'s' });
  }
  for (const name of ARCHIVE_FILES) {
    if (name !== 'manifest.json' && name !== 'manifest.sig' && !listed.has(name)) return fail({ check: 'digest', file: name, reason: 'the manifest does not list it' });
  }
  return { ok: true, manifest: m, counts: { records: r.count, closures: c.count, jet: j.count } };
}
