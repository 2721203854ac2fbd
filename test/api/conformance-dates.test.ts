import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { locationBodies } from '../support/fixtures.ts';

/*
 * Date and month query parameters at the ends of the calendar (platform audit). Each was a
 * 500: `GET /v1/account/usage?period=9999-12` (the month ends in the year 10000, whose ISO
 * form the store cannot read), the SAF-T of `0001-01` and the corrispettivi of
 * `0001-01-01` (no local midnight in Lisbon's or Rome's old mean time) and of `9999-12-31`.
 * Bad input is a 400, never a 500.
 */
let t: TestApp;
let key: string;
const loc: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApp();
  ({ key } = await t.signup());
  for (const system of ['pt-saft', 'it-dc'] as const) {
    const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: locationBodies[system] });
    expect(res.statusCode, res.body).toBe(201);
    loc[system] = res.json().id;
  }
});
afterAll(() => t.close());

const get = async (url: string) => {
  const res = await t.request({ method: 'GET', url, key });
  return [res.statusCode, res.json()];
};

describe('calendar ends', () => {
  it('usage: 9999-12 → 400; 9999-11 still answers', async () => {
    expect(await get('/v1/account/usage?period=9999-12')).toEqual([400, { error: 'period must be a month in the form YYYY-MM' }]);
    expect((await get('/v1/account/usage?period=9999-11'))[0]).toBe(200);
  });

  it('SAF-T: a month before 1970 or after 9998 → 400 naming the range', async () => {
    for (const p of ['0001-01', '1969-12', '9999-12']) {
      expect(await get(`/v1/locations/${loc['pt-saft']}/saft?period=${p}`), p).toEqual([400, { error: 'period must be a month from 1970-01 to 9998-12' }]);
    }
  });

  it('corrispettivi: a day before 1970 or after 9998 → 400 naming the range', async () => {
    for (const d of ['0001-01-01', '1969-12-31', '9999-12-31']) {
      expect(await get(`/v1/locations/${loc['it-dc']}/corrispettivi?date=${d}`), d).toEqual([400, { error: 'date must be a date from 1970-01-01 to 9998-12-31' }]);
    }
    // Inside the range, a day without documents is the plug-in's 404, as before.
    expect((await get(`/v1/locations/${loc['it-dc']}/corrispettivi?date=9998-12-31`))[0]).toBe(404);
  });
});
