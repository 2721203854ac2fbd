import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { nf525Message, type Nf525Record } from '../../src/countries/fr-nf525/record.ts';
import { verifyNf525Chain } from '../../src/countries/fr-nf525/verify.ts';
import { recordKeysRepo } from '../../src/store/repos/record-keys-repo.ts';
import { configs } from '../support/fixtures.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createLocation, createTx, frenchSaleBody } from '../support/transactions.ts';

/*
 * France audit (fr-audit). 1. The register's identity (`country_config.register_id`, the
 * SIRET/SIREN signed in every NF525 record, closure and JET event, and the prefix of every
 * document number) is fixed once the register has records. Before, a PATCH changed it in
 * the middle of a chain: the next record was signed as another register, so the register's
 * own chain no longer verified ("register X follows register Y").
 * 2. Records are version 2 (NF525R2): the payment method and a cancellation's reason are
 * signed, so a cash sale cannot be turned into a card sale, nor the printed "Motif" differ
 * from the record, without breaking the signature.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock: new ManualClock('2026-03-02T09:00:00.000Z') });
});
afterAll(() => t?.close());

const patch = (key: string, id: string, payload: object) => t.request({ method: 'PATCH', url: `/v1/locations/${id}`, key, payload });
const OTHER_SIREN = '732829320'; // a valid SIREN (Luhn), not the fixture's SIRET

describe('France: the register id is sealed once the register has records', () => {
  it('may change before the first record', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const res = await patch(key, loc, { country_config: { ...configs.nf525, register_id: OTHER_SIREN } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().country_config.register_id).toBe(OTHER_SIREN);
  });

  it('after a record: another register id is a 400, the same one (grouped) and the legal name still change; the chain stays one register', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const first = await createTx(t, key, frenchSaleBody(loc));
    expect(first.statusCode, first.body).toBe(201);

    const moved = await patch(key, loc, { country_config: { ...configs.nf525, register_id: OTHER_SIREN } });
    expect([moved.statusCode, moved.json()]).toEqual([400, { error: 'country_config.register_id cannot be changed once the location has transactions: create a new location' }]);
    // The same SIRET written in groups is no change; a new legal name is allowed (not part of the register's identity).
    const grouped = configs.nf525.register_id.replace(/^(\d{3})(\d{3})(\d{3})(\d{5})$/, '$1 $2 $3 $4');
    const renamed = await patch(key, loc, { country_config: { legal_name: 'Nouveau Nom SAS', register_id: grouped } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().country_config).toMatchObject({ legal_name: 'Nouveau Nom SAS', register_id: configs.nf525.register_id });

    const second = await createTx(t, key, frenchSaleBody(loc));
    expect(second.statusCode, second.body).toBe(201);
    const bodies = await Promise.all([first.json().id, second.json().id].map(async (id: string) =>
      (await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key })).body));
    const pub = (await recordKeysRepo.get(t.db, loc, 'ec-p256'))!.public_key_pem;
    expect(verifyNf525Chain(bodies, pub)).toMatchObject({ ok: true, count: 2 });
    expect(bodies.map((b) => (JSON.parse(b) as { document_number: string }).document_number)).toEqual([
      `${configs.nf525.register_id}-00000001`, `${configs.nf525.register_id}-00000002`,
    ]);
  });
});

describe('France: records sign the payment method and the cancellation\'s reason (version 2)', () => {
  it('a cash sale and its cancellation with a reason: both signed over them; the chain verifies; the ticket prints the signed reason', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const sale = await createTx(t, key, frenchSaleBody(loc, { payment_method: 'cash' }));
    expect(sale.statusCode, sale.body).toBe(201);
    const cancel = await t.request({ method: 'POST', url: `/v1/transactions/${sale.json().id}/cancel`, key, payload: { reason: 'erreur | de caisse' } });
    expect(cancel.statusCode, cancel.body).toBe(201);
    const bodies = await Promise.all([sale.json().id, cancel.json().id].map(async (id: string) =>
      (await t.request({ method: 'GET', url: `/v1/transactions/${id}/fiscal-record`, key })).body));
    const [s, c] = bodies.map((b) => JSON.parse(b) as Nf525Record);
    expect([s!.version, s!.payment_method, c!.version, c!.payment_method]).toEqual([2, 'cash', 2, 'cash']);
    expect(c!.cancels).toEqual({ document_number: s!.document_number, transaction_id: sale.json().id, reason: 'erreur | de caisse' });
    const fields = nf525Message(c!).split('|');
    expect(fields[0]).toBe('NF525R2');
    expect(fields.slice(24, 26)).toEqual(['cash', Buffer.from('erreur | de caisse').toString('base64url')]);

    const pub = (await recordKeysRepo.get(t.db, loc, 'ec-p256'))!.public_key_pem;
    expect(verifyNf525Chain(bodies, pub)).toMatchObject({ ok: true, count: 2 });
    // Changed afterwards in the store, the payment method no longer verifies.
    expect(verifyNf525Chain([JSON.stringify({ ...s, payment_method: 'card' })], pub)).toMatchObject({ ok: false, break: { reason: 'the signature does not verify over the record\'s data' } });

    const ticket = await t.request({ method: 'GET', url: `/v1/transactions/${cancel.json().id}/receipt?format=text`, key });
    expect(ticket.statusCode, ticket.body).toBe(200);
    expect(ticket.body).toContain('Motif : erreur | de caisse');
  });
});
