import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { FleetService } from '../../../fleet/service.ts';
import { ALERT_TYPES, RANGES, type DataPoint, type Range } from '../../../fleet/types.ts';
import { authOf } from '../../hooks/auth.ts';
import { StringEnum, authErrors, DateTime, ErrorBody, Nullable } from '../../schemas.ts';

/** Spec Limits: a telemetry batch holds at most 100 data points. */
export const MAX_BATCH = 100;
const MAX_COUNT = Number.MAX_SAFE_INTEGER;
/**
 * Transactions counted between two readings of one agent: far above what a POS does, and
 * low enough that the account's hourly sums (bigint) cannot overflow (a point at 2^53 made
 * them, and every later point of the account in that hour, a 500).
 */
export const MAX_TRANSACTIONS_PER_POINT = 1_000_000_000;
const VERSIONS_ERROR = 'adapter_versions must be an object of system names (1-50 characters) to version strings (1-100 characters)';

const count = (field: string, description: string, max = MAX_COUNT) => Type.Integer({
  minimum: 0, maximum: max, description,
  'x-error-required': `${field} is required`,
  'x-error': max === MAX_COUNT ? `${field} must be a non-negative integer` : `${field} must be an integer from 0 to ${max}`,
});

const DataPointSchema = Type.Object({
  timestamp: Type.String({
    format: 'date-time', description: 'when the agent took the reading (RFC 3339); at most 5 minutes ahead of the server clock, and not before 2020',
    'x-error-required': 'timestamp is required', 'x-error': 'timestamp must be an RFC 3339 date-time',
  }),
  transactions_total: count('transactions_total', 'transactions processed since the previous data point', MAX_TRANSACTIONS_PER_POINT),
  transactions_failed: count('transactions_failed', 'of those, the failed ones (at most transactions_total)', MAX_TRANSACTIONS_PER_POINT),
  queue_pending: count('queue_pending', 'entries waiting in the local queue now'),
  queue_dead: count('queue_dead', 'dead entries in the local queue now (retries exhausted)'),
  storage_used_bytes: count('storage_used_bytes', 'local storage used now'),
  storage_total_bytes: count('storage_total_bytes', 'local storage available in all (at least storage_used_bytes)'),
  adapter_versions: Type.Record(Type.String({ minLength: 1, maxLength: 50, 'x-error': VERSIONS_ERROR }), Type.String({ minLength: 1, maxLength: 100, 'x-error': VERSIONS_ERROR }), {
    maxProperties: 50, propertyNames: { minLength: 1, maxLength: 50, 'x-error': VERSIONS_ERROR }, description: 'system → version of its adapter, e.g. {"<system key>": "1.4.2"}',
    'x-error-required': 'adapter_versions is required', 'x-error': VERSIONS_ERROR,
  }),
  deadline_alerts: Type.Optional(Type.Array(Type.Object({
    system: Type.String({ minLength: 1, maxLength: 50, 'x-error-required': 'deadline_alerts.system is required', 'x-error': 'deadline_alerts.system must be 1-50 characters' }),
    message: Type.String({ minLength: 1, maxLength: 500, 'x-error-required': 'deadline_alerts.message is required', 'x-error': 'deadline_alerts.message must be 1-500 characters' }),
    due_at: Type.Optional(Type.String({ format: 'date-time', 'x-error': 'deadline_alerts.due_at must be an RFC 3339 date-time' })),
  }, { 'x-error': 'deadline_alerts must be an array of objects' }), {
    maxItems: 20, 'x-error': 'deadline_alerts must be an array of at most 20 alerts',
    description: 'deadline warnings the engine raised (e.g. a record close to its legal submission deadline); each becomes a fleet alert',
  })),
}, { 'x-error': 'data_points must hold objects' });

const Body = Type.Object({
  data_points: Type.Array(DataPointSchema, {
    minItems: 1, maxItems: MAX_BATCH, description: `1 to ${MAX_BATCH} data points`,
    'x-error-required': 'data_points is required', 'x-error': `data_points must be an array of 1 to ${MAX_BATCH} data points`,
  }),
});

const AlertSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  agent_id: Type.String(),
  type: StringEnum(ALERT_TYPES),
  message: Type.String(),
  value: Nullable(Type.Number()),
  threshold: Nullable(Type.Number()),
  observed_at: DateTime,
  created_at: DateTime,
});

const MetricsSchema = Type.Object({
  account_id: Type.String({ format: 'uuid' }),
  environment: StringEnum(['test', 'live'], { description: "the calling key's environment: test and live agents are separate fleets" }),
  range: StringEnum(RANGES),
  from: DateTime,
  to: DateTime,
  bucket_seconds: Type.Integer({ description: 'width of a series bucket: 60 (1h), 3600 (6h, 24h), 21600 (7d), 86400 (30d)' }),
  agents: Type.Object({ total: Type.Integer({ description: 'agents ever seen' }), active: Type.Integer({ description: 'agents whose newest data point is in the range' }) }),
  transactions: Type.Object({ total: Type.Integer(), failed: Type.Integer(), error_rate: Type.Number({ description: 'failed / total; 0 without transactions' }) }),
  queue: Type.Object({ pending: Type.Integer(), dead: Type.Integer() }, { description: "sums of every agent's latest reading" }),
  storage: Type.Object({
    used_bytes: Type.Integer(), total_bytes: Type.Integer(), utilization: Type.Number(),
    agents_over_90_percent: Type.Integer(),
  }, { description: "sums of every agent's latest reading" }),
  alerts: Type.Object({
    total: Type.Integer(),
    by_type: Type.Record(Type.String(), Type.Integer()),
    recent: Type.Array(AlertSchema, { description: 'the newest 20 of the range' }),
  }),
  series: Type.Array(Type.Object({
    timestamp: DateTime, transactions_total: Type.Integer(), transactions_failed: Type.Integer(), error_rate: Type.Number(), agents: Type.Integer(),
  }), { description: 'every bucket of the range, oldest first, empty buckets as zeros' }),
});

export function fleetRoutes(app: FastifyInstance, s: { fleet: FleetService }) {
  const security = [{ bearer: [] }];
  const tags = ['fleet'];

  app.post('/v1/agents/:agent_id/telemetry', {
    config: { permission: 'fleet:write' },
    schema: {
      tags, security,
      summary: 'Report an embedded agent\'s telemetry',
      description: `A batch of 1 to ${MAX_BATCH} data points of one agent. Counters count since the previous data point; gauges are the state at the point's timestamp. `
        + 'A point already received (same agent and timestamp) is skipped. Anomaly detection runs on the accepted points before the answer: '
        + 'an error-rate spike against the agent\'s own 7-day baseline, new dead queue entries, storage crossing 90 %, and the deadline alerts the engine reports; '
        + 'each is stored as a fleet alert, shown by GET /v1/fleet/metrics.',
      params: Type.Object({ agent_id: Type.String({ minLength: 1, maxLength: 255, 'x-error': 'agent_id must be 1-255 characters' }) }),
      body: Body,
      response: {
        202: Type.Object({
          agent_id: Type.String(),
          accepted: Type.Integer({ description: 'points stored' }),
          duplicates: Type.Integer({ description: 'points skipped, already received' }),
          alerts: Type.Array(Type.Object({ id: Type.String({ format: 'uuid' }), type: StringEnum(ALERT_TYPES), message: Type.String(), observed_at: DateTime })),
        }),
        400: ErrorBody, ...authErrors,
      },
    },
  }, async (req, reply) => {
    const { agent_id } = req.params as { agent_id: string };
    const body = req.body as { data_points: DataPoint[] };
    const result = await s.fleet.ingest(authOf(req), agent_id, body.data_points);
    return reply.code(202).send(result);
  });

  app.get('/v1/fleet/metrics', {
    config: { permission: 'fleet:read' },
    schema: {
      tags, security,
      summary: 'Aggregated metrics of the account\'s fleet',
      description: 'Transaction totals, error rates, queue and storage of the agents, fleet alerts and a time series over the range. '
        + '`1h` reads the raw data points; the longer ranges read hourly sums (every hour that starts in the range). '
        + 'A series bucket\'s `agents`: distinct agents that reported in it (1h), the most that reported in one hour of it (longer ranges).',
      querystring: Type.Object({
        account_id: Type.Optional(Type.String({ format: 'uuid', description: "must be the caller's account (default)", 'x-error': 'account_id must be a uuid' })),
        range: StringEnum(RANGES, { default: '24h', 'x-error': 'invalid range' }),
      }),
      response: { 200: MetricsSchema, 400: ErrorBody, ...authErrors },
    },
  }, async (req) => {
    const q = req.query as { account_id?: string; range: Range };
    return s.fleet.metrics(authOf(req), q.account_id, q.range);
  });
}
