import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/harness.ts';

/*
 * Batch endpoints with every registered processor (platform audit). A key may run the
 * processors of the countries it acts in; a key scoped to a country without periodic work
 * (Greece: myDATA is sent per document) has nothing to run. It was answered 403 `API key
 * is not allowed to act in country ES`, a country the key never asked about, which also
 * broke an Embedded-Local integrator's process-pending loop.
 */
let t: TestApp;
let root: string;

beforeAll(async () => {
  t = await startTestApp();
  ({ key: root } = await t.signup());
});
afterAll(() => t.close());

async function scopedKey(permissions: string[]): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/v1/api-keys', key: root, payload: { name: 'scoped', permissions } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().key;
}

describe('process-pending and batch-stats by the key\'s countries', () => {
  it('a root key runs every registered processor, spain/lroe among them', async () => {
    const res = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key: root });
    expect(res.statusCode, res.body).toBe(200);
    const names = res.json().results.map((r: { processor: string }) => r.processor);
    expect(names).toContain('spain/lroe');
    const schedule = (await t.request({ method: 'GET', url: '/v1/batch/schedule', key: root })).json().schedule;
    expect(schedule.map((s: { processor: string }) => s.processor)).toEqual(names);
  });

  it('a key of a country without processors: 200 with nothing run, stats empty', async () => {
    const greek = await scopedKey(['batch:write', 'country:GR']);
    const run = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key: greek });
    expect(run.statusCode, run.body).toBe(200);
    expect(run.json()).toEqual({ results: [] });
    const stats = await t.request({ method: 'GET', url: '/v1/admin/batch-stats', key: greek });
    expect(stats.statusCode, stats.body).toBe(200);
    expect(stats.json()).toEqual({ stats: [] });
  });

  it('a key of Spain and Greece runs Spain\'s processors only', async () => {
    const key = await scopedKey(['batch:write', 'country:ES', 'country:GR']);
    const res = await t.request({ method: 'POST', url: '/v1/admin/process-pending', key });
    expect(res.statusCode, res.body).toBe(200);
    const names: string[] = res.json().results.map((r: { processor: string }) => r.processor);
    expect(names).toContain('spain/lroe');
    expect(names.every((n) => n.startsWith('spain/'))).toBe(true);
  });
});
