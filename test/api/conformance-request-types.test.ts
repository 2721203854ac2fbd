import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, unlimitedLimiter, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, saleBody } from '../support/transactions.ts';

/*
 * docs/decisions.md "Errors": a field of the wrong JSON type is `<field> must be a string`;
 * "is required" is for a field that is missing, null or blank. Found by the spec audit: a
 * line's `description` sent as a number was answered `items[0].description is required`,
 * which tells the client to add a field it did send (the guide form's line_items already
 * said `must be a string`).
 */

let t: TestApp;
let key: string;
let loc: string;
beforeAll(async () => {
  t = await startTestApp({ limiter: unlimitedLimiter() });
  ({ key } = await t.signup());
  loc = await createLocation(t, key, 'es-verifactu');
});
afterAll(() => t.close());

const withFirstLine = (over: Record<string, unknown>) => {
  const body = saleBody(loc);
  body.items[0] = { ...body.items[0]!, ...over } as (typeof body.items)[0];
  return body;
};

describe('a line description of the wrong JSON type', () => {
  it.each([
    ['a number', 5],
    ['a boolean', true],
    ['an object', { text: 'Menú' }],
    ['an array', ['Menú']],
  ])('%s: 400 items[0].description must be a string', async (_what, description) => {
    const res = await createTx(t, key, withFirstLine({ description }));
    expect([res.statusCode, res.json()]).toEqual([400, { error: 'items[0].description must be a string' }]);
  });

  it.each([
    ['missing', undefined],
    ['null', null],
    ['blank', '   '],
  ])('%s: 400 items[0].description is required (unchanged)', async (_what, description) => {
    const res = await createTx(t, key, withFirstLine({ description }));
    expect([res.statusCode, res.json()]).toEqual([400, { error: 'items[0].description is required' }]);
  });

  it('the guide form answers the same way (line_items)', async () => {
    const res = await createTx(t, key, {
      location_id: loc, type: 'sale', amount: 1210, line_items: [{ description: 5, quantity: 1, unit_price: 1000, vat_rate: 2100 }],
    });
    expect([res.statusCode, res.json()]).toEqual([400, { error: 'line_items[0].description must be a string' }]);
  });
});
