/**
 * `verify-chain`: every chain of a location (or of every location of an issuer), record by
 * record in seq order, the way an auditor would: the sequence without gaps, the stored link
 * (`previous_fingerprint`) equal to the previous record's fingerprint, then the system's own
 * check (`FiscalSystem.verifyRecord`: the fingerprint recomputed from the body, the
 * signature, the link the body carries). Each chain's FIRST break is reported: after a
 * break nothing is provable. Shared code: it knows no country, only the plug-in contract.
 *
 * Chains of a location: those of its transactions' records (a chain may be the issuer's,
 * across locations: VERI*FACTU, TicketBAI; then the whole chain is checked), and the chains
 * without transactions named after it (NF525 closures and JET).
 */
import crypto from 'node:crypto';
import type { ChainedRecord, FiscalSystem, LocationForFiscal, RecordFault, SigningKey, SoftwareIdentity } from '../countries/types.ts';
import type { Db } from '../store/db.ts';
import type { LocationRow } from '../store/repos/locations-repo.ts';
import { recordKeysRepo } from '../store/repos/record-keys-repo.ts';
import type { Progress } from './progress.ts';

export interface VerifyChainDeps {
  db: Db;
  systems: readonly FiscalSystem[];
  software: SoftwareIdentity;
  toFiscal(row: LocationRow): LocationForFiscal;
  /** The key a location's records are signed with when it names an uploaded certificate (undefined: none or unavailable). */
  signingKey(location: LocationForFiscal, environment: 'test' | 'live'): Promise<SigningKey | undefined>;
}

export interface ChainBreak {
  seq: number;
  transaction_id: string | null;
  kind: RecordFault['kind'];
  reason: string;
}

export interface ChainReport {
  chain_key: string;
  system: string;
  environment: 'test' | 'live';
  records: number;
  ok: boolean;
  break?: ChainBreak | undefined;
}

export interface VerifyScope {
  locationIds?: readonly string[] | undefined;
  issuer?: string | undefined;
  environment?: 'test' | 'live' | undefined;
}

interface Row {
  chain_key: string;
  seq: string | number;
  kind: ChainedRecord['kind'];
  system: string;
  transaction_id: string | null;
  body: string;
  content_type: string;
  fingerprint: string | null;
  previous_fingerprint: string | null;
  fiscal_id: string | null;
  document_number: string | null;
  location_id: string | null;
  environment: 'test' | 'live' | null;
}

const PAGE = 500;

/** The environment a chain key belongs to (shared/chain-key.ts `inEnvironment`, the NF525 `:live` closures/JET keys). */
const environmentOfKey = (key: string): 'test' | 'live' => (/:live(#|:|$)/.test(key) ? 'live' : 'test');

/** Annulments and corrections outside the chain (services/transaction-entry.ts, services/corrections.ts): numbered, never linked. */
const isSideSequence = (key: string): boolean => key.endsWith('#annulments') || key.endsWith('#corrections');

/**
 * `locations` counts, and `locationIds` names, the locations the scope selected (not the
 * issuer's other locations a chain runs through, which are read to check their records).
 */
export async function verifyChains(deps: VerifyChainDeps, scope: VerifyScope, progress: Progress): Promise<{ locations: number; locationIds: string[]; chains: ChainReport[] }> {
  const { db } = deps;
  const locRows = scope.locationIds
    ? (await db.query<LocationRow>('SELECT * FROM locations WHERE id = ANY($1::uuid[]) ORDER BY created_at', [scope.locationIds])).rows
    : (await db.query<LocationRow>('SELECT * FROM locations WHERE tax_id = $1 ORDER BY created_at', [scope.issuer])).rows;
  const locations = new Map(locRows.map((r) => [r.id, r]));
  if (locations.size === 0) return { locations: 0, locationIds: [], chains: [] };
  const ids = [...locations.keys()];

  const keys = new Set<string>();
  const tx = await db.query<{ chain_key: string }>(
    'SELECT DISTINCT fr.chain_key FROM fiscal_records fr JOIN transactions t ON t.id = fr.transaction_id WHERE t.location_id = ANY($1::uuid[])',
    [ids],
  );
  for (const r of tx.rows) keys.add(r.chain_key);
  for (const id of ids) {
    const own = await db.query<{ chain_key: string }>('SELECT DISTINCT chain_key FROM fiscal_records WHERE transaction_id IS NULL AND chain_key LIKE $1', [`%:${id}:%`]);
    for (const r of own.rows) keys.add(r.chain_key);
  }
  const chainKeys = [...keys].filter((k) => !scope.environment || environmentOfKey(k) === scope.environment).sort();
  const sizes = new Map<string, number>();
  if (chainKeys.length > 0) {
    const counted = await db.query<{ chain_key: string; n: string | number }>('SELECT chain_key, count(*) AS n FROM fiscal_records WHERE chain_key = ANY($1::text[]) GROUP BY chain_key', [chainKeys]);
    for (const r of counted.rows) sizes.set(r.chain_key, Number(r.n));
  }
  const total = [...sizes.values()].reduce((a, b) => a + b, 0);

  // Public material per location, read once.
  const fiscal = new Map<string, LocationForFiscal>();
  const fiscalOf = async (locationId: string): Promise<LocationForFiscal | undefined> => {
    if (fiscal.has(locationId)) return fiscal.get(locationId);
    const row = locations.get(locationId) ?? (await db.query<LocationRow>('SELECT * FROM locations WHERE id = $1', [locationId])).rows[0];
    if (!row) return undefined;
    locations.set(locationId, row);
    const f = deps.toFiscal(row);
    fiscal.set(locationId, f);
    return f;
  };
  const recordKeys = new Map<string, crypto.KeyObject | undefined>();
  const recordKeyOf = async (system: FiscalSystem, locationId: string) => {
    const kind = system.capabilities.recordKey;
    if (!kind) return undefined;
    const k = `${locationId}:${kind}`;
    if (!recordKeys.has(k)) {
      const row = await recordKeysRepo.get(db, locationId, kind);
      recordKeys.set(k, row ? crypto.createPublicKey(row.public_key_pem) : undefined);
    }
    return recordKeys.get(k);
  };
  const signing = new Map<string, SigningKey | undefined>();
  const signingKeyOf = async (system: FiscalSystem, location: LocationForFiscal, environment: 'test' | 'live') => {
    if (!system.capabilities.signsWithCertificate || !location.certificateRef) return undefined;
    const k = `${location.id}:${environment}`;
    if (!signing.has(k)) signing.set(k, await deps.signingKey(location, environment).catch(() => undefined));
    return signing.get(k);
  };

  progress.start(total, 'verifying records');
  const reports: ChainReport[] = [];
  for (const chainKey of chainKeys) {
    const environment = environmentOfKey(chainKey);
    /** The location a chain without transactions belongs to: the one named in its key. */
    const keyLocation = ids.find((id) => chainKey.includes(`:${id}:`));
    let previous: ChainedRecord | null = null;
    let count = 0;
    let system = '';
    let found: ChainBreak | undefined;
    let afterSeq = -1;
    while (found === undefined) {
      const page = await db.query<Row>(
        `SELECT fr.chain_key, fr.seq, fr.kind, fr.system, fr.transaction_id, fr.body, fr.content_type, fr.fingerprint, fr.previous_fingerprint,
                fr.fiscal_id, fr.document_number, t.location_id, t.environment
           FROM fiscal_records fr
           -- A correction's record names its transaction through its correction (migration 0057).
           LEFT JOIN transaction_corrections c ON fr.transaction_id IS NULL AND c.record_id = fr.id
           LEFT JOIN transactions t ON t.id = COALESCE(fr.transaction_id, c.transaction_id)
          WHERE fr.chain_key = $1 AND fr.seq > $2 ORDER BY fr.seq LIMIT ${PAGE}`,
        [chainKey, afterSeq],
      );
      for (const r of page.rows) {
        const record: ChainedRecord = {
          chainKey, seq: Number(r.seq), kind: r.kind, transactionId: r.transaction_id, body: r.body, contentType: r.content_type,
          fingerprint: r.fingerprint, previousFingerprint: r.previous_fingerprint, fiscalId: r.fiscal_id, documentNumber: r.document_number,
        };
        system = r.system;
        count++;
        progress.tick();
        const fault = await check(record, previous, r);
        if (fault) {
          found = { seq: record.seq, transaction_id: record.transactionId, kind: fault.kind, reason: fault.reason };
          break;
        }
        previous = record;
      }
      if (page.rows.length < PAGE) break;
      afterSeq = Number(page.rows[page.rows.length - 1]!.seq);
    }
    // The records after a break are not judged: the bar moves past them.
    if (found !== undefined) progress.tick(Math.max(0, (sizes.get(chainKey) ?? count) - count));
    reports.push({ chain_key: chainKey, system, environment, records: count, ok: found === undefined, ...(found ? { break: found } : {}) });

    async function check(record: ChainedRecord, prev: ChainedRecord | null, r: Row): Promise<RecordFault | null> {
      const expected = prev ? prev.seq + 1 : 1;
      if (record.seq !== expected) {
        return { kind: 'seq_gap', reason: prev ? `seq ${record.seq} follows seq ${prev.seq}: a record is missing or out of order` : `the chain starts at seq ${record.seq}, not 1` };
      }
      if (!isSideSequence(chainKey) && record.previousFingerprint !== (prev?.fingerprint ?? null)) {
        return { kind: 'link_broken', reason: `its stored previous fingerprint is not the fingerprint of the record before it (seq ${prev?.seq ?? 'none'})` };
      }
      const plugin = deps.systems.find((s) => s.key === r.system);
      if (!plugin) return { kind: 'body_changed', reason: `unknown system ${r.system}` };
      if (!plugin.verifyRecord) return null;
      const locationId = r.location_id ?? keyLocation;
      const location = locationId ? await fiscalOf(locationId) : undefined;
      if (!location) return { kind: 'body_changed', reason: 'the record\'s location cannot be found' };
      const env = r.environment ?? environment;
      return plugin.verifyRecord({
        record, previous: prev, location, environment: env, software: deps.software,
        recordPublicKey: await recordKeyOf(plugin, location.id),
        signingKey: await signingKeyOf(plugin, location, env),
      });
    }
  }
  progress.stop();
  return { locations: ids.length, locationIds: ids, chains: reports };
}
