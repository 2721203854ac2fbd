/**
 * A telemetry data point as an engine sends it (DECISIONS "Fleet, tokens, embedded
 * engine"). Counters (`transactions_*`) count what happened since the agent's previous
 * data point; gauges (`queue_*`, `storage_*`, `adapter_versions`) are the state at
 * `timestamp`. `deadline_alerts` is our addition (docs/decisions.md "Fleet telemetry"):
 * the data point of DECISIONS has no field for the deadline warnings an engine raises
 * (e.g. a record close to its legal submission deadline), so they travel here.
 */
export interface DataPoint {
  timestamp: string;
  transactions_total: number;
  transactions_failed: number;
  queue_pending: number;
  queue_dead: number;
  storage_used_bytes: number;
  storage_total_bytes: number;
  adapter_versions: Record<string, string>;
  deadline_alerts?: DeadlineAlert[];
}

export interface DeadlineAlert {
  system: string;
  message: string;
  due_at?: string;
}

/** A point after validation, its time parsed. */
export interface Point extends Omit<DataPoint, 'timestamp'> {
  ts: Date;
}

export const ALERT_TYPES = ['error_rate_spike', 'dead_queue_entries', 'storage_high', 'deadline'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

export interface Alert {
  type: AlertType;
  message: string;
  value: number | null;
  threshold: number | null;
  observed_at: Date;
}

/** What the service knew of the agent before this batch (its latest gauges). */
export interface AgentState {
  last_seen_at: Date;
  queue_dead: number;
  storage_used_bytes: number;
  storage_total_bytes: number;
}

/** The agent's own error history: sums over its recent hours before this batch. */
export interface Baseline {
  transactions_total: number;
  transactions_failed: number;
}

export const RANGES = ['1h', '6h', '24h', '7d', '30d'] as const;
export type Range = (typeof RANGES)[number];
