import { newId } from '../../core/ids.ts';
import type { EnqueueInput } from './jobs-repo.ts';
import { isoText, jsonValue } from './json-rows.ts';

const JOB_COLUMNS = 'id, kind, account_id, transaction_id, payload, status, attempt, max_attempts, run_at, created_at, updated_at, queue_key, queue_seq';

/**
 * Jobs as one INSERT: jobsRepo.enqueue/enqueueMany run it alone, the create's batch as a
 * part of the statement that writes its transactions and records. The rows travel as one
 * JSON parameter (json_populate_recordset against the table's own row type), so the
 * statement's text is the same whatever the number of jobs: prepared once per connection,
 * and no per-value encoding in the driver. Returns the new ids in input order.
 */
export function jobsInsertSql(inputs: readonly EnqueueInput[], now: Date, param: (v: unknown) => string): { ids: string[]; sql: string } {
  const { ids, json } = jobRowsJson(inputs, now);
  return { ids, sql: jobsInsertFromJson(param(json)) };
}

/** The jobs' rows as the JSON `jobsInsertFromJson` reads, with their new ids in input order. */
export function jobRowsJson(inputs: readonly EnqueueInput[], now: Date): { ids: string[]; json: string } {
  const ids = inputs.map((input) => input.id ?? newId());
  // Dates as their text (json-rows.ts: JSON.stringify's Date path is the slow one).
  const at = isoText(now);
  const rows = inputs.map((input, i) => ({
    id: ids[i], kind: input.kind, account_id: input.accountId ?? null, transaction_id: input.transactionId ?? null,
    payload: input.payload ?? {}, status: input.waiting ? 'waiting' : 'pending', attempt: 0, max_attempts: input.maxAttempts,
    run_at: jsonValue(input.runAt), created_at: at, updated_at: at, queue_key: input.queueKey ?? null, queue_seq: input.queueSeq ?? null,
  }));
  return { ids, json: JSON.stringify(rows) };
}

/**
 * The INSERT of the jobs whose JSON array (`jobRowsJson`) is the parameter `json`; with
 * `where`, only the rows (alias `j`) it holds for.
 */
export function jobsInsertFromJson(json: string, where?: string): string {
  return `INSERT INTO jobs (${JOB_COLUMNS}) SELECT ${JOB_COLUMNS} FROM json_populate_recordset(NULL::jobs, ${json}::json)${where ? ` j WHERE ${where}` : ''}`;
}
