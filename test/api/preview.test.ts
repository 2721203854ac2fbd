import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.ts';
import { EVENT_TYPES, SYSTEM_KEYS } from '../../src/countries/registry.ts';
import { verifyNf525Chain } from '../../src/countries/fr-nf525/verify.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { configs, RANDOM_UUID, type SystemKey } from '../support/fixtures.ts';
import { createLocation, createTx, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';
import { embeddedCertificatePem } from '../support/spain.ts';
import { xmlsecVerify } from '../support/xml-tools.ts';

/**
 * POST /v1/transactions/preview (docs/decisions.md "Transaction preview"): what create
 * would make of a request, built by create's own code on the chain as it stands, and
 * nothing written.
 *
 * The clock stands still: a preview and the create after it issue at the same instant on
 * the same head, so number, time and chain link are not normalised away but must match
 * exactly. What is left to normalise is what is random by nature: the transaction id
 * (create assigns its own), the XAdES element Ids with the digests and signature values
 * over them, and ECDSA signature values (with what is derived from them: the TicketBAI id
 * and its QR checksum, the NF525 fingerprint and signature extract). The preview's
 * signatures are verified on their own instead, with the key create signed with.
 */
let t: TestApp;
const clock = new ManualClock('2026-03-02T10:00:00.000Z');
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t.close());

const preview = (key: string, body: unknown, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: '/v1/transactions/preview', key, payload: body as object, headers });
/** Create without the inline wait: it answers the transaction as stored, before any submission (the worker is not running). */
const NO_WAIT = { 'x-fiscalization-timeout': '0' };

/** Every system of the registry, TicketBAI in each of its three territories. */
const CASES: { name: string; system: SystemKey; location?: Record<string, unknown> }[] = [
  { name: 'TicketBAI Gipuzkoa', system: 'es-ticketbai' },
  { name: 'TicketBAI Araba', system: 'es-ticketbai', location: { country_config: { ...configs.ticketbai, territory: 'araba' } } },
  { name: 'TicketBAI Bizkaia', system: 'es-ticketbai', location: { country_config: { ...configs.ticketbai, territory: 'bizkaia' } } },
  { name: 'VERI*FACTU', system: 'es-verifactu' },
  { name: 'SII', system: 'es-sii' },
  { name: 'SDI', system: 'it-sdi' },
  { name: 'Documento Commerciale', system: 'it-dc' },
  { name: 'NF525', system: 'fr-nf525' },
  { name: 'SAF-T PT', system: 'pt-saft' },
  { name: 'myDATA', system: 'gr-mydata' },
];

const sale = (loc: string, system: SystemKey, over: Record<string, unknown> = {}) =>
  saleBody(loc, { ...saleLines[system], ...(saleMetadata[system] ? { metadata: saleMetadata[system] } : {}), ...over });

/** The rows a create writes, and the chain heads and series it moves: a preview must leave all of them as they were. */
async function footprint(): Promise<unknown> {
  const count = async (table: string) => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  const tables = ['transactions', 'fiscal_records', 'jobs', 'events', 'webhook_deliveries', 'chain_heads', 'number_series'];
  return {
    counts: Object.fromEntries(await Promise.all(tables.map(async (name) => [name, await count(name)]))),
    heads: (await t.db.query('SELECT chain_key, seq, last_fingerprint, last_fiscal_id, last_issued_at, updated_at FROM chain_heads ORDER BY chain_key')).rows,
    series: (await t.db.query('SELECT numbering_key, last_number, updated_at FROM number_series ORDER BY numbering_key')).rows,
  };
}

interface Stored {
  body: string; content_type: string; placeholder: boolean; fingerprint: string | null; previous_fingerprint: string | null;
  fiscal_id: string | null; document_number: string | null; qr_data: string | null; seq: string | number;
}
const storedRecord = async (transactionId: string) =>
  (await t.db.query<Stored>('SELECT * FROM fiscal_records WHERE transaction_id = $1', [transactionId])).rows[0]!;
const storedNormalized = async (transactionId: string) =>
  (await t.db.query<{ normalized: unknown }>('SELECT normalized FROM transactions WHERE id = $1', [transactionId])).rows[0]!.normalized;

/** The signature values a record carries that are random by nature (ECDSA, or signed over random XAdES Ids). */
function randomSignatures(body: string): string[] {
  const xades = [...body.matchAll(/<ds:SignatureValue[^>]*>([^<]*)</g)].map((m) => m[1]!.replace(/\s/g, ''));
  if (xades.length > 0) return xades;
  try {
    const value = (JSON.parse(body) as { signature?: { algorithm?: string; value?: string } }).signature;
    return value?.algorithm === 'ES256' && value.value ? [value.value] : [];
  } catch {
    return [];
  }
}

/**
 * What create's and the preview's answers must agree on, with only the random parts
 * masked (see the header comment). `id` is the transaction id the side was built with.
 */
function comparable(id: string, r: {
  body: string; content_type: string; placeholder: boolean; fingerprint: string | null; fiscal_id: string | null; document_number: string | null;
  qr_data: string | null; render_hints: { key: string; value: string }[]; status: string; seq: number; previous_fingerprint: string | null;
}) {
  const signatures = randomSignatures(r.body);
  const randomized = signatures.length > 0;
  const mask = (s: string | null) => {
    if (s === null) return null;
    let out = s.split(id).join('<transaction-id>');
    out = out
      // XAdES: random element Ids, the digests of the signed properties and key info that carry them, the signature value.
      .replace(/(Signature|Reference)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '$1-<id>')
      .replace(/(<ds:Reference [^>]*URI="#[^"]+"[^>]*>[\s\S]*?<ds:DigestValue>)[^<]*/g, '$1<digest>')
      .replace(/(<ds:SignatureValue[^>]*>)[^<]*/g, '$1<signature>')
      // The TicketBAI id carries the first 13 characters of the signature value and a CRC-8; the QR repeats both.
      .replace(/(TBAI-[A-Z0-9]+-\d{6}-)(?:[A-Za-z0-9+/]|%2B|%2F){13}-\d{3}/g, '$1<signature>-<crc>')
      .replace(/([?&]cr=)\d{3}/g, '$1<crc>');
    for (const sig of signatures) out = out.split(sig).join('<signature>');
    return out;
  };
  return {
    body: mask(r.body), content_type: r.content_type, placeholder: r.placeholder,
    // A record signed at random links by a fingerprint drawn from that signature (checked through the next preview instead).
    fingerprint: randomized ? '<random>' : r.fingerprint,
    fiscal_id: mask(r.fiscal_id), document_number: mask(r.document_number), qr_data: mask(r.qr_data),
    // NF525's extract is four characters of its ECDSA signature.
    render_hints: r.render_hints.map((h) => ({ ...h, value: randomized && h.key === 'signature_extract' ? '<random>' : mask(h.value) })),
    status: r.status, seq: r.seq, previous_fingerprint: r.previous_fingerprint,
  };
}

const ofPreview = (p: ReturnType<TestApp['request']> extends Promise<infer R> ? R : never) => {
  const v = p.json();
  return comparable(v.transaction_id, {
    ...v.fiscal_record, render_hints: v.transaction.render_hints, status: v.transaction.status, seq: v.seq, previous_fingerprint: v.previous_fingerprint,
  });
};

describe('POST /v1/transactions/preview', () => {
  it('is in the OpenAPI document, with its answer\'s schema and create\'s errors', async () => {
    const doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
    const op = doc.paths['/v1/transactions/preview']?.post;
    expect(op).toBeDefined();
    expect(op.requestBody).toBeDefined();
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '429']));
    const schema = op.responses['200'].content['application/json'].schema;
    expect(schema.required).toEqual(expect.arrayContaining(['preview', 'computed_at', 'chain_head_at', 'seq', 'previous_fingerprint', 'normalized', 'transaction_id', 'transaction', 'fiscal_record', 'signature']));
    expect(schema.properties.fiscal_record.required).toEqual(expect.arrayContaining(['content_type', 'body', 'fingerprint', 'fiscal_id', 'document_number', 'qr_data']));
  });

  it('covers every system of the registry', () => {
    expect(new Set(CASES.map((c) => c.system))).toEqual(new Set(SYSTEM_KEYS));
  });

  it.each(CASES)('$name: the record create then makes, equal but for what is random; nothing written', async ({ system, location }) => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, system, location);
    // A subscription to every event: a create's events would fan out to it (deliveries, jobs).
    const hook = await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: 'http://127.0.0.1:9/hook', events: EVENT_TYPES } });
    expect(hook.statusCode, hook.body).toBe(201);
    const body = sale(loc, system);
    // A chain with a head: the preview links to it.
    const first = await createTx(t, key, body, NO_WAIT);
    expect(first.statusCode, first.body).toBe(201);
    const firstRecord = await storedRecord(first.json().id);

    const before = await footprint();
    // The next sale (Italy: the merchant's next invoice number; a number is issued once).
    const second = sale(loc, system);
    const p1 = await preview(key, second);
    expect(p1.statusCode, p1.body).toBe(200);
    const p2 = await preview(key, second);
    expect(await footprint()).toEqual(before);
    const v = p1.json();
    expect(v).toMatchObject({
      preview: true, seq: Number(firstRecord.seq) + 1, previous_fingerprint: firstRecord.fingerprint,
      computed_at: clock.now().toISOString(), chain_head_at: clock.now().toISOString(),
      transaction: { location_id: loc, system, environment: 'test', amount: body.total_amount },
    });
    // Two previews in a row: the same place, the same number, the same record.
    expect(ofPreview(p2)).toEqual(ofPreview(p1));

    const created = await createTx(t, key, second, NO_WAIT);
    expect(created.statusCode, created.body).toBe(201);
    // What the footprint counts does move with a create.
    expect(await footprint()).not.toEqual(before);
    const c = created.json();
    const record = await storedRecord(c.id);
    const served = await t.request({ method: 'GET', url: `/v1/transactions/${c.id}/fiscal-record`, key });
    // The preview's record is what GET .../fiscal-record serves for the created one.
    expect(served.headers['content-type']).toBe(`${v.fiscal_record.content_type}; charset=utf-8`);
    expect(served.body).toBe(record.body);
    expect(ofPreview(p1)).toEqual(comparable(c.id, {
      ...record, render_hints: c.render_hints, status: c.status, seq: Number(record.seq), previous_fingerprint: record.previous_fingerprint,
    }));
    expect(v.normalized).toEqual(await storedNormalized(c.id));
    expect(v.transaction).toMatchObject({ type: c.type, currency: c.currency, country: c.country, deadline_at: c.deadline_at, completed_at: c.completed_at });

    // The random signatures are real ones, by the key create signed with.
    if (v.fiscal_record.body.includes('<ds:Signature ')) {
      const certificate = embeddedCertificatePem(record.body);
      expect(embeddedCertificatePem(v.fiscal_record.body)).toBe(certificate);
      const verified = xmlsecVerify(v.fiscal_record.body, { trustedCertPem: certificate });
      expect(verified.ok, verified.output).toBe(true);
      expect(v.signature.certificate).toBe('sandbox');
    }
    if (system === 'fr-nf525') {
      const pem = (await t.db.query<{ public_key_pem: string }>('SELECT public_key_pem FROM record_keys WHERE location_id = $1', [loc])).rows[0]!.public_key_pem;
      expect(verifyNf525Chain([firstRecord.body, v.fiscal_record.body], pem)).toMatchObject({ ok: true, count: 2 });
      expect(v.signature.record_key_id).toBe(crypto.createHash('sha256').update(crypto.createPublicKey(pem).export({ type: 'spki', format: 'der' })).digest('hex'));
    }

    // A preview after the create builds on the new head, at the time it is made, and is
    // again what the next create makes.
    const headAt = clock.now().toISOString();
    clock.advance(60_000);
    const third = sale(loc, system);
    const p3 = await preview(key, third);
    expect(p3.json()).toMatchObject({ seq: Number(record.seq) + 1, previous_fingerprint: record.fingerprint, chain_head_at: headAt, computed_at: clock.now().toISOString() });
    const next = (await createTx(t, key, third, NO_WAIT)).json();
    const nextRecord = await storedRecord(next.id);
    expect(ofPreview(p3)).toEqual(comparable(next.id, {
      ...nextRecord, render_hints: next.render_hints, status: next.status, seq: Number(nextRecord.seq), previous_fingerprint: nextRecord.previous_fingerprint,
    }));
  });
});

describe('POST /v1/transactions/preview: refusals are create\'s', () => {
  /** Both answers, status and body, for the same request. */
  async function both(key: string, body: unknown, headers: Record<string, string> = {}) {
    const p = await preview(key, body, headers);
    const c = await createTx(t, key, body as object, { ...headers, ...NO_WAIT });
    return { preview: { status: p.statusCode, body: p.json() }, create: { status: c.statusCode, body: c.json() } };
  }

  it('a bad body, an unknown, foreign or inactive location, a bad header: the same status and message as create', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const sdi = await createLocation(t, key, 'it-sdi');
    const other = await t.signup();
    const foreign = await createLocation(t, other.key, 'fr-nf525');
    const inactive = await createLocation(t, key, 'fr-nf525', { name: 'Closed' });
    await t.request({ method: 'PATCH', url: `/v1/locations/${inactive}`, key, payload: { status: 'inactive' } });
    const cases: [unknown, Record<string, string>?][] = [
      [sale(loc, 'fr-nf525', { items: [] })],
      [sale(loc, 'fr-nf525', { total_amount: 2000 })],
      [{ ...sale(loc, 'fr-nf525'), currency: undefined }],
      [['not', 'a', 'sale']],
      [sale(RANDOM_UUID, 'fr-nf525')],
      [sale('not-a-uuid', 'fr-nf525')],
      // Another account's location is "location not found", as create answers (spec: 400).
      [sale(foreign, 'fr-nf525')],
      [sale(inactive, 'fr-nf525')],
      // The system's own rules (SDI: an invoice number is required).
      [sale(sdi, 'it-sdi', { metadata: {} })],
      [sale(loc, 'fr-nf525'), { 'x-svc-sandbox': 'yes' }],
      [sale(loc, 'fr-nf525'), { 'x-fiscalization-timeout': '99' }],
      [sale(loc, 'fr-nf525'), { 'idempotency-key': 'x'.repeat(256) }],
    ];
    const before = await footprint();
    for (const [body, headers] of cases) {
      const p = await preview(key, body, headers);
      expect(p.statusCode, JSON.stringify(body)).toBe(400);
      expect(p.json()).toEqual({ error: expect.any(String) });
      const c = await createTx(t, key, body as object, headers);
      expect({ status: p.statusCode, body: p.json() }, JSON.stringify(body)).toEqual({ status: c.statusCode, body: c.json() });
    }
    expect(await footprint()).toEqual(before);
    expect((await preview(key, sale(foreign, 'fr-nf525'))).json()).toEqual({ error: 'location not found' });
  });

  it('a key without transactions:write is refused (403); a key limited to other countries too, with create\'s message', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const newKey = async (permissions: string[]) => {
      const res = await t.request({ method: 'POST', url: '/v1/api-keys', key, payload: { name: 'pos', permissions } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().key as string;
    };
    const reader = await newKey(['transactions:read', 'locations:read']);
    const refused = await preview(reader, sale(loc, 'fr-nf525'));
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error: 'insufficient permission: transactions:write required' });
    const spainOnly = await newKey(['transactions:write', 'country:ES']);
    const r = await both(spainOnly, sale(loc, 'fr-nf525'));
    expect(r.preview).toEqual(r.create);
    expect(r.preview).toEqual({ status: 403, body: { error: 'API key is not allowed to act in country FR' } });
    const franceToo = await newKey(['transactions:write', 'country:FR']);
    expect((await preview(franceToo, sale(loc, 'fr-nf525'))).statusCode).toBe(200);
  });

  it('a record that needs a certificate the location lacks: create\'s error', async () => {
    const { key } = await t.signup();
    // The real authority sandbox needs an uploaded certificate; the location names one never uploaded.
    const loc = await createLocation(t, key, 'es-ticketbai');
    const r = await both(key, sale(loc, 'es-ticketbai'), { 'x-svc-sandbox': 'authority' });
    expect(r.preview.status).toBe(400);
    expect(r.preview).toEqual(r.create);
  });

  it('takes no idempotency key, draws from the rate limit bucket, and needs a key', async () => {
    const { key } = await t.signup();
    const loc = await createLocation(t, key, 'fr-nf525');
    const idem = { 'idempotency-key': 'preview-then-create' };
    const p1 = await preview(key, sale(loc, 'fr-nf525'), idem);
    const p2 = await preview(key, sale(loc, 'fr-nf525', { total_amount: 2040, metadata: { note: 'other' } }), idem);
    expect([p1.statusCode, p2.statusCode]).toEqual([200, 200]);
    // The key is still free: a create with another body takes it (201, not a 409 or a replay).
    const c = await createTx(t, key, sale(loc, 'fr-nf525'), { ...idem, ...NO_WAIT });
    expect(c.statusCode, c.body).toBe(201);
    // The clock stands still: no refill between the two.
    expect(Number(p2.headers['x-ratelimit-remaining'])).toBe(Number(p1.headers['x-ratelimit-remaining']) - 1);
    expect((await t.request({ method: 'POST', url: '/v1/transactions/preview', payload: sale(loc, 'fr-nf525') })).statusCode).toBe(401);
  });
});
