/**
 * What a batch does with one record after the authority (or the sandbox stub) answered.
 * Pure. Mirrors jobs/tasks/submit.ts, with the batch's own statuses (spec "States and
 * transitions": `pending_batch` → `success`; DECISIONS "Statuses"):
 * - accepted / duplicate → success (the authority holds the record);
 * - rejected → failed, with `response_payload.submit_error`; a code the system marks
 *   retriable waits for the next run instead, like submit.ts retries it;
 * - retry_later, a transport fault → back to `pending_batch` for the next run.
 */
import type { AuthorityCode, AuthorityOutcome } from '../countries/types.ts';

export type RecordVerdict =
  | { kind: 'success'; outcome: Extract<AuthorityOutcome, { kind: 'accepted' | 'duplicate' }> }
  | { kind: 'rejected'; code: string; message: string; response: Record<string, unknown> }
  | { kind: 'retry'; code: string; message: string };

export function verdictOf(outcome: AuthorityOutcome, codes: Readonly<Record<string, AuthorityCode>>): RecordVerdict {
  switch (outcome.kind) {
    case 'accepted':
    case 'duplicate':
      return { kind: 'success', outcome };
    case 'rejected':
      return codes[outcome.code]?.retriable
        ? { kind: 'retry', code: outcome.code, message: outcome.message }
        : { kind: 'rejected', code: outcome.code, message: outcome.message, response: outcome.response };
    case 'retry_later':
      return { kind: 'retry', code: outcome.code, message: outcome.message };
    case 'sent':
      // LROE answers synchronously; a deferred answer would leave nothing to settle on.
      return { kind: 'retry', code: 'unexpected_answer', message: 'the authority did not answer the record' };
  }
}
