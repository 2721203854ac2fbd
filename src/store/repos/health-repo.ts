import type { Queryable } from '../db.ts';

export const healthRepo = {
  /** One round trip to the database: throws (DbUnavailableError) when it is unreachable. */
  async ping(q: Queryable): Promise<void> {
    await q.query('SELECT 1');
  },
};
