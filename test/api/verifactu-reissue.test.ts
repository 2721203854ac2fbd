/**
 * VERI*FACTU: a client invoice number whose record AEAT refused may be issued again (the core
 * lets a refused number be used again, session 18); the new record then goes as AEAT's "alta
 * por rechazo", `Subsanacion` S and `RechazoPrevio` X (src/countries/es-verifactu/build.ts
 * `reissueFlags`; BuildInput.earlierIssues), at create and preview alike. On the store
 * TEST_STORE names (run with --project pglite and --project postgres).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { regFactuRequest } from '../../src/countries/es-verifactu/soap.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, fiscalRecordOf, getTx, saleBody } from '../support/transactions.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../support/xml-tools.ts';

let t: TestApp;
let clock: ManualClock;
beforeAll(async () => {
  clock = new ManualClock(new Date('2026-03-02T10:00:00Z'));
  t = await startTestApp({ clock });
});
afterAll(() => t?.close());

const FLAGS = '<sf:Subsanacion>S</sf:Subsanacion><sf:RechazoPrevio>X</sf:RechazoPrevio>';
const sale = (loc: string, metadata: Record<string, unknown>) => saleBody(loc, { timestamp: clock.now().toISOString(), metadata });
/** The flags between NombreRazonEmisor and TipoFactura ('' for none), where the schema puts them. */
const flagsOf = (body: string) => /<\/sf:NombreRazonEmisor>(.*?)<sf:TipoFactura>/.exec(body)?.[1];

async function refusedSale(key: string, loc: string, number: string): Promise<string> {
  const res = await createTx(t, key, sale(loc, { invoice_number: number, sandbox_outcome: 'reject:1104' }));
  expect(res.statusCode, res.body).toBe(201);
  await t.worker.drain();
  expect((await getTx(t, key, res.json().id)).status).toBe('failed_permanent');
  return res.json().id;
}

describe('VERI*FACTU: a number AEAT refused, issued again, goes as an alta por rechazo (Subsanacion S, RechazoPrevio X)', () => {
  it('the same day: preview and create write both flags, the record is XSD-valid and accepted; the first issue had none', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const refused = await refusedSale(key, loc, 'R-1');
    expect(flagsOf(await fiscalRecordOf(t, key, refused))).toBe('');

    const preview = await t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: sale(loc, { invoice_number: 'R-1' }) });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(flagsOf(preview.json().fiscal_record.body)).toBe(FLAGS);

    const again = await createTx(t, key, sale(loc, { invoice_number: 'R-1' }));
    expect(again.statusCode, again.body).toBe(201);
    const body = await fiscalRecordOf(t, key, again.json().id);
    expect(flagsOf(body)).toBe(FLAGS);
    if (HAVE_SCHEMAS) {
      const valid = xsdValidate(regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [body]), 'es/verifactu/SuministroLR.xsd');
      expect(valid.ok, valid.output).toBe(true);
    } else {
      console.warn(SCHEMAS_MISSING_MESSAGE);
    }
    await t.worker.drain();
    expect((await getTx(t, key, again.json().id)).status).toBe('success');

    // Refused twice: the third issue is still an alta por rechazo (AEAT holds none of them).
    const { key: key2 } = await t.signup();
    const loc2 = await createLocation(t, key2, 'es-verifactu');
    await refusedSale(key2, loc2, 'R-7');
    await refusedSale(key2, loc2, 'R-7');
    const third = await createTx(t, key2, sale(loc2, { invoice_number: 'R-7' }));
    expect(third.statusCode, third.body).toBe(201);
    expect(flagsOf(await fiscalRecordOf(t, key2, third.json().id))).toBe(FLAGS);
  });

  it('a number never refused, or refused on another Madrid day (another IDFactura for AEAT), goes as a plain alta', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'es-verifactu');
    const fresh = await createTx(t, key, sale(loc, { invoice_number: 'N-1' }));
    expect(flagsOf(await fiscalRecordOf(t, key, fresh.json().id))).toBe('');

    await refusedSale(key, loc, 'D-1');
    clock.advance(24 * 3600_000);
    const nextDay = await createTx(t, key, sale(loc, { invoice_number: 'D-1' }));
    expect(nextDay.statusCode, nextDay.body).toBe(201);
    expect(flagsOf(await fiscalRecordOf(t, key, nextDay.json().id))).toBe('');
  });
});
