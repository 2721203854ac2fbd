/**
 * `portugal/saft`: the monthly SAF-T (PT) file of every location (DECISIONS "Batch":
 * processor `portugal/saft`, monthly).
 *
 * Schedule: `0 2 1 * *` UTC, the 1st of the month at 02:00 UTC, i.e. 02:00 in Lisbon in
 * winter (WET) and 03:00 in summer (WEST): always after Lisbon midnight, so the month just
 * ended is closed (the Azores, an hour behind, too).
 *
 * Work: the closed months (Lisbon calendar, before the current one) in which a location
 * of the system issued documents and that have no file yet: the previous month on the
 * 1st, and any earlier month a run missed. A run, per such month, oldest first, builds
 * the file from the stored records (month-file.ts `buildMonth`) and keeps it (saft_files);
 * the inspector's route serves those bytes for that month from then on. Concurrent runs
 * never keep two files of one month: the insert is a single statement only one wins.
 *
 * Nothing is sent: AT's monthly communication of invoices (e-fatura web service or portal
 * upload) is out of scope; the file is produced and kept.
 *
 * Tally (the spec's Batch result, counted as a processor that produces records of its
 * own, batch/types.ts): a file kept is a batch created, its documents accepted; a month
 * that cannot be produced (no NIF, unreadable records) counts its documents failed, with
 * an error entry; it is tried again on the next run.
 */
import type { BatchProcessor, ProcessorDeps } from '../../batch/types.ts';
import { newId } from '../../core/ids.ts';
import { locationsRepo } from '../../store/repos/locations-repo.ts';
import { saftFilesRepo } from '../../store/repos/saft-files-repo.ts';
import { NO_NIF_MESSAGE, SAFT_SYSTEM, buildMonth, hasNif, lisbonMonthOf, lisbonMonthStart } from './month-file.ts';

export const PORTUGAL_SAFT = 'portugal/saft';
export const PORTUGAL_SAFT_CRON = '0 2 1 * *';

/** The start of the current Lisbon month: months before it are closed. */
export const startOfLisbonMonth = (now: Date): Date => lisbonMonthStart(lisbonMonthOf(now));

export function createSaftProcessor(deps: ProcessorDeps): BatchProcessor {
  return {
    name: PORTUGAL_SAFT,
    country: 'PT',
    cron: PORTUGAL_SAFT_CRON,

    async scopesWithWork(q, now) {
      const rows = await saftFilesRepo.scopesWithOpenMonths(q, { system: SAFT_SYSTEM, before: startOfLisbonMonth(now) });
      return rows.map((r) => ({ accountId: r.account_id, environment: r.environment }));
    },

    async run(scope, ctx) {
      const { tally } = ctx;
      const months = await saftFilesRepo.openMonths(deps.db, {
        accountId: scope.accountId, environment: scope.environment, system: SAFT_SYSTEM, before: startOfLisbonMonth(deps.clock.now()),
      });
      for (const { location_id: locationId, period, documents } of months) {
        const row = await locationsRepo.getById(deps.db, locationId);
        if (!row) continue;
        const location = deps.locations.toFiscal(row);
        const fail = (code: string, message: string) => {
          const records = Math.max(1, documents);
          tally.failed += records;
          tally.errors.push({ code, message: `${period}: ${message}`, issuer_tax_id: location.tax_id ?? null, kind: 'saft', records });
        };
        if (!hasNif(location)) {
          fail('configuration_error', NO_NIF_MESSAGE);
          continue;
        }
        const now = deps.clock.now();
        let file;
        try {
          file = await buildMonth(deps.db, { location, environment: scope.environment, period, software: deps.software, createdAt: now });
        } catch (err) {
          // A stored record the file builder cannot read: the month waits, the run goes on.
          // Anything else (the store) stops the run, as in every processor, the month
          // counted failed (the run's result and the stats show it); the next run tries it again.
          if (!(err instanceof Error && err.message.startsWith('pt-saft:'))) {
            tally.failed += Math.max(1, documents);
            throw err;
          }
          fail('saft_file_error', err.message);
          continue;
        }
        if (file === undefined) continue;
        const kept = await saftFilesRepo.insert(deps.db, {
          id: newId(), accountId: scope.accountId, environment: scope.environment, locationId, period, fileName: file.fileName, content: file.bytes,
          documents: file.numberOfEntries, totalDebit: file.totalDebit, totalCredit: file.totalCredit, runId: ctx.runId, now,
        });
        // Another run kept the month first: its file stands.
        if (!kept) continue;
        tally.batches_created += 1;
        tally.accepted += file.numberOfEntries;
        deps.log.info({ processor: PORTUGAL_SAFT, locationId, period, documents: file.numberOfEntries }, 'SAF-T (PT) month produced');
      }
    },
  };
}
