import type { ManualClock } from '../../src/core/clock.ts';
import { startFakeAeatVerifactu, type FakeAeatVerifactu } from './fake-aeat-verifactu.ts';
import { startTestApp, type TestApp, type TestAppOptions } from './harness.ts';

/**
 * A test app whose VERI*FACTU test authority is the fake AEAT (fake-aeat-verifactu.ts) on
 * 127.0.0.1, trusted through its own CA: the setup the VERI*FACTU API tests share. No
 * jitter (`random` 0.5), so retry times are exact. `close` closes both.
 */
export async function startVerifactuTestApp(
  clock: ManualClock, opts: Omit<TestAppOptions, 'clock'> = {},
): Promise<{ t: TestApp; aeat: FakeAeatVerifactu; close(): Promise<void> }> {
  const aeat = await startFakeAeatVerifactu();
  try {
    const t = await startTestApp({
      random: () => 0.5, ...opts, clock,
      config: { ...opts.config, authorityBaseUrls: { ...opts.config?.authorityBaseUrls, 'es-verifactu:test': aeat.url }, authorityCa: aeat.caPem },
    });
    return { t, aeat, close: async () => { await t.close(); await aeat.close(); } };
  } catch (err) {
    await aeat.close();
    throw err;
  }
}
