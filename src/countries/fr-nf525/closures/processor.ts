/**
 * `france/closures` (DECISIONS "Batch"): the NF525 closures of every register (location),
 * per environment: daily for each closed Paris day with records, monthly for each closed
 * month, annual for each closed fiscal year (= calendar year), as periods.ts decides.
 *
 * Schedule: `0 1 * * *` UTC: 02:00 in Paris in winter (CET) and 03:00 in summer (CEST),
 * always after Paris midnight, so yesterday is closed (an hour before `spain/lroe`).
 *
 * A run, per location of the scope's account (deleted ones too), repeats until nothing is
 * due: reads what the closure chain has closed (its head's linkData), the next record not
 * yet closed, and so the next closure (`nextClosure`); sums what it closes (a day's
 * records, a month's daily closures, a year's monthly closures); a daily closure covers
 * the records chain by seq: every record after the last one closed up to the first one
 * stamped after its day, so a record stamped on a day closed already (a node whose clock
 * lagged) is closed by the next daily closure, never left out, and marked in the JET
 * (code 80, before the closure's own event); appends the signed
 * closure through the ledger (closure.ts), then journals it in the JET (jet.ts, code 40:
 * every closure the JET has not got yet, which also repairs an event a dying process left
 * out; the JET head's linkData keeps the last closure journaled).
 * The closure's `build` refuses a closure that is not the chain's next one, so a period is
 * closed once whatever the races: a run that loses one reads the head again and goes on.
 * After journaling, every monthly and annual closure not archived yet is archived
 * (archives.ts: the period's signed archive, journaled as code 50, once per closure).
 * The first time a process closes for a register it journals the software version if the
 * JET has not got it yet (code 10); a failure journals a closure error (code 90).
 *
 * Tally: each closure is a batch created (`batches_created`), the records it covers are
 * accepted (a monthly closure counts its month's records again: it covers them too), and
 * `requests` names it (kind `closure_<kind>`, its number as the registration number). A
 * register whose closures fail counts one failed and an error.
 */
import type { BatchProcessor, BatchRunContext, BatchScope, ProcessorDeps } from '../../../batch/types.ts';
import type { RecordKey } from '../../../core/record-key.ts';
import { locationsRepo } from '../../../store/repos/locations-repo.ts';
import { nf525Repo } from '../../../store/repos/nf525-repo.ts';
import { configString } from '../../shared/config-fields.ts';
import type { LocationForFiscal } from '../../types.ts';
import type { Nf525Record } from '../record.ts';
import { chainKeyOf, inEnvironment } from '../../shared/chain-key.ts';
import {
  ClosureConflict, NF525_SYSTEM, closureChainKey, closureEntry, readClosureState, sumVat, type ClosureContent, type Nf525Closure,
} from './closure.ts';
import { JetSkipped, jetChainKey, jetEntry, type JetEvent } from './jet.ts';
import { archiveClosure } from './archives.ts';
import { closingDay, nextClosure, parisInstant, parisToday, periodRange, type DueClosure } from './periods.ts';

export const FRANCE_CLOSURES = 'france/closures';
export const FRANCE_CLOSURES_CRON = '0 1 * * *';
/** A run closes at most this many periods per register (a register years behind catches up over runs). */
const MAX_CLOSURES_PER_RUN = 500;
/** Records older than this cannot have a closure still due (an annual closure is due within 13 months). */
const LOOKBACK_MS = 400 * 86_400_000;

/** The register's records chain in one environment (live records chain apart: shared/chain-key.ts inEnvironment). */
export const recordChainKey = (locationId: string, environment: 'test' | 'live'): string => inEnvironment(chainKeyOf(NF525_SYSTEM, locationId, 'default'), environment);
export const registerIdOf = (location: LocationForFiscal): string => configString(location.config, 'register_id') ?? location.id;

/** What a daily closure sums: the records it covers (bodies, by seq: contentOf), in chain order. */
export function dayContent(records: readonly Pick<Nf525Record, 'seq' | 'vat' | 'totals' | 'grand_totals'>[]): ClosureContent {
  const last = records[records.length - 1]!;
  return {
    vat: sumVat(records.map((r) => r.vat)),
    totals: {
      excl_tax: records.reduce((s, r) => s + r.totals.excl_tax, 0),
      tax: records.reduce((s, r) => s + r.totals.tax, 0),
      incl_tax: records.reduce((s, r) => s + r.totals.incl_tax, 0),
    },
    perpetual: { excl_tax: last.grand_totals.perpetual.excl_tax, incl_tax: last.grand_totals.perpetual.incl_tax },
    records: { count: records.length, first_seq: records[0]!.seq, last_seq: last.seq },
  };
}

/** What a monthly (annual) closure sums: the period's daily (monthly) closures, in chain order. */
export function closuresContent(closures: readonly Nf525Closure[]): ClosureContent {
  const last = closures[closures.length - 1]!;
  return {
    vat: sumVat(closures.map((c) => c.vat)),
    totals: {
      excl_tax: closures.reduce((s, c) => s + c.totals.excl_tax, 0),
      tax: closures.reduce((s, c) => s + c.totals.tax, 0),
      incl_tax: closures.reduce((s, c) => s + c.totals.incl_tax, 0),
    },
    perpetual: last.grand_total.perpetual,
    records: { count: closures.reduce((s, c) => s + c.records.count, 0), first_seq: closures[0]!.records.first_seq, last_seq: last.records.last_seq },
  };
}

export interface JetWriter {
  /**
   * Journals an event; answers false when the entry was refused by its own condition (`onlyIf`).
   * `seq`: the closure a `closure` event journals, or an `archive` event archives; the
   * record a `late_record` event marks.
   */
  (event: JetEvent, details: Record<string, string>, onlyIf?: (linkData: Readonly<Record<string, string>> | null) => void, seq?: number): Promise<boolean>;
}

/** A JET writer for one register and environment (the location's record key, the ledger). */
export function jetWriter(deps: Pick<ProcessorDeps, 'ledger' | 'software'>, s: { accountId: string; location: LocationForFiscal; environment: 'test' | 'live'; key: RecordKey }): JetWriter {
  return async (event, details, onlyIf, seq) => {
    try {
      await deps.ledger.append(jetEntry({
        accountId: s.accountId, locationId: s.location.id, registerId: registerIdOf(s.location), environment: s.environment,
        event, details, key: s.key, software: { name: deps.software.name, version: deps.software.version }, onlyIf,
        closureSeq: event === 'closure' ? seq : undefined, archiveClosureSeq: event === 'archive' ? seq : undefined,
        lateSeq: event === 'late_record' ? seq : undefined,
      }));
      return true;
    } catch (err) {
      if (err instanceof JetSkipped) return false;
      throw err;
    }
  };
}

/**
 * `afterFirstRecord` (countries/types.ts): the first record a process signs for a register
 * journals the software's start in the JET of that environment (code 01).
 */
export async function journalSoftwareStart(deps: Pick<ProcessorDeps, 'ledger' | 'software'>, input: { location: LocationForFiscal; environment: 'test' | 'live'; recordKey: RecordKey | undefined }): Promise<void> {
  if (input.recordKey === undefined) return;
  await jetWriter(deps, { accountId: input.location.account_id, location: input.location, environment: input.environment, key: input.recordKey })(
    'software_start', { name: deps.software.name, version: deps.software.version },
  );
}

/**
 * `beforeProcessStop` (countries/types.ts): a process that journaled the software's start
 * for a register journals its clean stop in the same JET (code 02; the issue's "start,
 * stop" events, FORMATS.md §8 JET).
 */
export async function journalSoftwareStop(deps: Pick<ProcessorDeps, 'ledger' | 'software'>, input: { location: LocationForFiscal; environment: 'test' | 'live'; recordKey: RecordKey | undefined }): Promise<void> {
  if (input.recordKey === undefined) return;
  await jetWriter(deps, { accountId: input.location.account_id, location: input.location, environment: input.environment, key: input.recordKey })(
    'software_stop', { name: deps.software.name, version: deps.software.version },
  );
}

export function createClosuresProcessor(deps: ProcessorDeps): BatchProcessor {
  /** Registers whose software version this process has journaled (or found journaled). */
  const versionJournaled = new Set<string>();

  async function contentOf(due: DueClosure, s: { locationId: string; environment: 'test' | 'live'; afterSeq: number }): Promise<ClosureContent | undefined> {
    const range = periodRange(due.kind, due.period);
    if (due.kind === 'daily') {
      // By chain seq, not by timestamp: every record after the last one closed, up to the
      // first stamped after the day (a late record, stamped on a day closed already, is
      // among them: docs/decisions.md "France: a record stamped on a closed day").
      const chainKey = recordChainKey(s.locationId, s.environment);
      const stop = await nf525Repo.nextRecord(deps.db, { chainKey, environment: s.environment, afterSeq: s.afterSeq, from: range.to });
      const rows = await nf525Repo.records(deps.db, { chainKey, environment: s.environment, afterSeq: s.afterSeq, beforeSeq: stop?.seq ?? null });
      if (rows.length === 0) return undefined;
      return dayContent(rows.map((r) => JSON.parse(r.body) as Nf525Record));
    }
    const want = due.kind === 'monthly' ? 'daily' : 'monthly';
    const closures = (await nf525Repo.entriesSince(deps.db, closureChainKey(s.locationId, s.environment), range.from))
      .map((r) => JSON.parse(r.body) as Nf525Closure)
      .filter((c) => c.kind === want && c.period.startsWith(due.period));
    return closures.length === 0 ? undefined : closuresContent(closures);
  }

  async function closeLocation(scope: BatchScope, locationId: string, ctx: BatchRunContext): Promise<void> {
    const row = await locationsRepo.getById(deps.db, locationId);
    if (!row) return;
    const location = deps.locations.toFiscal(row);
    const registerId = registerIdOf(location);
    const env = scope.environment;
    const now = deps.clock.now();
    const today = parisToday(now);
    let key: RecordKey | undefined;
    let jet: JetWriter | undefined;
    let current: DueClosure | undefined;
    /** The location's key and JET writer, once something is to be signed; journals the software version first. */
    const signer = async (): Promise<{ key: RecordKey; jet: JetWriter }> => {
      if (key === undefined || jet === undefined) {
        key = await deps.signingKeys.recordKey(location, 'ec-p256');
        jet = jetWriter(deps, { accountId: scope.accountId, location, environment: env, key });
        const seen = `${locationId}:${env}`;
        if (!versionJournaled.has(seen)) {
          const version = deps.software.version;
          const previousVersion = (await nf525Repo.head(deps.db, jetChainKey(locationId, env)))?.link?.software_version ?? '';
          if (previousVersion !== version) {
            await jet('software_version', { name: deps.software.name, version, previous_version: previousVersion }, (ld) => {
              if (ld?.software_version === version) throw new JetSkipped('this version is journaled already');
            });
          }
          versionJournaled.add(seen);
        }
      }
      return { key, jet };
    };
    /**
     * Marks in the JET (code 80, before the closure's own event) each record a daily closure
     * covers that is stamped on an earlier Paris day: a day closed without it (a node whose
     * clock lagged, or two nodes either side of midnight). The closure and the record say it
     * only to one who compares their dates; the JET is where an inspector reads what
     * happened to the register, so it is said there, signed and chained with the rest.
     * Once per record, whatever the races or a process dying half way: the JET head keeps
     * the last record marked (`late_seq`), and a closure still to journal marks its own again
     * from there.
     */
    const journalLateRecords = async (jet: JetWriter, c: Nf525Closure): Promise<void> => {
      const late = await nf525Repo.lateRecords(deps.db, {
        chainKey: recordChainKey(locationId, env), environment: env, fromSeq: c.records.first_seq, toSeq: c.records.last_seq, before: parisInstant(c.period),
      });
      for (const r of late) {
        const record = JSON.parse(r.body) as Nf525Record;
        await jet('late_record', {
          record_number: record.document_number, record_seq: String(r.seq), transaction_id: r.transaction_id, record_timestamp: record.timestamp,
          closed_period: parisToday(r.created_at), closure_period: c.period, closure: c.number,
        }, (ld) => {
          if (Number(ld?.late_seq ?? '0') >= r.seq) throw new JetSkipped('this late record is journaled already');
        }, r.seq);
      }
    };
    /**
     * Journals the closures the JET has not got yet, in closure order: the one just written,
     * or those a process that died between a closure and its event left out.
     */
    const journalClosures = async (): Promise<void> => {
      for (;;) {
        const done = Number((await nf525Repo.head(deps.db, jetChainKey(locationId, env)))?.link?.closure_seq ?? '0');
        const missing = await nf525Repo.entriesAfter(deps.db, closureChainKey(locationId, env), Number.isSafeInteger(done) ? done : 0, 50);
        if (missing.length === 0) return;
        const w = await signer();
        for (const row of missing) {
          const c = JSON.parse(row.body) as Nf525Closure;
          if (c.kind === 'daily') await journalLateRecords(w.jet, c);
          await w.jet('closure', { kind: c.kind, period: c.period, number: c.number, signature: c.signature.value }, (ld) => {
            if (Number(ld?.closure_seq ?? '0') >= c.seq) throw new JetSkipped('this closure is journaled already');
          }, c.seq);
        }
      }
    };
    /**
     * Archives the monthly and annual closures journaled but not archived yet, in closure
     * order (archives.ts): the one just journaled, or those a dying process left out.
     */
    const archiveClosures = async (): Promise<void> => {
      for (;;) {
        const link = (await nf525Repo.head(deps.db, jetChainKey(locationId, env)))?.link;
        const archived = Number(link?.archive_closure_seq ?? '0');
        const journaled = Number(link?.closure_seq ?? '0');
        const next = (await nf525Repo.entriesAfter(deps.db, closureChainKey(locationId, env), Number.isSafeInteger(archived) ? archived : 0, MAX_CLOSURES_PER_RUN * 2))
          .map((r) => JSON.parse(r.body) as Nf525Closure)
          .find((c) => c.kind !== 'daily' && c.seq <= journaled);
        if (next === undefined) return;
        const w = await signer();
        const made = await archiveClosure(deps, { locationId, registerId, environment: env, key: w.key, closure: next, jet: w.jet });
        if (made) deps.log.info({ processor: FRANCE_CLOSURES, locationId, environment: env, kind: next.kind, period: next.period }, 'nf525 archive signed');
      }
    };
    try {
      await journalClosures();
      await archiveClosures();
      for (let n = 0; n < MAX_CLOSURES_PER_RUN; n++) {
        const head = await nf525Repo.head(deps.db, closureChainKey(locationId, env));
        const state = readClosureState(head?.link);
        // The first record not closed yet, whatever its timestamp; one stamped on a closed
        // day (a node whose clock lagged) closes on the first day still open (`closingDay`).
        const next = await nf525Repo.nextRecord(deps.db, { chainKey: recordChainKey(locationId, env), environment: env, afterSeq: state.lastSeq, from: null });
        const day = next ? closingDay(state, parisToday(next.created_at)) : null;
        const due = nextClosure(state, day !== null && day < today ? day : null, today);
        if (due === null) return;
        current = due;
        const { key: signingKey } = await signer();
        const content = await contentOf(due, { locationId, environment: env, afterSeq: state.lastSeq });
        if (content === undefined) throw new Error(`nothing to close for ${due.kind} ${due.period}`);
        let closure: Nf525Closure;
        try {
          const appended = await deps.ledger.append(closureEntry({
            accountId: scope.accountId, locationId, registerId, environment: env, due, content, key: signingKey,
            software: { name: deps.software.name, version: deps.software.version },
          }));
          if (!appended.created) continue;
          closure = JSON.parse(appended.built.record.body) as Nf525Closure;
        } catch (err) {
          // Another run closed it first: read the head again.
          if (err instanceof ClosureConflict) continue;
          throw err;
        }
        ctx.tally.batches_created += 1;
        ctx.tally.accepted += closure.records.count;
        ctx.tally.requests.push({
          issuer_tax_id: registerId, kind: `closure_${closure.kind}`, year: Number(closure.period.slice(0, 4)), records: closure.records.count,
          registration_number: closure.number, answer: 'signed',
        });
        await journalClosures();
        await archiveClosures();
        deps.log.info({ processor: FRANCE_CLOSURES, locationId, environment: env, kind: closure.kind, period: closure.period, number: closure.number }, 'nf525 closure signed');
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      ctx.tally.failed += 1;
      ctx.tally.errors.push({
        code: 'closure_failed', message: `${current ? `${current.kind} ${current.period}: ` : ''}${message}`,
        issuer_tax_id: registerId, kind: current ? `closure_${current.kind}` : 'closure', records: 0,
      });
      deps.log.error({ err, processor: FRANCE_CLOSURES, locationId, environment: env }, 'nf525 closure failed');
      if (jet) {
        await jet('closure_error', { message, ...(current ? { kind: current.kind, period: current.period } : {}) })
          .catch((e: unknown) => deps.log.error({ err: e, locationId }, 'nf525: the closure error could not be journaled'));
      }
    }
  }

  return {
    name: FRANCE_CLOSURES,
    country: 'FR',
    cron: FRANCE_CLOSURES_CRON,

    async scopesWithWork(q, now) {
      const before = parisInstant(parisToday(now));
      const rows = await nf525Repo.scopesWithRecords(q, { system: NF525_SYSTEM, from: new Date(before.getTime() - LOOKBACK_MS), before });
      return rows.map((r) => ({ accountId: r.account_id, environment: r.environment }));
    },

    async run(scope, ctx) {
      for (const id of await nf525Repo.locationIds(deps.db, scope.accountId, NF525_SYSTEM)) await closeLocation(scope, id, ctx);
    },
  };
}
