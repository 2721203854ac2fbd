import type { AgentState, Alert, Baseline, Point } from './types.ts';

/**
 * Anomaly detection on an accepted batch: pure, so every rule is tested without a store.
 * Rules (DECISIONS "Fleet": error rate spike, dead entries, storage > 90 %, plus the
 * deadline alerts an engine reports). Each gauge rule fires on a change, not on every
 * batch while the condition lasts: an agent whose disk stays at 95 % is one alert, not
 * one a minute.
 */

/** Below this many transactions in a batch, an error rate says nothing (1 of 2 failed is not a spike). */
export const MIN_BATCH_VOLUME = 20;
/** The agent's baseline counts only with this many transactions behind it. */
export const MIN_BASELINE_VOLUME = 100;
/** Without a baseline (a new agent), this error rate alone is an alert. */
export const NO_BASELINE_THRESHOLD = 0.25;
/** How far back the baseline reaches. */
export const BASELINE_WINDOW_MS = 7 * 24 * 3600 * 1000;
export const STORAGE_THRESHOLD = 0.9;

/**
 * The error rate that makes a spike for an agent whose usual rate is `base`: three times
 * its usual rate and at least 10 points above it, but never beyond halfway to 100 % (an
 * agent that usually fails half its transactions still alerts at 75 %).
 */
export function spikeThreshold(base: number): number {
  return Math.min(Math.max(3 * base, base + 0.1), (1 + base) / 2);
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/**
 * `points`: the batch's newly stored points (a resent point is not seen twice), any order.
 * `prev`: the agent's state before the batch (null for a new agent).
 */
export function detectAnomalies(points: readonly Point[], prev: AgentState | null, baseline: Baseline): Alert[] {
  if (!points.length) return [];
  const sorted = [...points].sort((a, b) => a.ts.getTime() - b.ts.getTime());
  const alerts: Alert[] = [];
  const last = sorted[sorted.length - 1]!;

  // Error rate of the batch against the agent's own history.
  const total = sorted.reduce((n, p) => n + p.transactions_total, 0);
  const failed = sorted.reduce((n, p) => n + p.transactions_failed, 0);
  if (total >= MIN_BATCH_VOLUME) {
    const rate = failed / total;
    const hasBaseline = baseline.transactions_total >= MIN_BASELINE_VOLUME;
    const base = hasBaseline ? baseline.transactions_failed / baseline.transactions_total : null;
    const threshold = base === null ? NO_BASELINE_THRESHOLD : spikeThreshold(base);
    if (rate > threshold) {
      alerts.push({
        type: 'error_rate_spike',
        message: base === null
          ? `error rate ${pct(rate)} (${failed} of ${total}) with no baseline yet`
          : `error rate ${pct(rate)} (${failed} of ${total}) against a baseline of ${pct(base)}`,
        value: rate, threshold, observed_at: last.ts,
      });
    }
  }

  // Gauges: only points newer than what we knew (a late point does not rewind the state).
  const fresh = prev ? sorted.filter((p) => p.ts > prev.last_seen_at) : sorted;
  let dead = prev?.queue_dead ?? 0;
  let deadAlert: Alert | null = null;
  let ratio = prev && prev.storage_total_bytes > 0 ? prev.storage_used_bytes / prev.storage_total_bytes : 0;
  let storageAlert: Alert | null = null;
  for (const p of fresh) {
    if (p.queue_dead > dead && !deadAlert) {
      deadAlert = {
        type: 'dead_queue_entries',
        message: `${p.queue_dead} dead queue entries (was ${dead})`,
        value: p.queue_dead, threshold: dead, observed_at: p.ts,
      };
    }
    dead = p.queue_dead;
    const r = p.storage_total_bytes > 0 ? p.storage_used_bytes / p.storage_total_bytes : 0;
    if (r > STORAGE_THRESHOLD && ratio <= STORAGE_THRESHOLD && !storageAlert) {
      storageAlert = {
        type: 'storage_high',
        message: `storage ${pct(r)} used (${p.storage_used_bytes} of ${p.storage_total_bytes} bytes)`,
        value: r, threshold: STORAGE_THRESHOLD, observed_at: p.ts,
      };
    }
    ratio = r;
  }
  if (deadAlert) alerts.push(deadAlert);
  if (storageAlert) alerts.push(storageAlert);

  // Deadline warnings the engine reported, each its own alert.
  for (const p of sorted) {
    for (const d of p.deadline_alerts ?? []) {
      alerts.push({
        type: 'deadline',
        message: `${d.system}: ${d.message}${d.due_at ? ` (due ${new Date(d.due_at).toISOString()})` : ''}`,
        value: null, threshold: null, observed_at: p.ts,
      });
    }
  }
  return alerts;
}
