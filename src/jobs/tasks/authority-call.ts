/**
 * What every job that sends a record to an authority does the same way (jobs/tasks/submit.ts
 * for records and batches, jobs/tasks/submit-correction.ts for corrections): the submit
 * context of an attempt, and the call bounded by its timeout.
 */
import { TransportError, type FiscalSystem, type SubmitContext } from '../../countries/types.ts';
import { ApiError } from '../../core/errors.ts';
import type { SigningKey } from '../../core/signing-key.ts';
import type { LocationRow } from '../../store/repos/locations-repo.ts';
import type { TransactionRow } from '../../store/repos/transactions-repo.ts';
import type { SubmitTaskDeps } from './submit.ts';

/** A failure before or instead of an answer: no certificate any more, a transport fault (retriable). */
export interface CallFailure {
  code: string;
  message: string;
  retriable: boolean;
}

type ContextDeps = Pick<SubmitTaskDeps, 'clock' | 'locations' | 'signingKeys' | 'timeoutMs' | 'authorityBaseUrls' | 'authorityCa' | 'pacing'>;

/** The submit context of an attempt, or the failure that prevents one (the location lost its certificate). */
export async function submitContextOf(
  deps: ContextDeps, system: FiscalSystem, t: Pick<TransactionRow, 'environment' | 'sandbox_mode'>, locRow: LocationRow, attempt: number,
): Promise<SubmitContext | CallFailure> {
  const inlineMs = (system.capabilities.inlineWindowSeconds ?? 0) * 1000;
  const timeoutMs = inlineMs || (deps.timeoutMs ?? 30_000);
  const location = deps.locations.toFiscal(locRow);
  const mode = t.sandbox_mode ?? 'stub';
  let clientKey: SigningKey | undefined;
  // A system whose locations name no certificate authenticates otherwise (myDATA: header keys).
  if (mode === 'authority' && system.certificateFields.length > 0) {
    try {
      clientKey = await deps.signingKeys.forAuthority(location);
    } catch (err) {
      // The location lost its certificate after the record was stored: nothing to retry with.
      if (err instanceof ApiError) return { code: 'certificate_missing', message: err.message, retriable: false };
      throw err;
    }
  }
  return {
    environment: t.environment, mode, location, now: deps.clock.now(),
    authorityBaseUrl: deps.authorityBaseUrls?.[`${system.key}:${t.environment}`], timeoutMs, attempt,
    clientKey, authorityCa: deps.authorityCa, pacing: deps.pacing,
  };
}

/** Runs an authority call within the context's timeout; a transport fault becomes a retriable failure. */
export async function boundedCall<T>(ctx: SubmitContext, call: () => Promise<T>): Promise<T | CallFailure> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      call(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TransportError('timeout', `no answer from the authority within ${ctx.timeoutMs / 1000} s`)), ctx.timeoutMs);
      }),
    ]);
  } catch (err) {
    if (err instanceof TransportError) return { code: err.code, message: err.message, retriable: true };
    throw err; // a bug, not an authority answer: the runner logs it and retries
  } finally {
    clearTimeout(timer);
  }
}
