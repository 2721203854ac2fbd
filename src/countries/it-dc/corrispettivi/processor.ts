/**
 * `italy/corrispettivi`: the daily takings of every Documento Commerciale register
 * (DECISIONS "Batch": processor `italy/corrispettivi`, daily).
 *
 * Schedule: `0 1 * * *` UTC, i.e. 02:00 in Rome in winter (CET, UTC+1) and 03:00 in summer
 * (CEST, UTC+2): always after Italian midnight, so the day just ended is closed, and clear
 * of the 00:00-01:00 Rome hour in which late sales of the previous day are still being
 * recorded by a POS whose clock runs late; an hour before `spain/lroe` (02:00 UTC).
 *
 * Work: the days before today (Rome) on which a location of the system issued documents
 * (transactions), whose submission is not final (accepted / rejected) and not waiting for
 * a later attempt. A run, per such day, oldest first:
 * 1. a day without a row: builds the signed DatiCorrispettivi (day.ts) with the register's
 *    next Progressivo and inserts it already claimed (`sent`); a day with a row (pending
 *    and due, or left `sent` by a run that died) is claimed as it is, its XML unchanged:
 *    a resend is the same file, which AdE answers with the original IdOperazione;
 * 2. sends it (stub: answered locally; authority: client.ts over mutual TLS);
 * 3. records the outcome: accepted (final, never sent again), rejected (final), or pending
 *    again with `next_attempt_at` (429, 5xx, no answer) after an exponential backoff.
 * Concurrent runs never send a day twice at once: the insert and the claim are single
 * statements that only one run wins.
 *
 * Tally (the spec's Batch result, as `spain/lroe`): each day's file is a batch of one
 * record: `batches_created` per file sent, `accepted` / `rejected` / `failed` per outcome,
 * `batches_retried` and an error entry per file sent back to wait. A day whose file cannot
 * be built (no seal certificate; a stored record the builder refuses: `corrispettivi:`
 * errors) counts failed with an error entry and waits for the next run, while the run goes
 * on with the other days and registers; any other error stops the run, that day counted
 * failed (so the stats show it).
 */
import type { BatchProcessor, BatchRunContext, BatchScope, ProcessorDeps } from '../../../batch/types.ts';
import { ApiError } from '../../../core/errors.ts';
import { newId } from '../../../core/ids.ts';
import { locationsRepo } from '../../../store/repos/locations-repo.ts';
import { corrispettiviRepo, type CorrispettiviRow, type Outcome } from '../../../store/repos/corrispettivi-repo.ts';
import type { LocationForFiscal } from '../../types.ts';
import { romeInstant } from './build.ts';
import { sendCorrispettivi } from './client.ts';
import { DC_SYSTEM, buildDay, matricolaOf, prepareDay, sealKey } from './day.ts';
import type { CorrispettiviAnswer } from './response.ts';
import { romeDay } from './totals.ts';

export const ITALY_CORRISPETTIVI = 'italy/corrispettivi';
export const ITALY_CORRISPETTIVI_CRON = '0 1 * * *';
/** Per request: one file of a few kilobytes. */
export const DEFAULT_CORRISPETTIVI_TIMEOUT_MS = 30_000;
/** A claim older than this belongs to a run that died. */
export const DEFAULT_CLAIM_LEASE_MS = 3_600_000;
/** Backoff: 1 min, doubling, at most 6 h; retried without limit (a day's takings must reach AdE). */
const BACKOFF_BASE_MS = 60_000;
const BACKOFF_MAX_MS = 6 * 3_600_000;

/** Error code of a day whose file could not be built from its stored records. */
export const BUILD_ERROR = 'corrispettivi_build_error';

export const backoffMs = (attempts: number): number => Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));

/** The start of today in Rome: days before it are closed. */
export const startOfRomeToday = (now: Date): Date => romeInstant(romeDay(now), '00:00:00');

export function createCorrispettiviProcessor(deps: ProcessorDeps): BatchProcessor {
  const leaseMs = deps.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS;
  const timeoutMs = deps.timeoutMs ?? DEFAULT_CORRISPETTIVI_TIMEOUT_MS;

  async function answerFor(row: CorrispettiviRow, scope: BatchScope, now: Date, location: LocationForFiscal): Promise<CorrispettiviAnswer> {
    if (row.mode === 'stub') {
      // The sandbox stub: AdE's answer without AdE (an IdOperazione of our own, marked), one
      // per file: the whole row id (its first 8 digits are a time-ordered id's clock, shared
      // by every file made in the same minute).
      return { kind: 'accepted', idOperazione: `SANDBOX-${row.id.replace(/-/g, '').toUpperCase()}`, httpStatus: 200 };
    }
    let clientKey;
    try {
      clientKey = await deps.signingKeys.forAuthority(location);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      return { kind: 'retry', code: '0403', message: err.message, authorityCode: 'certificate_missing', authorityMessage: err.message, httpStatus: null };
    }
    return sendCorrispettivi(row.xml, {
      environment: scope.environment,
      baseUrl: deps.authorityBaseUrls?.[`${DC_SYSTEM}:${scope.environment}`],
      clientKey,
      authorityCa: deps.authorityCa,
      timeoutMs,
      now,
    });
  }

  function outcomeOf(a: CorrispettiviAnswer, attempts: number, now: Date): Outcome {
    if (a.kind === 'accepted') {
      return { status: 'accepted', nextAttemptAt: null, idOperazione: a.idOperazione, code: null, message: null, authorityCode: null, authorityMessage: null };
    }
    const waitMs = a.kind === 'retry' ? Math.max(backoffMs(attempts + 1), (a.retryAfterSeconds ?? 0) * 1000) : 0;
    return {
      status: a.kind === 'retry' ? 'pending' : 'rejected',
      nextAttemptAt: a.kind === 'retry' ? new Date(now.getTime() + waitMs) : null,
      idOperazione: a.idOperazione ?? null,
      code: a.code,
      message: a.message,
      authorityCode: a.authorityCode,
      authorityMessage: a.authorityMessage,
    };
  }

  async function processDay(scope: BatchScope, locationId: string, day: string, ctx: BatchRunContext): Promise<void> {
    const { tally } = ctx;
    const locRow = await locationsRepo.getById(deps.db, locationId);
    if (!locRow) return;
    const location = deps.locations.toFiscal(locRow);
    const issuer = location.tax_id ?? (typeof location.config.partita_iva === 'string' ? location.config.partita_iva : null);
    const matricola = matricolaOf(location);
    const error = (code: string, message: string) => tally.errors.push({ code, message: `${day}: ${message}`, issuer_tax_id: issuer, kind: 'corrispettivi', records: 1 });
    if (matricola === undefined) {
      tally.failed += 1;
      error('configuration_error', 'the location names no register (country_config.pem_matricola)');
      return;
    }
    const key = { locationId, environment: scope.environment, matricola, day };
    let now = deps.clock.now();
    let row = await corrispettiviRepo.get(deps.db, key);
    if (row === undefined) {
      let prepared: Awaited<ReturnType<typeof prepareDay>>;
      let xml: string;
      let progressivo: number;
      try {
        prepared = await prepareDay(deps.db, location, scope.environment, day);
        if (prepared === undefined) return;
        progressivo = await corrispettiviRepo.nextProgressivo(deps.db, key);
        const seal = await sealKey(deps.signingKeys, location, scope.environment, prepared.mode);
        xml = buildDay(prepared, matricola, progressivo, scope.environment, seal, now);
      } catch (err) {
        tally.failed += 1;
        if (err instanceof ApiError) {
          // No seal certificate: nothing can be built; the day waits for one.
          error('certificate_missing', err.message);
          return;
        }
        if (err instanceof Error && err.message.startsWith('corrispettivi:')) {
          // A stored record the day's builder cannot read (or a day the schema cannot
          // hold): this day waits, counted failed; the run goes on with the other days
          // and registers, and the next run tries it again.
          error(BUILD_ERROR, err.message);
          deps.log.error({ err, processor: ITALY_CORRISPETTIVI, locationId, day }, 'corrispettivi day could not be built');
          return;
        }
        // Anything else (the store) stops the run, this day counted failed.
        throw err;
      }
      row = await corrispettiviRepo.insertClaimed(deps.db, {
        id: newId(), accountId: scope.accountId, environment: scope.environment, locationId, matricola, day, progressivo,
        mode: prepared.mode, xml, documents: prepared.totals.documents, now, claimedUntil: new Date(now.getTime() + leaseMs),
      });
      // Another run created the day first: it sends it.
      if (row === undefined) return;
    } else {
      row = await corrispettiviRepo.claim(deps.db, row.id, now, new Date(now.getTime() + leaseMs));
      if (row === undefined) return;
    }

    const answer = await answerFor(row, scope, now, location);
    now = deps.clock.now();
    const settled = await corrispettiviRepo.settle(deps.db, row.id, outcomeOf(answer, row.attempts, now), now);
    tally.batches_created += 1;
    tally.requests.push({
      issuer_tax_id: issuer ?? '', kind: 'corrispettivi', year: Number(day.slice(0, 4)), records: 1,
      registration_number: answer.kind === 'accepted' ? answer.idOperazione : (answer.idOperazione ?? null),
      answer: answer.kind === 'accepted' ? 'accepted' : `${answer.code} ${answer.authorityCode ?? ''}`.trim(),
    });
    if (answer.kind === 'accepted') tally.accepted += 1;
    else if (answer.kind === 'rejected') {
      tally.rejected += 1;
      error(answer.code, answer.message);
    } else {
      tally.failed += 1;
      tally.batches_retried += 1;
      error(answer.code, `${answer.message}; next attempt at ${settled?.next_attempt_at?.toISOString() ?? 'the next run'}`);
    }
    deps.log.info({ processor: ITALY_CORRISPETTIVI, locationId, day, status: settled?.status, code: answer.kind === 'accepted' ? null : answer.code }, 'corrispettivi day processed');
  }

  return {
    name: ITALY_CORRISPETTIVI,
    country: 'IT',
    cron: ITALY_CORRISPETTIVI_CRON,

    async scopesWithWork(q, now) {
      const rows = await corrispettiviRepo.scopesWithOpenDays(q, { system: DC_SYSTEM, before: startOfRomeToday(now), now });
      return rows.map((r) => ({ accountId: r.account_id, environment: r.environment }));
    },

    async run(scope, ctx) {
      const now = deps.clock.now();
      const days = await corrispettiviRepo.openDays(deps.db, { accountId: scope.accountId, environment: scope.environment, system: DC_SYSTEM, before: startOfRomeToday(now), now });
      for (const d of days) await processDay(scope, d.location_id, d.day, ctx);
    },
  };
}
