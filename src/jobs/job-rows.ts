import { newId } from '../core/ids.ts';
import type { EnqueueInput } from './queue.ts';

/**
 * Jobs as rows of a multi-row INSERT: jobsRepo.enqueueMany runs it alone, the create's
 * batch as a part of the statement that writes its transactions and records. Parameters
 * are added through `param`; returns the new ids in input order.
 */
export function jobsInsertSql(inputs: readonly EnqueueInput[], now: Date, param: (v: unknown) => string): { ids: string[]; sql: string } {
  const ids = inputs.map(() => newId());
  const at = param(now);
  const rows = inputs.map((input, i) =>
    `(${[ids[i], input.kind, input.accountId ?? null, input.transactionId ?? null, JSON.stringify(input.payload ?? {})].map(param).join(', ')}, ` +
    `${param(input.waiting ? 'waiting' : 'pending')}, 0, ${param(input.maxAttempts)}, ${param(input.runAt)}, ${at}, ${at}, ` +
    `${param(input.queueKey ?? null)}, ${param(input.queueSeq ?? null)})`);
  return {
    ids,
    sql: `INSERT INTO jobs (id, kind, account_id, transaction_id, payload, status, attempt, max_attempts, run_at, created_at, updated_at, queue_key, queue_seq)
       VALUES ${rows.join(', ')}`,
  };
}
