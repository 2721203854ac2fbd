import { isUuid } from '../../core/ids.ts';
import type { Queryable } from '../db.ts';
import { isoText } from './json-rows.ts';

/** A webhook subscription as stored; `secret` is sealed (see services/webhooks.ts). */
export interface WebhookRow {
  id: string;
  account_id: string;
  url: string;
  secret: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'dead' | 'cancelled';

export interface DeliveryRow {
  id: string;
  subscription_id: string;
  account_id: string;
  event_id: string;
  event_type: string;
  payload: Record<string, unknown>;
  job_id: string | null;
  status: DeliveryStatus;
  attempt: number;
  max_attempts: number;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  updated_at: Date;
  delivered_at: Date | null;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  outcome: 'succeeded' | 'failed';
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  duration_ms: number;
  attempted_at: Date;
}

export interface EventRow {
  id: string;
  account_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
}

/** jsonb arrives parsed from both drivers; tolerate text anyway. */
const json = <T>(v: unknown): T => (typeof v === 'string' ? JSON.parse(v) : v) as T;
export const webhookOf = (r: WebhookRow): WebhookRow => ({ ...r, events: json<string[]>(r.events) });
const deliveryOf = (r: DeliveryRow): DeliveryRow => ({ ...r, payload: json<Record<string, unknown>>(r.payload) });

/** Columns a PATCH may change (column names are never taken from input). */
const UPDATABLE = new Set(['url', 'events', 'description', 'enabled']);

export const webhooksRepo = {
  async insert(q: Queryable, w: Omit<WebhookRow, 'deleted_at'>): Promise<void> {
    await q.query(
      `INSERT INTO webhook_subscriptions (id, account_id, url, secret, events, description, enabled, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [w.id, w.account_id, w.url, w.secret, JSON.stringify(w.events), w.description, w.enabled, w.created_at, w.updated_at],
    );
  },

  /** A subscription of this account that is not deleted; anything else is not found. */
  async get(q: Queryable, accountId: string, id: string): Promise<WebhookRow | undefined> {
    if (!isUuid(id)) return undefined;
    const row = (await q.query<WebhookRow>(
      'SELECT * FROM webhook_subscriptions WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL', [accountId, id],
    )).rows[0];
    return row && webhookOf(row);
  },

  /** By id alone, deleted ones included (the delivery task decides what a deleted one means). */
  async getAny(q: Queryable, id: string): Promise<WebhookRow | undefined> {
    if (!isUuid(id)) return undefined;
    const row = (await q.query<WebhookRow>('SELECT * FROM webhook_subscriptions WHERE id = $1', [id])).rows[0];
    return row && webhookOf(row);
  },

  async list(q: Queryable, accountId: string): Promise<WebhookRow[]> {
    const res = await q.query<WebhookRow>(
      'SELECT * FROM webhook_subscriptions WHERE account_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC', [accountId],
    );
    return res.rows.map(webhookOf);
  },

  async countLive(q: Queryable, accountId: string): Promise<number> {
    const res = await q.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM webhook_subscriptions WHERE account_id = $1 AND deleted_at IS NULL', [accountId],
    );
    return res.rows[0]?.n ?? 0;
  },

  /** Enabled, not deleted subscriptions of the account that asked for any of `types`. */
  async matching(q: Queryable, accountId: string, types: readonly string[]): Promise<WebhookRow[]> {
    const res = await q.query<WebhookRow>(
      `SELECT * FROM webhook_subscriptions
       WHERE account_id = $1 AND enabled AND deleted_at IS NULL AND events ?| $2::text[]
       ORDER BY created_at, id`,
      [accountId, [...types]],
    );
    return res.rows.map(webhookOf);
  },

  async update(
    q: Queryable,
    accountId: string,
    id: string,
    patch: Partial<Pick<WebhookRow, 'url' | 'events' | 'description' | 'enabled'>>,
    at: Date,
  ): Promise<WebhookRow | undefined> {
    if (!isUuid(id)) return undefined;
    const sets: string[] = [];
    const params: unknown[] = [accountId, id, at];
    for (const [col, value] of Object.entries(patch)) {
      if (value === undefined || !UPDATABLE.has(col)) continue;
      params.push(col === 'events' ? JSON.stringify(value) : value);
      sets.push(`${col} = $${params.length}`);
    }
    const res = await q.query<WebhookRow>(
      `UPDATE webhook_subscriptions SET ${[...sets, 'updated_at = $3'].join(', ')}
       WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL RETURNING *`,
      params,
    );
    return res.rows[0] && webhookOf(res.rows[0]);
  },

  async setSecret(q: Queryable, accountId: string, id: string, sealedSecret: string, at: Date): Promise<boolean> {
    if (!isUuid(id)) return false;
    const res = await q.query(
      'UPDATE webhook_subscriptions SET secret = $3, updated_at = $4 WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL',
      [accountId, id, sealedSecret, at],
    );
    return res.rowCount === 1;
  },

  async softDelete(q: Queryable, accountId: string, id: string, at: Date): Promise<boolean> {
    if (!isUuid(id)) return false;
    const res = await q.query(
      'UPDATE webhook_subscriptions SET deleted_at = $3, updated_at = $3 WHERE account_id = $1 AND id = $2 AND deleted_at IS NULL',
      [accountId, id, at],
    );
    return res.rowCount === 1;
  },
};

/** Events to record in one statement, and the type names (both vocabularies) subscriptions are matched on. */
export interface EventBatch {
  rows: readonly EventRow[];
  types: readonly string[];
}

/**
 * The SQL of a batch of events: `insert` (a statement for a WITH clause) and `match` (the
 * query of the enabled subscriptions of their accounts that want any of the types), with
 * parameters added through `param`. Shared by insertManyAndMatch and the create's batch
 * statement (transactions-repo), which records its events in its own round trip.
 */
export function eventsInsertAndMatch(batch: EventBatch, param: (v: unknown) => string): { insert: string; match: string } {
  return eventsSqlFromJson(eventRowsJson(batch), param);
}

/** A batch of events as `eventsSqlFromJson` takes it: the rows' JSON, their accounts, the types matched on. */
export interface RenderedEvents {
  json: string;
  accounts: readonly string[];
  types: readonly string[];
}

export function eventRowsJson(batch: EventBatch): RenderedEvents {
  // One JSON parameter for every row (see store/repos/job-rows.ts): the text does not vary with the count.
  return {
    json: JSON.stringify(batch.rows.map((e) => ({ id: e.id, account_id: e.account_id, type: e.type, data: e.data, created_at: isoText(e.created_at) }))),
    accounts: [...new Set(batch.rows.map((e) => e.account_id))],
    types: [...batch.types],
  };
}

/** The INSERT of the events whose JSON array (`eventRowsJson`) is the parameter `json` (also the ledger's batch statement). */
export function eventsInsertFromJson(json: string): string {
  return `INSERT INTO events (id, account_id, type, data, created_at)
       SELECT id, account_id, type, data, created_at FROM json_populate_recordset(NULL::events, ${json}::json)`;
}

/** `eventsInsertAndMatch` of events already rendered. */
export function eventsSqlFromJson(events: RenderedEvents, param: (v: unknown) => string): { insert: string; match: string } {
  const rows = param(events.json);
  const accounts = param([...events.accounts]);
  const wanted = param([...events.types]);
  return {
    insert: eventsInsertFromJson(rows),
    match: `SELECT * FROM webhook_subscriptions
       WHERE account_id = ANY(${accounts}::uuid[]) AND enabled AND deleted_at IS NULL AND events ?| ${wanted}::text[]
       ORDER BY created_at, id`,
  };
}

export const eventsRepo = {
  /**
   * Records an event and returns the subscriptions it goes to, in one round trip (this
   * runs inside every transaction-creating request): enabled, not deleted subscriptions
   * of the account that asked for any of `types`.
   */
  async insertAndMatch(q: Queryable, e: EventRow, types: readonly string[]): Promise<WebhookRow[]> {
    const res = await q.query<WebhookRow>(
      `WITH ins AS (INSERT INTO events (id, account_id, type, data, created_at) VALUES ($1, $2, $3, $4, $5))
       SELECT * FROM webhook_subscriptions
       WHERE account_id = $2 AND enabled AND deleted_at IS NULL AND events ?| $6::text[]
       ORDER BY created_at, id`,
      [e.id, e.account_id, e.type, JSON.stringify(e.data), e.created_at, [...types]],
    );
    return res.rows.map(webhookOf);
  },

  /**
   * Several events in one statement, and the subscriptions of their accounts that want
   * any of `types` (a batch of creates: services/transactions.ts).
   */
  async insertManyAndMatch(q: Queryable, events: readonly EventRow[], types: readonly string[]): Promise<WebhookRow[]> {
    const values: unknown[] = [];
    const sql = eventsInsertAndMatch({ rows: events, types }, (v) => `$${values.push(v)}`);
    const res = await q.query<WebhookRow>(`WITH ins AS (${sql.insert}) ${sql.match}`, values);
    return res.rows.map(webhookOf);
  },

  async insert(q: Queryable, e: EventRow): Promise<void> {
    await q.query(
      'INSERT INTO events (id, account_id, type, data, created_at) VALUES ($1, $2, $3, $4, $5)',
      [e.id, e.account_id, e.type, JSON.stringify(e.data), e.created_at],
    );
  },

  /** Several by id, in time order (the fan-out job). */
  async getByIds(q: Queryable, ids: readonly string[]): Promise<EventRow[]> {
    if (ids.length === 0) return [];
    const res = await q.query<EventRow>('SELECT * FROM events WHERE id = ANY($1::uuid[]) ORDER BY created_at, id', [[...ids]]);
    return res.rows.map((r) => ({ ...r, data: json<Record<string, unknown>>(r.data) }));
  },

  async listForAccount(q: Queryable, accountId: string, type?: string): Promise<EventRow[]> {
    const res = type
      ? await q.query<EventRow>('SELECT * FROM events WHERE account_id = $1 AND type = $2 ORDER BY created_at, id', [accountId, type])
      : await q.query<EventRow>('SELECT * FROM events WHERE account_id = $1 ORDER BY created_at, id', [accountId]);
    return res.rows.map((r) => ({ ...r, data: json<Record<string, unknown>>(r.data) }));
  },
};

export interface DeliveryFilter {
  status?: DeliveryStatus | undefined;
}

const DELIVERY_COLUMNS = 'id, subscription_id, account_id, event_id, event_type, payload, job_id, status, attempt, max_attempts, next_attempt_at, created_at, updated_at';

/**
 * The INSERT of the deliveries whose JSON array (`JSON.stringify` of DeliveryRows) is the
 * parameter `json`: `insertMany`, and the create's batch statement (transactions-repo).
 */
export function deliveriesInsertFromJson(json: string): string {
  return `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS})
         SELECT ${DELIVERY_COLUMNS} FROM json_populate_recordset(NULL::webhook_deliveries, ${json}::json)`;
}

export const webhookDeliveriesRepo = {
  /** Several deliveries in one statement (their jobs are written first: `job_id`). */
  async insertMany(q: Queryable, rows: readonly DeliveryRow[]): Promise<void> {
    if (rows.length === 0) return;
    await q.query(deliveriesInsertFromJson('$1'), [JSON.stringify(rows)]);
  },

  /** By id alone (the delivery task; callers facing a client scope by subscription). */
  async get(q: Queryable, id: string): Promise<DeliveryRow | undefined> {
    if (!isUuid(id)) return undefined;
    const row = (await q.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1', [id])).rows[0];
    return row && deliveryOf(row);
  },

  async listForSubscription(
    q: Queryable, accountId: string, subscriptionId: string, f: DeliveryFilter, limit: number, offset: number,
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    const params: unknown[] = [accountId, subscriptionId];
    let where = 'account_id = $1 AND subscription_id = $2';
    if (f.status) {
      params.push(f.status);
      where += ` AND status = $${params.length}`;
    }
    const [rows, count] = await Promise.all([
      q.query<DeliveryRow>(
        `SELECT * FROM webhook_deliveries WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, limit, offset],
      ),
      q.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE ${where}`, params),
    ]);
    return { rows: rows.rows.map(deliveryOf), total: count.rows[0]?.n ?? 0 };
  },

  async attemptsOf(q: Queryable, deliveryIds: readonly string[]): Promise<AttemptRow[]> {
    if (deliveryIds.length === 0) return [];
    const res = await q.query<AttemptRow>(
      'SELECT * FROM webhook_delivery_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY delivery_id, attempt', [[...deliveryIds]],
    );
    return res.rows;
  },

  /** Records one attempt and the delivery's new state (inside the job's commit). */
  async recordAttempt(
    q: Queryable,
    a: AttemptRow,
    next: { status: DeliveryStatus; nextAttemptAt: Date | null; deliveredAt: Date | null; at: Date },
  ): Promise<void> {
    await q.query(
      `INSERT INTO webhook_delivery_attempts (delivery_id, attempt, outcome, response_status, response_body, error, duration_ms, attempted_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [a.delivery_id, a.attempt, a.outcome, a.response_status, a.response_body, a.error, a.duration_ms, a.attempted_at],
    );
    await q.query(
      `UPDATE webhook_deliveries SET status = $2, attempt = $3, response_status = $4, response_body = $5, error = $6, duration_ms = $7,
              next_attempt_at = $8, delivered_at = COALESCE($9, delivered_at), updated_at = $10
       WHERE id = $1`,
      [a.delivery_id, next.status, a.attempt, a.response_status, a.response_body, a.error, a.duration_ms, next.nextAttemptAt,
        next.deliveredAt, next.at],
    );
  },

  /** Ends a delivery without an attempt (its subscription was deleted or disabled). */
  async cancel(q: Queryable, id: string, reason: string, at: Date): Promise<void> {
    await q.query(
      "UPDATE webhook_deliveries SET status = 'cancelled', error = $2, next_attempt_at = NULL, updated_at = $3 WHERE id = $1",
      [id, reason, at],
    );
  },
};
