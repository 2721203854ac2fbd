import { badRequest } from '../core/errors.ts';

export interface Page {
  limit: number;
  offset: number;
}

export interface ListResult<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
}

export const MAX_LIMIT = 100;
export const MAX_OFFSET = 10_000;

/** The spec's list limits: limit 1-100 (default 20), offset 0-10000. */
export function parsePage(query: { limit?: unknown; offset?: unknown }): Page {
  const limit = query.limit === undefined || query.limit === '' ? 20 : Number(query.limit);
  const offset = query.offset === undefined || query.offset === '' ? 0 : Number(query.offset);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw badRequest('limit must be an integer between 1 and 100');
  if (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET) throw badRequest('offset must be an integer between 0 and 10000');
  return { limit, offset };
}
