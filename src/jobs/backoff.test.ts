import { describe, expect, it } from 'vitest';
import { CLOUD_BACKOFF, EMBEDDED_BACKOFF, retryDelayMs } from './backoff.ts';

describe('retryDelayMs', () => {
  it('doubles from the base and stops at the cap', () => {
    const mid = () => 0.5; // no jitter
    expect([1, 2, 3, 4].map((a) => retryDelayMs(a, CLOUD_BACKOFF, mid))).toEqual([2000, 4000, 8000, 16000]);
    expect(retryDelayMs(12, CLOUD_BACKOFF, mid)).toBe(3_600_000);
    expect(retryDelayMs(50, CLOUD_BACKOFF, mid)).toBe(3_600_000);
    expect(retryDelayMs(50, EMBEDDED_BACKOFF, mid)).toBe(21_600_000);
  });

  it('jitters by at most ±10 %', () => {
    expect(retryDelayMs(3, CLOUD_BACKOFF, () => 0)).toBe(7200);
    expect(retryDelayMs(3, CLOUD_BACKOFF, () => 0.999999)).toBe(8800);
    for (let i = 0; i < 1000; i++) {
      const d = retryDelayMs(5, CLOUD_BACKOFF);
      expect(d).toBeGreaterThanOrEqual(28800);
      expect(d).toBeLessThanOrEqual(35200);
    }
  });
});
