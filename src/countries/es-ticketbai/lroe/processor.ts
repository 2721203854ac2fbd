/**
 * `spain/lroe`: Bizkaia TicketBAI records through the Batuz LROE (spec "Batch": registered
 * processor `spain/lroe`; Limits "Batch (Bizkaia) daily at 02:00 UTC"; FORMATS.md §1.6).
 *
 * Bizkaia records are stored `pending_batch` (countries/es-ticketbai `initialStatus`; the
 * status exists only for them, so the processor selects by system and status, and a
 * location that later moves territory still gets its Bizkaia records sent). A run:
 * 1. claims the scope's waiting records: `pending_batch` → `pending_lroe` in one statement
 *    (FOR UPDATE SKIP LOCKED), so concurrent runs never send a record twice. A claim left
 *    by a run that died is taken again once older than `claimLeaseMs`; resending a record
 *    Batuz already holds is answered as a duplicate (B4_2000003), i.e. success;
 * 2. groups them per issuer and kind (groups.ts), altas first;
 * 3. sends each group (send.ts) and settles its records in one database transaction
 *    (`ProcessorDeps.settle`, src/batch/settle.ts);
 * 4. claims again until nothing is left (records sent back in this run are not retaken).
 * Whatever stops the run, records still claimed go back to `pending_batch`.
 *
 * Contributed by the TicketBAI plug-in (`ticketBai.processors`, ../index.ts). Like the rest
 * of the plug-in it imports nothing at run time from src/services or the registry: the
 * core's services arrive in `ProcessorDeps` (see docs/decisions.md, "Processors come from
 * the plug-ins").
 */
import type { BatchError, BatchProcessor, BatchRunContext, BatchScope, BatchTally, ProcessorDeps } from '../../../batch/types.ts';
import type { RecordVerdict } from '../../../batch/verdict.ts';
import { batchTransactionsRepo, type BatchClaim } from '../../../store/repos/transactions-repo.ts';
import { TICKETBAI_CODES } from '../codes.ts';
import { PENDING_LROE } from '../statuses.ts';
import { groupLroeClaims, type LroeGroup } from './groups.ts';
import { LROE_SYSTEM, sendLroeGroup, type GroupAnswer, type LroeSendDeps } from './send.ts';

export const SPAIN_LROE = 'spain/lroe';
/** Spec Limits: daily at 02:00 UTC. */
export const SPAIN_LROE_CRON = '0 2 * * *';

/** A claim older than this belongs to a run that died (a live run settles well within it). */
export const DEFAULT_CLAIM_LEASE_MS = 3_600_000;
/** Records per claim round: five full LROE requests (1000 files each, request.ts). */
export const DEFAULT_CLAIM_LIMIT = 5000;
/** Per LROE request: up to 1000 files travel in one body. */
export const DEFAULT_LROE_TIMEOUT_MS = 60_000;

const ORIGINAL_PENDING: RecordVerdict = {
  kind: 'retry',
  code: 'lroe_original_pending',
  message: 'the invoice this cancellation annuls has not reached Batuz yet; the annulment goes in a later batch',
};

export function createLroeProcessor(deps: ProcessorDeps): BatchProcessor {
  const leaseMs = deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS;
  const limit = deps.claimLimit ?? DEFAULT_CLAIM_LIMIT;
  const sendDeps: LroeSendDeps = {
    locations: deps.locations,
    signingKeys: deps.signingKeys,
    authorityBaseUrls: deps.authorityBaseUrls,
    authorityCa: deps.authorityCa,
    timeoutMs: deps.timeoutMs ?? DEFAULT_LROE_TIMEOUT_MS,
    codes: TICKETBAI_CODES,
    pacing: deps.pacing,
  };
  const staleBefore = (now: Date) => new Date(now.getTime() - leaseMs);

  /** Annulments whose invoice is not registered yet (waiting, or in a batch in flight) wait too. */
  async function withoutPendingOriginals(group: LroeGroup): Promise<{ send: BatchClaim[]; held: BatchClaim[] }> {
    if (group.kind !== 'anulacion') return { send: group.claims, held: [] };
    const originals = group.claims.flatMap((c) => (c.t.cancels_id ? [c.t.cancels_id] : []));
    const statuses = await batchTransactionsRepo.statuses(deps.db, originals);
    const waiting = (c: BatchClaim) => {
      const s = c.t.cancels_id ? statuses.get(c.t.cancels_id) : undefined;
      return s === 'pending_batch' || s === PENDING_LROE;
    };
    return { send: group.claims.filter((c) => !waiting(c)), held: group.claims.filter(waiting) };
  }

  function count(tally: BatchTally, group: LroeGroup, sent: number, answer: GroupAnswer): void {
    const verdicts = [...answer.verdicts.values()];
    tally.accepted += verdicts.filter((v) => v.kind === 'success').length;
    tally.rejected += verdicts.filter((v) => v.kind === 'rejected').length;
    const retries = verdicts.filter((v): v is Extract<RecordVerdict, { kind: 'retry' }> => v.kind === 'retry');
    tally.failed += retries.length;
    if (sent > 0) tally.batches_created += 1;
    if (sent > 0 && retries.length > 0) tally.batches_retried += 1;
    tally.requests.push(...answer.requests);
    const base = { issuer_tax_id: group.issuerTaxId, kind: group.kind };
    if (answer.error) {
      tally.errors.push({ ...base, code: answer.error.code, message: answer.error.message, records: sent });
    }
    // Record-level holds (Batuz asked to retry one record, an annulment waits for its
    // invoice): one entry per code.
    const byCode = new Map<string, BatchError>();
    for (const r of retries) {
      if (answer.error && r.code === answer.error.code) continue;
      const e = byCode.get(r.code);
      if (e) e.records += 1;
      else byCode.set(r.code, { ...base, code: r.code, message: r.message, records: 1 });
    }
    tally.errors.push(...byCode.values());
  }

  async function processGroup(scope: BatchScope, group: LroeGroup, ctx: BatchRunContext, inFlight: Set<string>): Promise<void> {
    const { send, held } = await withoutPendingOriginals(group);
    const answer: GroupAnswer =
      send.length > 0
        ? await sendLroeGroup({ ...group, claims: send }, scope.environment, deps.clock.now(), sendDeps)
        : { verdicts: new Map(), registrationNumbers: new Map(), requests: [] };
    for (const c of held) answer.verdicts.set(c.t.id, ORIGINAL_PENDING);
    if (answer.error) deps.log.warn({ processor: SPAIN_LROE, accountId: scope.accountId, issuer: group.issuerTaxId, kind: group.kind, error: answer.error }, 'LROE batch held for the next run');

    await deps.db.transaction(async (tx) => {
      const now = deps.clock.now();
      for (const c of group.claims) {
        const verdict = answer.verdicts.get(c.t.id) ?? { kind: 'retry', code: 'lroe_not_answered', message: 'the LROE answer has no result for this record' };
        const batch = { processor: SPAIN_LROE, run_id: ctx.runId, registration_number: answer.registrationNumbers.get(c.t.id) ?? null };
        await deps.settle(tx, { t: c.t, verdict, batch }, now);
      }
    });
    for (const c of group.claims) inFlight.delete(c.t.id);
    count(ctx.tally, group, send.length, answer);
  }

  return {
    name: SPAIN_LROE,
    country: 'ES',
    cron: SPAIN_LROE_CRON,

    async scopesWithWork(q, now) {
      const rows = await batchTransactionsRepo.scopesWaiting(q, LROE_SYSTEM, PENDING_LROE, staleBefore(now));
      return rows.map((r) => ({ accountId: r.account_id, environment: r.environment }));
    },

    async run(scope, ctx) {
      const handled: string[] = [];
      const inFlight = new Set<string>();
      try {
        for (;;) {
          const now = deps.clock.now();
          const claims = await batchTransactionsRepo.claim(deps.db, {
            accountId: scope.accountId, environment: scope.environment, system: LROE_SYSTEM, now,
            staleBefore: staleBefore(now), exclude: handled, limit, inBatch: PENDING_LROE,
          });
          if (claims.length === 0) break;
          for (const c of claims) {
            handled.push(c.t.id);
            inFlight.add(c.t.id);
          }
          for (const group of groupLroeClaims(claims)) await processGroup(scope, group, ctx, inFlight);
        }
      } finally {
        if (inFlight.size > 0) {
          // Stopped on an error: what is still claimed waits for the next run (if this fails
          // too, the claim lease returns them).
          ctx.tally.failed += inFlight.size;
          await batchTransactionsRepo.release(deps.db, [...inFlight], PENDING_LROE, deps.clock.now()).catch((err: unknown) => {
            deps.log.error({ err, processor: SPAIN_LROE, accountId: scope.accountId }, 'could not release claimed LROE records');
          });
        }
      }
    },
  };
}
