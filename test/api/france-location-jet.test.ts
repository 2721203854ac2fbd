import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { jetChainKey, type Nf525JetEntry } from '../../src/countries/fr-nf525/closures/jet.ts';
import { verifyJet } from '../../src/countries/fr-nf525/closures/verify.ts';
import type { LedgerEntry } from '../../src/ledger/types.ts';
import { nf525Repo } from '../../src/store/repos/nf525-repo.ts';
import { recordKeysRepo } from '../../src/store/repos/record-keys-repo.ts';
import { configs } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, frenchSaleBody } from '../support/transactions.ts';

/*
 * France: a change of a register's parameters (its country_config, its status) and its
 * deletion are journaled in its JET (codes 20 `parameters`, 30 `register_deleted`), in the
 * database transaction of the change (countries/fr-nf525/closures/location-changes.ts,
 * through the plug-in hook `onLocationChanged`). Before, a PATCH or a DELETE left no trace.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T09:00:00.000Z') });
});
afterAll(() => t?.close());

const patch = (key: string, id: string, payload: object) => t.request({ method: 'PATCH', url: `/v1/locations/${id}`, key, payload });
type Listed = Nf525JetEntry & { id: string; created_at: string };
/** The JET at its inspector path, oldest first (each read journals its own export after it). */
async function jet(key: string, loc: string): Promise<Listed[]> {
  const res = await t.request({ method: 'GET', url: `/v1/locations/${loc}/jet?limit=100`, key });
  expect(res.statusCode, res.body).toBe(200);
  return [...(res.json().data as Listed[])].reverse();
}
const changes = (entries: readonly Nf525JetEntry[]) => entries.filter((e) => e.event !== 'export');
const publicKey = async (loc: string) => crypto.createPublicKey((await recordKeysRepo.get(t.db, loc, 'ec-p256'))!.public_key_pem);

describe('France: a change of the register is journaled in its JET', () => {
  it('a PATCH of legal_name, then of the shop\'s name and address: one parameters entry (code 20) each, with the values before and after; the JET verifies', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const res = await patch(key, loc, { country_config: { ...configs.nf525, legal_name: 'Nouveau Nom SAS' } });
    expect(res.statusCode, res.body).toBe(200);
    const entries = await jet(key, loc);
    expect(changes(entries).map((e) => [e.code, e.event, e.register_id, e.details])).toEqual([[
      '20', 'parameters', configs.nf525.register_id, {
        fields: 'country_config.legal_name',
        'country_config.legal_name.before': configs.nf525.legal_name,
        'country_config.legal_name.after': 'Nouveau Nom SAS',
      },
    ]]);
    // The shop's name and address (the ticket's header) are journaled by their own names;
    // the config sent back unchanged adds nothing.
    const before = (await t.request({ method: 'GET', url: `/v1/locations/${loc}`, key })).json() as { name: string; address: string | null };
    const renamed = await patch(key, loc, { name: 'Café Rivoli', address: '2 rue de Rivoli, 75001 Paris', country_config: { ...configs.nf525, legal_name: 'Nouveau Nom SAS' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    const after = await jet(key, loc);
    expect(changes(after).map((e) => [e.code, e.event, e.details])).toEqual([
      expect.anything(),
      ['20', 'parameters', {
        fields: 'name,address',
        'name.before': before.name, 'name.after': 'Café Rivoli',
        ...(before.address === null ? {} : { 'address.before': before.address }), 'address.after': '2 rue de Rivoli, 75001 Paris',
      }],
    ]);
    // A PATCH that changes nothing journals nothing.
    expect((await patch(key, loc, { name: ' Café Rivoli ', address: '2 rue de Rivoli, 75001 Paris' })).statusCode).toBe(200);
    const last = await jet(key, loc);
    expect(changes(last)).toHaveLength(2);
    expect(verifyJet(last, await publicKey(loc))).toMatchObject({ ok: true, count: last.length });
  });

  it('a PATCH of the name alone (no country_config), then one clearing the address: one parameters entry each, only what changed', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525', { name: 'Boulangerie du Marché', address: '1 place du Marché, 69001 Lyon' });
    expect((await patch(key, loc, { name: 'Pains & Co' })).statusCode).toBe(200);
    expect((await patch(key, loc, { address: null })).statusCode).toBe(200);
    const entries = await jet(key, loc);
    expect(changes(entries).map((e) => [e.code, e.event, e.details])).toEqual([
      ['20', 'parameters', { fields: 'name', 'name.before': 'Boulangerie du Marché', 'name.after': 'Pains & Co' }],
      // A cleared address has no `.after`: the ticket prints none.
      ['20', 'parameters', { fields: 'address', 'address.before': '1 place du Marché, 69001 Lyon' }],
    ]);
    expect(verifyJet(entries, await publicKey(loc))).toMatchObject({ ok: true, count: entries.length });
  });

  it('a deactivation and a reactivation: one entry each, with the status before and after', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    expect((await createTx(t, key, frenchSaleBody(loc))).statusCode).toBe(201);
    expect((await patch(key, loc, { status: 'inactive' })).statusCode).toBe(200);
    expect((await patch(key, loc, { status: 'inactive' })).statusCode).toBe(200); // no change: nothing journaled
    expect((await patch(key, loc, { status: 'active' })).statusCode).toBe(200);
    const entries = await jet(key, loc);
    expect(changes(entries).filter((e) => e.event === 'parameters').map((e) => e.details)).toEqual([
      { fields: 'status', 'status.before': 'active', 'status.after': 'inactive' },
      { fields: 'status', 'status.before': 'inactive', 'status.after': 'active' },
    ]);
    expect(verifyJet(entries, await publicKey(loc))).toMatchObject({ ok: true, count: entries.length });
  });

  it('a refused PATCH (400) journals nothing: the next accepted one is the only entry', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const bad = await patch(key, loc, { country_config: { ...configs.nf525, legal_name: 'Autre SAS', register_id: '123' } });
    expect([bad.statusCode, bad.json()]).toEqual([400, { error: 'country_config.register_id must be a 9-digit SIREN or 14-digit SIRET' }]);
    expect((await patch(key, loc, { status: 'paused' })).statusCode).toBe(400);
    expect((await patch(key, loc, { status: 'inactive', country_config: { legal_name: 'Autre SAS' } })).statusCode).toBe(400); // register_id required
    expect(changes(await jet(key, loc))).toEqual([]);
    expect((await patch(key, loc, { status: 'inactive', country_config: { ...configs.nf525, legal_name: 'Autre SAS' } })).statusCode).toBe(200);
    expect(changes(await jet(key, loc)).map((e) => e.details)).toEqual([{
      fields: 'country_config.legal_name,status',
      'country_config.legal_name.before': configs.nf525.legal_name, 'country_config.legal_name.after': 'Autre SAS',
      'status.before': 'active', 'status.after': 'inactive',
    }]);
  });

  it('a register id changed before the first record (after JET reads under the old one): the JET moves with it and still verifies', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    await jet(key, loc); // an export entry under the fixture's SIRET
    const siren = '732829320';
    expect((await patch(key, loc, { country_config: { ...configs.nf525, register_id: siren } })).statusCode).toBe(200);
    expect((await createTx(t, key, frenchSaleBody(loc))).statusCode).toBe(201);
    const entries = await jet(key, loc);
    const moved = entries.find((e) => e.event === 'parameters')!;
    expect([moved.register_id, moved.details['country_config.register_id.before'], moved.details['country_config.register_id.after']]).toEqual([siren, configs.nf525.register_id, siren]);
    expect(entries[0]!.register_id).toBe(configs.nf525.register_id);
    expect(verifyJet(entries, await publicKey(loc))).toMatchObject({ ok: true, count: entries.length });
  });

  it('a DELETE journals register_deleted before the location goes; its records and JET stay', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const sale = await createTx(t, key, frenchSaleBody(loc));
    expect(sale.statusCode).toBe(201);
    expect((await t.request({ method: 'DELETE', url: `/v1/locations/${loc}`, key })).statusCode).toBe(204);
    expect((await t.request({ method: 'GET', url: `/v1/locations/${loc}`, key })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: `/v1/transactions/${sale.json().id}/fiscal-record`, key })).statusCode).toBe(200);
    const { rows } = await nf525Repo.page(t.db, jetChainKey(loc, 'test'), 100, 0);
    const entries = rows.map((r) => JSON.parse(r.body) as Nf525JetEntry).reverse();
    expect(changes(entries).map((e) => [e.code, e.event, e.details])).toEqual([
      ['01', 'software_start', expect.any(Object)],
      ['30', 'register_deleted', { status: 'active' }],
    ]);
    expect(verifyJet(entries, await publicKey(loc))).toMatchObject({ ok: true });
    // The books of a closed register stay readable through the API (NF525: six years, LPF
    // art. L102 B): its JET, closures and archives; another account's key still gets a 404.
    const listed = await jet(key, loc);
    expect(listed.map((e) => e.event)).toContain('register_deleted');
    for (const path of ['closures', 'archives']) {
      expect((await t.request({ method: 'GET', url: `/v1/locations/${loc}/${path}`, key })).statusCode, path).toBe(200);
    }
    const other = await t.signup();
    expect((await t.request({ method: 'GET', url: `/v1/locations/${loc}/jet`, key: other.key })).statusCode).toBe(404);
  });

  it('the change and its entry commit together: a journal that fails leaves the location unchanged', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const ledger = t.rt.ledger;
    const append = ledger.append;
    // The store fails after the entry's own writes (the location's update), before COMMIT.
    ledger.append = (entry: LedgerEntry) => append({
      ...entry, afterWrite: async (tx, built, now) => { await entry.afterWrite?.(tx, built, now); throw new Error('the store went away'); },
    });
    try {
      const res = await patch(key, loc, { country_config: { ...configs.nf525, legal_name: 'Jamais SAS' } });
      expect(res.statusCode).toBe(500);
    } finally {
      ledger.append = append;
    }
    const got = await t.request({ method: 'GET', url: `/v1/locations/${loc}`, key });
    expect(got.json().country_config.legal_name).toBe(configs.nf525.legal_name);
    expect(changes(await jet(key, loc))).toEqual([]);
  });

  it('a PATCH and a DELETE of a location of another system journal nothing of France\'s; the French one beside it, its own change only', async () => {
    const { key } = await t.signup();
    const fr = await createLocation(t, key, 'fr-nf525');
    const pt = await createLocation(t, key, 'pt-saft');
    expect((await patch(key, pt, { name: 'Café Porto', status: 'inactive' })).statusCode).toBe(200);
    expect((await patch(key, fr, { status: 'inactive' })).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/v1/locations/${pt}`, key })).statusCode).toBe(204);
    const journals = await t.db.query<{ chain_key: string }>("SELECT chain_key FROM fiscal_records WHERE kind = 'journal' AND account_id = (SELECT account_id FROM locations WHERE id = $1)", [fr]);
    expect(new Set(journals.rows.map((r) => r.chain_key))).toEqual(new Set([jetChainKey(fr, 'test')]));
    expect(await recordKeysRepo.get(t.db, pt, 'ec-p256')).toBeUndefined();
    expect(changes(await jet(key, fr)).map((e) => e.details.fields)).toEqual(['status']);
  });
});
