/**
 * The core's `AuthorityPacing` (countries/types.ts): the authorities' wait-before-sending
 * times in the database (store/repos/authority-pacing-repo.ts), so every worker process
 * and node sharing the store honours a wait that any one of them was given. No cache: one
 * primary-key read per submission keeps it right across processes at no real cost.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { AuthorityPacing } from '../countries/types.ts';
import type { Queryable } from '../store/db.ts';
import { authorityPacingRepo } from '../store/repos/authority-pacing-repo.ts';

export function createAuthorityPacing(db: Queryable, log: Pick<FastifyBaseLogger, 'warn'>): AuthorityPacing {
  return {
    notBefore: (key) => authorityPacingRepo.notBefore(db, key),
    async hold(key, until) {
      // Called after the authority answered: a failure to remember the wait must not lose
      // that answer (the records it registered). The worst case is a request sent before
      // the wait is over, as any worker but the one told could do before the memory was shared.
      try {
        await authorityPacingRepo.hold(db, key, until);
      } catch (err) {
        log.warn({ err, key, until }, 'could not record the authority\'s wait before the next submission');
      }
    },
  };
}
