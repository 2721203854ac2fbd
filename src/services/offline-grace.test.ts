import { describe, expect, it } from 'vitest';
import { myData } from '../countries/gr-mydata/index.ts';
import { verifactu } from '../countries/es-verifactu/index.ts';
import { graceTierOf, longestOfflineGraceSeconds, offlineGraceSeconds } from './offline-grace.ts';

const DAY = 86_400;

describe('offline grace by tier', () => {
  it("Greece: the plug-in's default for sandbox, starter and an unknown tier; the longer tiers their own", () => {
    const caps = myData.capabilities;
    expect([undefined, 'sandbox', 'starter', 'growth', 'scale', 'enterprise'].map((tier) => offlineGraceSeconds(caps, tier as never)))
      .toEqual([7 * DAY, 7 * DAY, 7 * DAY, 14 * DAY, 21 * DAY, 30 * DAY]);
    expect(longestOfflineGraceSeconds(caps)).toBe(30 * DAY);
  });

  it('a system without offline grace has none, whatever the tier', () => {
    expect(offlineGraceSeconds(verifactu.capabilities, 'enterprise')).toBeUndefined();
    expect(longestOfflineGraceSeconds(verifactu.capabilities)).toBeUndefined();
  });

  it('a table alone does not make a window: the default is what declares one', () => {
    const caps = { ...verifactu.capabilities, offlineGraceByTier: { enterprise: 30 * DAY } };
    expect(offlineGraceSeconds(caps, 'enterprise')).toBeUndefined();
    expect(longestOfflineGraceSeconds(caps)).toBeUndefined();
  });

  it('test records are the sandbox tier without asking; live ones ask AccountTiers; none without it', async () => {
    const tiers = { of: async () => ({ tier: 'growth' as const, merchantCount: 11, source: 'subscription' as const }) };
    expect(await graceTierOf({ account_id: 'a', environment: 'test' }, tiers)).toBe('sandbox');
    expect(await graceTierOf({ account_id: 'a', environment: 'live' }, tiers)).toBe('growth');
    expect(await graceTierOf({ account_id: 'a', environment: 'live' })).toBeUndefined();
  });
});
