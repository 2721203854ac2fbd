import { Type, type TSchema } from 'typebox';

/** Shared schema pieces: one definition serves validation, types and the OpenAPI document. */
export const DateTime = Type.String({ format: 'date-time' });
export const NullableDateTime = Type.Union([DateTime, Type.Null()]);
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/**
 * A string enum as one JSON-schema `enum` (not an anyOf of constants), so an invalid
 * value fails on the enum itself and its `x-error` message is the one sent.
 */
export const StringEnum = <const T extends readonly string[]>(values: T, opts: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts });

export const ErrorBody = Type.Object({ error: Type.String() }, { description: 'Every error: `{error: string}`.' });

/** Any string: an id we never issued (not a UUID, too long) is simply not found (404). */
export const IdParams = Type.Object({ id: Type.String() });

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, 'x-error': 'limit must be an integer between 1 and 100' }),
  offset: Type.Integer({ minimum: 0, maximum: 10000, default: 0, 'x-error': 'offset must be an integer between 0 and 10000' }),
};

export const ListOf = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });

/** Standard error responses documented for authenticated routes. */
export const authErrors = {
  401: ErrorBody,
  403: ErrorBody,
  429: Type.Object({ error: Type.Literal('rate_limit_exceeded'), retry_after: Type.Integer() }),
};
