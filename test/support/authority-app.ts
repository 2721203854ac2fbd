import type { ManualClock } from '../../src/core/clock.ts';
import { startFakeAeatVerifactu, type FakeAeatVerifactu } from './fake-aeat-verifactu.ts';
import { startTestApp, type TestApp, type TestAppOptions } from './harness.ts';
import { freshNif, uploadSpainCertificate } from './spain.ts';

/** A fake authority server on 127.0.0.1 (test/support/fake-aeat-*.ts): its base URL and CA. */
interface FakeAuthority {
  url: string;
  caPem: string;
  close(): Promise<unknown>;
}

/**
 * A test app whose `<system>` test authority is a fake one on 127.0.0.1, trusted through
 * its own CA: the setup the authority API tests share. No jitter (`random` 0.5), so retry
 * times are exact. `close` closes both.
 */
export async function startAuthorityTestApp<F extends FakeAuthority>(
  clock: ManualClock, system: string, startFake: () => Promise<F>, opts: Omit<TestAppOptions, 'clock'> = {},
): Promise<{ t: TestApp; aeat: F; close(): Promise<void> }> {
  const aeat = await startFake();
  try {
    const t = await startTestApp({
      random: () => 0.5, ...opts, clock,
      config: { ...opts.config, authorityBaseUrls: { ...opts.config?.authorityBaseUrls, [`${system}:test`]: aeat.url }, authorityCa: aeat.caPem },
    });
    return { t, aeat, close: async () => { await t.close(); await aeat.close(); } };
  } catch (err) {
    await aeat.close();
    throw err;
  }
}

/** The same with the fake AEAT VERI*FACTU (fake-aeat-verifactu.ts). */
export const startVerifactuTestApp = (clock: ManualClock, opts: Omit<TestAppOptions, 'clock'> = {}): Promise<{ t: TestApp; aeat: FakeAeatVerifactu; close(): Promise<void> }> =>
  startAuthorityTestApp(clock, 'es-verifactu', startFakeAeatVerifactu, opts);

/**
 * A new account's VERI*FACTU location that can reach the (fake) authority: its own NIF, a
 * certificate for it uploaded, legal name "Ejemplo Madrid SL" unless `config` says otherwise.
 */
export async function verifactuAuthorityLocation(
  t: TestApp, config: Record<string, unknown> = {},
): Promise<{ key: string; nif: string; loc: string; config: Record<string, unknown> }> {
  const { key } = await t.signup();
  const nif = freshNif();
  const cert = await uploadSpainCertificate(t, key, nif);
  const full = { system: 'verifactu', legal_name: 'Ejemplo Madrid SL', software_nif: 'B12345674', ...config, certificate_id: cert.certificateId };
  const res = await t.request({
    method: 'POST', url: '/v1/locations', key,
    payload: { name: `Tienda ${nif}`, country: 'ES', address: 'Calle Mayor 1', tax_id: nif, country_config: full },
  });
  if (res.statusCode !== 201) throw new Error(`VERI*FACTU location: ${res.statusCode} ${res.body}`);
  return { key, nif, loc: res.json().id as string, config: full };
}
