import { describe, expect, it } from 'vitest';
import { MIN_BATCH_VOLUME, NO_BASELINE_THRESHOLD, detectAnomalies, spikeThreshold } from './anomalies.ts';
import type { Point } from './types.ts';

const T0 = Date.parse('2026-03-10T12:00:00Z');
const p = (min: number, over: Partial<Point> = {}): Point => ({
  ts: new Date(T0 + min * 60_000), transactions_total: 10, transactions_failed: 0, queue_pending: 0, queue_dead: 0,
  storage_used_bytes: 10, storage_total_bytes: 100, adapter_versions: {}, ...over,
});
const none = { transactions_total: 0, transactions_failed: 0 };
const types = (a: { type: string }[]) => a.map((x) => x.type);

describe('spikeThreshold', () => {
  it('three times the baseline, at least +10 points, at most halfway to 100 %', () => {
    expect(spikeThreshold(0)).toBeCloseTo(0.1);
    expect(spikeThreshold(0.02)).toBeCloseTo(0.12);
    expect(spikeThreshold(0.1)).toBeCloseTo(0.3);
    expect(spikeThreshold(0.5)).toBeCloseTo(0.75);
  });
});

describe('detectAnomalies', () => {
  it('nothing for a quiet batch or an empty one', () => {
    expect(detectAnomalies([], null, none)).toEqual([]);
    expect(detectAnomalies([p(0), p(1)], null, none)).toEqual([]);
  });

  it('error rate: needs volume; no baseline → the fixed threshold; with one → relative', () => {
    const half = MIN_BATCH_VOLUME / 2;
    expect(detectAnomalies([p(0, { transactions_total: half - 1, transactions_failed: half - 1 })], null, none)).toEqual([]);
    const rate = NO_BASELINE_THRESHOLD + 0.05;
    const spike = detectAnomalies([p(0, { transactions_total: 100, transactions_failed: Math.round(rate * 100) })], null, none);
    expect(types(spike)).toEqual(['error_rate_spike']);
    expect(spike[0]!.threshold).toBe(NO_BASELINE_THRESHOLD);
    // Same rate, but the agent usually fails 20 %: 30 % < 40 % → no alert.
    expect(detectAnomalies([p(0, { transactions_total: 100, transactions_failed: 30 })], null, { transactions_total: 1000, transactions_failed: 200 })).toEqual([]);
    // A tiny baseline does not count: the fixed threshold applies.
    expect(types(detectAnomalies([p(0, { transactions_total: 100, transactions_failed: 30 })], null, { transactions_total: 50, transactions_failed: 10 }))).toEqual(['error_rate_spike']);
  });

  it('dead entries and storage fire on the change, once per batch, only from newer points', () => {
    const prev = { last_seen_at: new Date(T0), queue_dead: 2, storage_used_bytes: 95, storage_total_bytes: 100 };
    // Already 95 % and 2 dead: the same again is nothing.
    expect(detectAnomalies([p(1, { queue_dead: 2, storage_used_bytes: 95 })], prev, none)).toEqual([]);
    // An older point with more dead entries does not count.
    expect(detectAnomalies([p(-5, { queue_dead: 9, storage_used_bytes: 95 })], prev, none)).toEqual([]);
    const a = detectAnomalies([p(1, { queue_dead: 3, storage_used_bytes: 95 }), p(2, { queue_dead: 5, storage_used_bytes: 95 })], prev, none);
    expect(a).toEqual([expect.objectContaining({ type: 'dead_queue_entries', value: 3, threshold: 2, observed_at: new Date(T0 + 60_000) })]);
    // Down to 50 % then up to 91 %: crossing again.
    const s = detectAnomalies([p(1, { queue_dead: 2, storage_used_bytes: 50 }), p(2, { queue_dead: 2, storage_used_bytes: 91 })], prev, none);
    expect(types(s)).toEqual(['storage_high']);
    // Exactly 90 % is not over 90 %; a zero total is no reading.
    expect(detectAnomalies([p(1, { storage_used_bytes: 90 }), p(2, { storage_used_bytes: 0, storage_total_bytes: 0 })], null, none)).toEqual([]);
  });

  it('each engine deadline alert is one alert', () => {
    const a = detectAnomalies([p(0, { deadline_alerts: [{ system: 'x', message: 'm1' }, { system: 'y', message: 'm2', due_at: '2026-03-11T00:00:00Z' }] })], null, none);
    expect(a.map((x) => x.message)).toEqual(['x: m1', 'y: m2 (due 2026-03-11T00:00:00.000Z)']);
  });
});
