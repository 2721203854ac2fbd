import { describe, expect, it } from 'vitest';
import type { ProcessorDeps } from '../../../batch/types.ts';
import { nextRunAt } from '../../../batch/schedule.ts';
import { documentoCommerciale } from '../index.ts';
import { ITALY_CORRISPETTIVI, backoffMs, createCorrispettiviProcessor, startOfRomeToday } from './processor.ts';

describe('italy/corrispettivi', () => {
  it('is contributed by the Documento Commerciale plug-in, daily at 01:00 UTC: after Italian midnight in winter and summer', () => {
    const [p] = documentoCommerciale.processors!({} as ProcessorDeps);
    expect(p).toMatchObject({ name: ITALY_CORRISPETTIVI, country: 'IT', cron: '0 1 * * *' });
    expect(createCorrispettiviProcessor({} as ProcessorDeps).name).toBe('italy/corrispettivi');
    // 02:00 in Rome (CET) and 03:00 (CEST): the previous Italian day is closed at both.
    const winter = nextRunAt(p!.cron, new Date('2026-01-15T12:00:00Z'));
    const summer = nextRunAt(p!.cron, new Date('2026-07-15T12:00:00Z'));
    expect(startOfRomeToday(winter).getTime()).toBeLessThan(winter.getTime());
    expect(startOfRomeToday(summer).getTime()).toBeLessThan(summer.getTime());
    expect(startOfRomeToday(winter)).toEqual(new Date('2026-01-15T23:00:00Z'));
    expect(startOfRomeToday(summer)).toEqual(new Date('2026-07-15T22:00:00Z'));
  });

  it('backoff: 1 min doubling, at most 6 h', () => {
    expect([1, 2, 3, 4].map(backoffMs)).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(backoffMs(30)).toBe(6 * 3_600_000);
  });

  it('the plug-in offers the inspector file corrispettivi?date=', () => {
    expect(documentoCommerciale.locationFiles?.map((f) => [f.path, f.param])).toEqual([['corrispettivi', { name: 'date', kind: 'date' }]]);
  });
});
