/**
 * France NF525 archives (archive.ts says what one holds): produced by the `france/closures`
 * run right after each monthly and annual closure is journaled (`archiveClosures`), once
 * per period, and served as `GET /v1/locations/{id}/archives` (paged list, newest first)
 * and `GET /v1/locations/{id}/archives/{archive_id}` (the archive, `application/json`, with
 * a Content-Disposition file name).
 *
 * Stored as nothing but its JET event (code 50, `archive`): the event's details keep the
 * seq ranges of the three chains the archive holds, when it was made, the SHA-256 of its
 * manifest and the manifest's signature. Everything else is rebuilt from the chains on
 * download, deterministically (the stored bodies, the stored public key); a rebuilt
 * manifest whose digest differs from the journaled one is refused (500, logged), never
 * re-signed. The JET head's linkData keeps the last closure archived
 * (`archive_closure_seq`): a closure is archived once whatever the races (the event's
 * `onlyIf` refuses a second one), and a run repairs an archive a dying process left out.
 */
import { notFound } from '../../../core/errors.ts';
import type { RecordKey } from '../../../core/record-key.ts';
import type { Queryable } from '../../../store/db.ts';
import { nf525Repo, type ChainEntryRow } from '../../../store/repos/nf525-repo.ts';
import { recordKeysRepo } from '../../../store/repos/record-keys-repo.ts';
import { localDateTimeWithOffset } from '../../shared/dates.ts';
import type { LocationFile, LocationFileDeps, LocationFileInput } from '../../types.ts';
import {
  ARCHIVE_ID, ARCHIVE_VERSION, MANIFEST_FORMAT, archiveBytes, archiveFileName, archiveIdOf, contentFiles, manifestText, rangeOf, sha256Hex,
  type Nf525ArchiveManifest,
} from '../archive.ts';
import { NF525_FORMAT, signMessage } from '../record.ts';
import { chainKeyOf, inEnvironment } from '../../shared/chain-key.ts';
import { NF525_SYSTEM, closureChainKey, type Nf525Closure } from './closure.ts';
import { JetSkipped, jetChainKey, type Nf525JetEntry } from './jet.ts';
import { jetWriter } from './processor.ts';

const recordChain = (locationId: string, environment: 'test' | 'live'): string => inEnvironment(chainKeyOf(NF525_SYSTEM, locationId, 'default'), environment);

/** What an `archive` JET event's details hold (all text). */
interface ArchiveDetails {
  archive_id: string;
  kind: 'monthly' | 'annual';
  period: string;
  closure: string;
  closure_seq: string;
  created_at: string;
  records_first_seq: string;
  records_last_seq: string;
  closures_first_seq: string;
  closures_last_seq: string;
  jet_first_seq: string;
  jet_last_seq: string;
  manifest_sha256?: string;
  signature?: string;
}

const parseBody = <T>(row: ChainEntryRow): T => JSON.parse(row.body) as T;

/** The register's archive events of an environment, newest first. */
async function archiveEvents(q: Queryable, locationId: string, environment: 'test' | 'live'): Promise<Array<{ row: ChainEntryRow; entry: Nf525JetEntry }>> {
  return (await nf525Repo.events(q, jetChainKey(locationId, environment), 'archive'))
    .map((row) => ({ row, entry: parseBody<Nf525JetEntry>(row) }))
    .filter((e) => e.entry.event === 'archive');
}

/** A chain's documents in [first, last] and the one just before (when it is a signed document of the format). */
async function slice(q: Queryable, chainKey: string, first: number, last: number, format?: string): Promise<{ before: unknown; docs: unknown[]; envs: Array<string | null> }> {
  const rows = last >= first ? await nf525Repo.range(q, chainKey, first, last) : [];
  const prev = first > 1 ? await nf525Repo.at(q, chainKey, first - 1) : undefined;
  let before: unknown = null;
  if (prev) {
    const b = JSON.parse(prev.body) as { format?: unknown };
    before = format === undefined || b.format === format ? b : null;
  }
  return { before, docs: rows.map((r) => JSON.parse(r.body) as unknown), envs: rows.map((r) => r.environment) };
}

/** The archive's manifest text and content files, rebuilt from the chains and the details. */
async function assemble(q: Queryable, s: { locationId: string; environment: 'test' | 'live'; publicKeyPem: string; keyId: string; registerId: string; software: { name: string; version: string }; d: ArchiveDetails; closureSignature: string }) {
  const n = (v: string) => Number(v);
  const records = await slice(q, recordChain(s.locationId, s.environment), n(s.d.records_first_seq), n(s.d.records_last_seq), NF525_FORMAT);
  const closures = await slice(q, closureChainKey(s.locationId, s.environment), n(s.d.closures_first_seq), n(s.d.closures_last_seq));
  const jet = await slice(q, jetChainKey(s.locationId, s.environment), n(s.d.jet_first_seq), n(s.d.jet_last_seq));
  const files = contentFiles({ publicKeyPem: s.publicKeyPem, records, closures, jet });
  const seqs = (docs: unknown[]) => docs.map((d) => ({ seq: (d as { seq: number }).seq }));
  const meta: Omit<Nf525ArchiveManifest, 'files'> = {
    format: MANIFEST_FORMAT, version: ARCHIVE_VERSION, archive_id: s.d.archive_id, register_id: s.registerId, environment: s.environment,
    kind: s.d.kind, period: s.d.period, created_at: s.d.created_at, software: { name: s.software.name, version: s.software.version }, key_id: s.keyId,
    closure: { number: s.d.closure, seq: n(s.d.closure_seq), signature: s.closureSignature },
    records: { ...rangeOf(seqs(records.docs)), environment_count: records.docs.filter((r) => (r as { environment?: string }).environment === s.environment).length },
    closures: rangeOf(seqs(closures.docs)),
    jet: rangeOf(seqs(jet.docs)),
  };
  return { manifest: manifestText(meta, files), files };
}

/**
 * Archives the closure (monthly or annual) and journals it (code 50); answers false when
 * another run archived it first.
 */
export async function archiveClosure(
  deps: { db: Queryable; clock: { now(): Date }; software: { name: string; version: string } },
  s: {
    locationId: string; registerId: string; environment: 'test' | 'live'; key: RecordKey; closure: Nf525Closure;
    jet: (event: 'archive', details: Record<string, string>, onlyIf: (ld: Readonly<Record<string, string>> | null) => void, closureSeq: number) => Promise<boolean>;
  },
): Promise<boolean> {
  const c = s.closure;
  if (c.kind === 'daily') throw new Error('a daily closure has no archive');
  const previous = (await archiveEvents(deps.db, s.locationId, s.environment)).find((e) => e.entry.details.kind === c.kind)?.entry.details;
  const jetHead = await nf525Repo.head(deps.db, jetChainKey(s.locationId, s.environment));
  const d: ArchiveDetails = {
    archive_id: archiveIdOf(c.kind, c.period), kind: c.kind, period: c.period, closure: c.number, closure_seq: String(c.seq),
    created_at: localDateTimeWithOffset(deps.clock.now(), 'FR'),
    records_first_seq: String(c.records.first_seq), records_last_seq: String(c.records.last_seq),
    closures_first_seq: String(previous ? Number(previous.closures_last_seq) + 1 : 1), closures_last_seq: String(c.seq),
    jet_first_seq: String(previous ? Number(previous.jet_last_seq) + 1 : 1), jet_last_seq: String(jetHead?.seq ?? 0),
  };
  // The stored public key, as the download reads it (the manifest is rebuilt from it byte for byte).
  const keyRow = await recordKeysRepo.get(deps.db, s.locationId, s.key.kind);
  const { manifest } = await assemble(deps.db, {
    locationId: s.locationId, environment: s.environment, publicKeyPem: keyRow?.public_key_pem ?? s.key.publicKeyPem, keyId: s.key.keyId, registerId: s.registerId,
    software: deps.software, d, closureSignature: c.signature.value,
  });
  const signature = signMessage(manifest, s.key.signer);
  return s.jet('archive', { ...d, manifest_sha256: sha256Hex(manifest), signature }, (ld) => {
    if (Number(ld?.archive_closure_seq ?? '0') >= c.seq) throw new JetSkipped('this closure is archived already');
  }, c.seq);
}

/** An archive event as the list shows it. */
function listItem(row: ChainEntryRow, e: Nf525JetEntry) {
  const d = e.details as unknown as ArchiveDetails;
  return {
    id: d.archive_id, kind: d.kind, period: d.period, environment: e.environment, closure: d.closure, created_at: row.created_at.toISOString(),
    file_name: archiveFileName(e.register_id, e.environment, d.archive_id), content_type: 'application/json',
    records: { first_seq: Number(d.records_first_seq), last_seq: Number(d.records_last_seq) },
    manifest_sha256: d.manifest_sha256, signature: d.signature, jet_number: e.number,
  };
}

async function journalExport(deps: LocationFileDeps, input: LocationFileInput, details: Record<string, string>): Promise<void> {
  if (!deps.ledger) return;
  const key = await deps.signingKeys.recordKey(input.location, 'ec-p256');
  await jetWriter({ ledger: deps.ledger, software: deps.software }, { accountId: input.location.account_id, location: input.location, environment: input.environment, key })('export', details);
}

export const ARCHIVES_FILE: LocationFile = {
  path: 'archives',
  param: { kind: 'page' },
  contentType: 'application/json; charset=utf-8',
  summary: "France NF525: the register's signed archives (one per closed month and fiscal year), newest first; each downloads by its id",
  async produce(deps, input) {
    const { limit, offset } = input.page ?? { limit: 20, offset: 0 };
    const all = await archiveEvents(deps.db, input.location.id, input.environment);
    const data = all.slice(offset, offset + limit).map((e) => listItem(e.row, e.entry));
    await journalExport(deps, input, { file: 'archives', limit: String(limit), offset: String(offset), count: String(data.length) });
    return { body: JSON.stringify({ data, total: all.length, limit, offset }) };
  },
  item: {
    idName: 'archive_id',
    contentType: 'application/json',
    summary: 'France NF525: one signed archive (JSON container: manifest, its signature, the public key, the records, closures and JET of the period), verifiable offline (`npm run verify-archive`)',
    async produce(deps, input) {
      if (!ARCHIVE_ID.test(input.itemId)) throw notFound('archive not found');
      const found = (await archiveEvents(deps.db, input.location.id, input.environment)).find((e) => e.entry.details.archive_id === input.itemId);
      if (!found) throw notFound('archive not found');
      const e = found.entry;
      const d = e.details as unknown as ArchiveDetails;
      const keyRow = await recordKeysRepo.get(deps.db, input.location.id, 'ec-p256');
      const closureRow = await nf525Repo.at(deps.db, closureChainKey(input.location.id, input.environment), Number(d.closure_seq));
      if (!keyRow || !closureRow) throw new Error(`nf525 archive ${d.archive_id}: its key or closure is missing`);
      const { manifest, files } = await assemble(deps.db, {
        locationId: input.location.id, environment: input.environment, publicKeyPem: keyRow.public_key_pem, keyId: keyRow.key_id, registerId: e.register_id,
        software: e.software, d, closureSignature: parseBody<Nf525Closure>(closureRow).signature.value,
      });
      if (sha256Hex(manifest) !== d.manifest_sha256 || d.signature === undefined) {
        deps.log.error({ locationId: input.location.id, archiveId: d.archive_id }, 'nf525 archive: the rebuilt manifest differs from the journaled one');
        throw new Error(`nf525 archive ${d.archive_id} cannot be rebuilt as signed`);
      }
      await journalExport(deps, input, { file: 'archive', archive_id: d.archive_id });
      const name = archiveFileName(e.register_id, e.environment, d.archive_id);
      return { body: archiveBytes(manifest, d.signature, files), headers: { 'content-disposition': `attachment; filename="${name}"` } };
    },
  },
};
