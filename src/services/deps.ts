import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { Clock } from '../core/clock.ts';
import type { DerivedKeys } from '../crypto/master-key.ts';
import type { RateLimiter } from '../ratelimit/limiter.ts';
import type { Db } from '../store/db.ts';

/** What every service factory receives: no module singletons, everything injected. */
export interface Deps {
  db: Db;
  clock: Clock;
  keys: DerivedKeys;
  config: Pick<Config, 'liveEnabled' | 'mode'> & Partial<Pick<Config, 'webhookAllowInsecure'>>;
  limiter: RateLimiter;
  log: FastifyBaseLogger;
}
