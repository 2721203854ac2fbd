import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../../store/db.ts';
import { healthRepo } from '../../store/repos/health-repo.ts';
import { ErrorBody } from '../schemas.ts';

export const API_VERSION = '1.0.0';

export function publicRoutes(app: FastifyInstance, opts: { db: Db; serviceVersion: string }) {
  app.get('/health', {
    config: { public: true },
    schema: {
      tags: ['service'], summary: 'Liveness and database reachability',
      response: { 200: Type.Object({ status: Type.Literal('ok'), store: Type.String(), database: Type.Literal('ok') }), 503: ErrorBody },
    },
  }, async () => {
    await healthRepo.ping(opts.db); // unreachable → DbUnavailableError → 503 with Retry-After
    return { status: 'ok' as const, store: opts.db.kind, database: 'ok' as const };
  });

  app.get('/version', {
    config: { public: true },
    schema: {
      tags: ['service'], summary: 'Service and interface versions',
      response: { 200: Type.Object({ version: Type.String(), api_version: Type.String(), node: Type.String() }) },
    },
  }, async () => ({ version: opts.serviceVersion, api_version: API_VERSION, node: process.version }));
}
