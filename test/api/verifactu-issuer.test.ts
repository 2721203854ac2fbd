/**
 * The VERI*FACTU request's `Cabecera/ObligadoEmision/NombreRazon` is the issuer as the
 * records were issued (es-verifactu/client.ts, `StoredRecord.issuer`): a PATCH of the
 * location's legal name between a sale and its background submission does not rename the
 * issuer in what AEAT receives; records issued on either side of a rename go in separate
 * requests, each under its own name. A correction (subsanación) goes under the issuer of
 * the record it corrects, and its record names that issuer (NombreRazonEmisor). Against the fake AEAT; on the store TEST_STORE names.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import type { FakeAeatVerifactu } from '../support/fake-aeat-verifactu.ts';
import { startVerifactuTestApp, verifactuAuthorityLocation } from '../support/authority-app.ts';
import type { TestApp } from '../support/harness.ts';
import { createTx, getTx, saleBody } from '../support/transactions.ts';

let t: TestApp;
let clock: ManualClock;
let aeat: FakeAeatVerifactu;

let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  clock = new ManualClock(new Date());
  ({ t, aeat, close } = await startVerifactuTestApp(clock));
});
afterAll(async () => {
  await close?.();
});
// No TiempoEsperaEnvio: a request left for later goes at once.
beforeEach(() => {
  aeat.waitSeconds = 0;
});

const AUTHORITY = { 'x-svc-sandbox': 'authority' } as const;

const location = () => verifactuAuthorityLocation(t);

async function sale(key: string, loc: string, over: Record<string, unknown> = {}): Promise<string> {
  const res = await createTx(t, key, saleBody(loc, { timestamp: clock.now().toISOString(), ...over }), AUTHORITY);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

async function rename(key: string, loc: string, config: Record<string, unknown>, legalName: string): Promise<void> {
  const res = await t.request({ method: 'PATCH', url: `/v1/locations/${loc}`, key, payload: { country_config: { ...config, legal_name: legalName } } });
  expect(res.statusCode, res.body).toBe(200);
}

/** The requests AEAT processed for this NIF since `from` (requests, submissions): the Cabecera's NombreRazon and the records carried. */
function received(nif: string, from: { requests: number; submissions: number }): { name: string; records: string[] }[] {
  const names = aeat.requests.slice(from.requests).flatMap((r) => {
    const cabecera = /<sfLR:Cabecera>[\s\S]*?<\/sfLR:Cabecera>/.exec(r.body.toString('utf8'))?.[0] ?? '';
    return cabecera.includes(`<sf:NIF>${nif}</sf:NIF>`) ? [/<sf:NombreRazon>([^<]*)</.exec(cabecera)![1]!] : [];
  });
  const processed = aeat.submissions.slice(from.submissions).filter((x) => x.nif === nif);
  expect(processed).toHaveLength(names.length);
  return processed.map((x, i) => ({ name: names[i]!, records: x.records }));
}

const mark = () => ({ requests: aeat.requests.length, submissions: aeat.submissions.length });

describe('VERI*FACTU: the request names the issuer as the records were issued', () => {
  it('a PATCH of the legal name before the worker sends does not change the NombreRazon AEAT receives; records on either side of it go in two requests', async () => {
    const { key, nif, loc, config } = await location();
    const before = mark();
    const first = [await sale(key, loc), await sale(key, loc)];
    // Renamed after two sales, before their submission; a third sale after it.
    await rename(key, loc, config, 'Nombre Nuevo SL');
    const later = await sale(key, loc);

    await t.worker.drain();
    for (const id of [...first, later]) expect((await getTx(t, key, id)).status).toBe('success');
    expect(received(nif, before)).toEqual([
      { name: 'Ejemplo Madrid SL', records: ['Alta A-1', 'Alta A-2'] },
      { name: 'Nombre Nuevo SL', records: ['Alta A-3'] },
    ]);
  });

  it('a correction (subsanación) goes under the issuer of the record it corrects, not the location renamed since', async () => {
    const { key, nif, loc, config } = await location();
    const id = await sale(key, loc, { customer_context: { nif: 'B64717838', name: 'Cliente Ejemplo SA' } });
    await t.worker.drain();
    expect((await getTx(t, key, id)).status).toBe('success');
    await rename(key, loc, config, 'Nombre Nuevo SL');

    const before = mark();
    const res = await t.request({ method: 'POST', url: `/v1/transactions/${id}/correct`, key, payload: { metadata: { description: 'Menú del día y vino' } } });
    expect(res.statusCode, res.body).toBe(202);
    await t.worker.drain();
    expect((await getTx(t, key, id)).response_payload.correction).toMatchObject({ status: 'accepted' });
    expect(received(nif, before)).toEqual([{ name: 'Ejemplo Madrid SL', records: ['Alta A-1'] }]);
    // The subsanación's own record names the invoice's issuer as it was issued, too.
    const body = aeat.requests.slice(before.requests).map((r) => r.body.toString('utf8')).find((b) => b.includes('<sf:Subsanacion>S</sf:Subsanacion>'));
    expect(body).toContain('<sf:NombreRazonEmisor>Ejemplo Madrid SL</sf:NombreRazonEmisor>');
    expect(body).not.toContain('Nombre Nuevo SL');
  });
});
