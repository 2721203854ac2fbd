import type { ManualClock } from '../../src/core/clock.ts';
import { startFakeAeatVerifactu, type FakeAeatVerifactu } from './fake-aeat-verifactu.ts';
import { startTestApp, type TestApp, type TestAppOptions } from './harness.ts';
import { freshNif, uploadSpainCertificate } from './spain.ts';

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
