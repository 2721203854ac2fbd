import type { JobRow, JobStatus } from '../store/repos/jobs-repo.ts';
import { jobsRepo } from '../store/repos/jobs-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';
import type { ListResult, Page } from './pagination.ts';
import { POLL_JOB, SUBMIT_JOB } from './transaction-view.ts';

/**
 * The jobs a retry entry is: a submission, and the poll for its result where the authority
 * answers later (Italy DC): a document refused at the poll is that entry, `dead`, while the
 * send before it completed.
 */
export const ENTRY_KINDS = [SUBMIT_JOB, POLL_JOB] as const;

/** A retry-queue entry: a submission (or result poll) job, in the spec's shape. */
export interface RetryEntryView {
  id: string;
  transaction_id: string | null;
  account_id: string | null;
  status: JobStatus;
  attempt: number;
  max_attempts: number;
  next_retry_at: Date | null;
  last_error: string | null;
  webhook_url: string | null;
  created_at: Date;
  updated_at: Date;
}

const STATS_WINDOW_MS = 24 * 3600_000;

export function createRetryQueueService(deps: Deps) {
  const toView = (j: JobRow): RetryEntryView => ({
    id: j.id,
    transaction_id: j.transaction_id,
    account_id: j.account_id,
    // `waiting` (behind an earlier job of its chain) is `pending` to the API: not yet sent.
    status: j.status === 'waiting' ? 'pending' : j.status,
    attempt: j.attempt,
    max_attempts: j.max_attempts,
    // Only waiting entries have a next attempt.
    next_retry_at: j.status === 'pending' || j.status === 'failed' ? j.run_at : null,
    last_error: j.last_error,
    webhook_url: null,
    created_at: j.created_at,
    updated_at: j.updated_at,
  });

  return {
    async list(auth: AuthContext, status: JobStatus | undefined, page: Page): Promise<ListResult<RetryEntryView>> {
      const { rows, total } = await jobsRepo.list(deps.db, auth.accountId, ENTRY_KINDS, status, page.limit, page.offset);
      return { data: rows.map(toView), total, ...page };
    },
    /** Entries waiting or running now, and those that completed or died in the last 24 hours. */
    async stats(auth: AuthContext) {
      const since = new Date(deps.clock.now().getTime() - STATS_WINDOW_MS);
      const s = await jobsRepo.stats(deps.db, auth.accountId, ENTRY_KINDS, since);
      return { ...s, total: s.pending + s.processing + s.completed + s.failed + s.dead };
    },
  };
}
