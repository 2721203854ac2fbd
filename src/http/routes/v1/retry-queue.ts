import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { JobStatus } from '../../../store/repos/jobs-repo.ts';
import type { createRetryQueueService } from '../../../services/retry-queue.ts';
import { authOf } from '../../hooks/auth.ts';
import { StringEnum, authErrors, DateTime, ErrorBody, ListOf, NullableDateTime, PageQuery } from '../../schemas.ts';

const ENTRY_STATUSES = ['pending', 'processing', 'completed', 'failed', 'dead'] as const;

const EntrySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  transaction_id: Type.Union([Type.String(), Type.Null()]),
  account_id: Type.Union([Type.String(), Type.Null()]),
  status: StringEnum(ENTRY_STATUSES),
  attempt: Type.Integer(),
  max_attempts: Type.Integer(),
  next_retry_at: NullableDateTime,
  last_error: Type.Union([Type.String(), Type.Null()]),
  webhook_url: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTime,
  updated_at: DateTime,
});

export function retryQueueRoutes(app: FastifyInstance, s: { retryQueue: ReturnType<typeof createRetryQueueService> }) {
  const security = [{ bearer: [] }];
  const tags = ['retry queue'];
  app.get('/v1/retry-queue', {
    config: { permission: 'retry_queue:read' },
    schema: {
      tags, security, summary: 'Submission entries, newest first',
      querystring: Type.Object({ ...PageQuery, status: Type.Optional(StringEnum(ENTRY_STATUSES, { 'x-error': 'status must be one of pending, processing, completed, failed, dead' })) }),
      response: { 200: ListOf(EntrySchema), 400: ErrorBody, ...authErrors },
    },
  }, async (req) => {
    const q = req.query as { limit: number; offset: number; status?: JobStatus };
    return s.retryQueue.list(authOf(req), q.status, { limit: q.limit, offset: q.offset });
  });

  app.get('/v1/retry-queue/stats', {
    config: { permission: 'retry_queue:read' },
    schema: {
      tags, security, summary: 'Entry counts by status: the entries waiting or running now (pending, processing, failed), and those completed or dead in the last 24 hours',
      response: { 200: Type.Object({ pending: Type.Integer(), processing: Type.Integer(), completed: Type.Integer(), failed: Type.Integer(), dead: Type.Integer(), total: Type.Integer() }), ...authErrors },
    },
  }, async (req) => s.retryQueue.stats(authOf(req)));
}
