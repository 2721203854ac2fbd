/**
 * Idempotency keys for creates (spec "Transactions": `Idempotency-Key`, optional, generated
 * by the service when absent). The SDK generates it itself, before the first attempt, so
 * every retry of one call carries the same key and the service answers the first
 * attempt's transaction instead of creating a second one. A key the caller passes wins.
 * Which operations take a key is read from the OpenAPI document at generation time.
 */
import { IDEMPOTENT_OPERATIONS, REPEATABLE_OPERATIONS } from './generated/idempotent.gen.js';

/** Whether the operation (method and path template, e.g. `/v1/transactions`) takes a key. */
export const takesIdempotencyKey = (method: string, pathTemplate: string): boolean =>
  IDEMPOTENT_OPERATIONS.some((op) => op.method === method.toUpperCase() && op.path === pathTemplate);

/**
 * Whether the operation answers the same when repeated without a key (the document's
 * `x-repeatable`: a cancel answers the first cancellation), so a 5xx or a timeout may be retried.
 */
export const isRepeatableOperation = (method: string, pathTemplate: string): boolean =>
  REPEATABLE_OPERATIONS.some((op) => op.method === method.toUpperCase() && op.path === pathTemplate);

export const newIdempotencyKey = (): string => globalThis.crypto.randomUUID();
