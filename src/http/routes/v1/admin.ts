import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../core/errors.ts';
import type { BatchService } from '../../../batch/service.ts';
import { statuses } from '../../../countries/registry.ts';
import { authOf } from '../../hooks/auth.ts';
import { DateTime, ErrorBody, Nullable, StringEnum, authErrors } from '../../schemas.ts';

/**
 * Batch processors (spec "Batch" endpoints, "Batch result"; DECISIONS "Batch").
 *
 * Permissions: `batch:write` (the one batch permission, DECISIONS "Keys, permissions")
 * runs the processors and reads their stats: both are operations of an account's batch
 * pipeline, and no read-only batch permission exists. The schedule is the same for every
 * account (when the service runs its processors), so any key may read it.
 */
const Counters = {
  processor: Type.String({ description: 'the processor\'s name, as GET /v1/batch/schedule lists it' }),
  batches_created: Type.Integer({ description: 'batches (one issuer, one kind) sent' }),
  batches_retried: Type.Integer({ description: 'of those, batches with records held back for the next run' }),
  accepted: Type.Integer({ description: 'records the authority holds (accepted or already registered): `success`' }),
  rejected: Type.Integer({ description: 'records the authority refused: `failed`, with `response_payload.submit_error`' }),
  failed: Type.Integer({ description: 'records not delivered (transport fault, retry later, configuration): back to `pending_batch`' }),
  failure_rate: Type.Number({ description: '(rejected + failed) / (accepted + rejected + failed); 0 when nothing was sent' }),
};

const BatchError = Type.Object({
  code: Type.String(),
  message: Type.String(),
  issuer_tax_id: Nullable(Type.String()),
  kind: Nullable(Type.String({ description: 'the kind of record the batch carried, for a processor that sends kinds apart' })),
  records: Type.Integer({ description: 'records the error held back' }),
});

const BatchResult = Type.Object({
  ...Counters,
  errors_count: Type.Integer(),
  duration_ms: Type.Integer(),
  alert_triggered: Type.Boolean({ description: 'failure_rate exceeded the alert threshold (default 0.2)' }),
  run_id: Type.String({ format: 'uuid' }),
  status: StringEnum(['completed', 'failed'] as const, { description: '`failed`: the processor stopped on an internal error' }),
  registration_numbers: Type.Array(Type.String(), { description: 'what the authority filed each request under (its registration number), when it answers with one' }),
  errors: Type.Array(BatchError),
}, { description: 'Batch result' });

const Results = Type.Object({ results: Type.Array(BatchResult) });

const StatsEntry = Type.Object({ ...Counters, since: DateTime });

const ScheduleEntry = Type.Object({
  processor: Type.String(),
  cron: Type.String({ description: 'five fields, in `timezone`' }),
  timezone: Type.String(),
  next_run_at: Type.Union([DateTime, Type.Null()], { description: 'null on the local host: no scheduler runs it (runs_on)' }),
  runs_on: StringEnum(['schedule', 'process_pending'], { description: 'process_pending: only POST /v1/admin/process-pending runs it (the local host)' }),
});

export function adminRoutes(app: FastifyInstance, s: { batch: BatchService; scheduled: boolean }) {
  const security = [{ bearer: [] }];
  const tags = ['batch'];

  app.post('/v1/admin/process-pending', {
    config: { permission: 'batch:write' },
    schema: {
      tags, security,
      summary: 'Run every registered batch processor now, in sequence, for this account',
      description:
        'Processes the records waiting for a batch (`pending_batch`), each system\'s through its processor, for the key\'s ' +
        'account and environment. 207 when some processors finished and others failed; 500 when none finished. Records ' +
        `take their system's in-batch status (${statuses.inBatch.map((s) => `\`${s}\``).join(', ')}) while their batch is in flight.`,
      response: { 200: Results, 207: Results, 500: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    const results = await s.batch.processPending(authOf(req));
    const failed = results.filter((r) => r.status === 'failed');
    if (results.length > 0 && failed.length === results.length) {
      throw new ApiError(500, `batch processing failed: ${failed.map((r) => r.processor).join(', ')}`);
    }
    return reply.code(failed.length > 0 ? 207 : 200).send({ results });
  });

  app.get('/v1/admin/batch-stats', {
    config: { permission: 'batch:write' },
    schema: {
      tags, security, summary: 'Batch counters per processor over the last 24 hours',
      response: { 200: Type.Object({ stats: Type.Array(StatsEntry) }), 500: ErrorBody, ...authErrors },
    },
  }, async (req) => ({ stats: await s.batch.stats(authOf(req)) }));

  app.get('/v1/batch/schedule', {
    schema: {
      tags, security, summary: 'Upcoming batch runs',
      response: { 200: Type.Object({ schedule: Type.Array(ScheduleEntry) }), 500: ErrorBody, ...authErrors },
    },
  }, async () => ({ schedule: s.batch.schedule(s.scheduled) }));
}
