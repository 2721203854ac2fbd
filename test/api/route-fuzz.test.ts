import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billingSignatureHeader } from '../../src/billing/signature.ts';
import { startTestApp, unlimitedLimiter, type TestApp } from '../support/harness.ts';
import { multipartBody } from '../support/p12.ts';
import type { SystemKey } from '../support/fixtures.ts';
import { createLocation, locationBody, saleBody, saleLines, saleMetadata } from '../support/transactions.ts';

/**
 * Bad input never gets a 500: every route of the API reference (GET /openapi.json, so a
 * route added later is covered as it comes) is called with wrong bodies, wrong query
 * values and wrong path ids, authenticated, and every answer must be below 500. A 500 is
 * a bug of ours: the caller must be told what is wrong with a 4xx (spec: Errors).
 *
 * The inputs are a fixed list, not random: a failure names the exact request, and the
 * next run sends the same ones. The body cases are the whole body replaced (not an
 * object, empty, deep) and each documented property of the body set in turn to a value of
 * every wrong kind (null, a boolean, numbers out of range, an empty, huge or odd string,
 * an array, an object), on top of a valid body where the test has one. Then a sale to a
 * location of every system, with each of its lines' fields and each metadata field any
 * system reads (found in src/countries, so a new one is covered as it comes) set wrong.
 */

type Schema = { type?: string | string[]; properties?: Record<string, Schema>; $ref?: string; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[] };
type Operation = { parameters?: { in: string; name: string }[]; requestBody?: { content?: Record<string, { schema?: Schema }> } };

/** Values of every JSON kind a field could wrongly carry. */
const BAD_VALUES: readonly unknown[] = [
  null, true, 0, -1, 1.5, 1e308, -1e308, 2 ** 63, '', ' ', 'x'.repeat(70_000), '\u202e\ud83d\ude00é', 'bell\u0007', '\ufffe', '0000-00-00', '../../etc/passwd',
  '%00', [], [null], [{}], {}, { a: { b: { c: [] } } }, '2026-02-30T25:61:00Z', 'not-a-uuid',
];
/** Whole bodies that are not what any route takes. */
const BAD_BODIES: readonly string[] = ['null', '[]', '"text"', '123', 'true', '{}', '{"a":'.repeat(200) + '1' + '}'.repeat(200), '[' + '{},'.repeat(500) + '{}]'];
/** Path parameter values besides the real ids. */
const BAD_IDS: readonly string[] = ['x', 'a'.repeat(300), '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '%E2%82', '..%2F..', '1', '-1', 'null'];
/** Fewer kinds for the many metadata fields. */
const BAD_META: readonly unknown[] = [null, true, -1, 1e308, '', 'x'.repeat(70_000), [], { a: 1 }, '2026-02-30'];
const SYSTEMS: readonly SystemKey[] = ['es-ticketbai', 'es-verifactu', 'es-sii', 'it-sdi', 'it-dc', 'fr-nf525', 'pt-saft', 'gr-mydata'];

/**
 * The metadata fields a system reads (`metadata.<name>` or a reader's `(meta, '<name>'`)
 * in its folder, its country's shared folder and the shared one.
 */
function metadataFields(system: SystemKey): string[] {
  const dir = path.join(import.meta.dirname, '..', '..', 'src', 'countries');
  const folders = [system, system.slice(0, 2), 'shared'];
  const names = new Set<string>();
  for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.ts') || f.endsWith('.test.ts') || !folders.includes(f.split(path.sep)[0]!)) continue;
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    for (const m of text.matchAll(/\bmetadata\.([a-z][a-z_]*[a-z])\b|\b(?:meta|metadata)\s*,\s*'([a-z][a-z_]*)'/g)) names.add((m[1] ?? m[2])!);
  }
  return [...names].sort();
}

/** Query values. */
const BAD_QUERY: readonly string[] = [
  '', 'x', '-1', '0', '99999999999999999999', '1.5', 'null', '%00', '[]', '2026-13-45', 'a'.repeat(5000), 'true',
  // The ends of the calendar: well-formed dates and months the zone arithmetic and the store
  // could not take (500s until the platform audit).
  '0001-01', '0001-01-01', '9999-12', '9999-12-31',
];

const SDI_SECRET = 'route-fuzz-sdi-secret-0123456789';
const BILLING_SECRET = 'route-fuzz-billing-secret';

let t: TestApp;
let key: string;
/** Real ids a path can name, by the word before `{id}` in the path. */
const realIds: Record<string, string> = {};
let doc: { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };

beforeAll(async () => {
  // Never limited: thousands of requests on one key would otherwise meet 429s, not the routes.
  t = await startTestApp({ limiter: unlimitedLimiter(), config: { inboundSecrets: { sdi: SDI_SECRET }, billingWebhookSecret: BILLING_SECRET } });
  ({ key } = await t.signup());
  const locationId = await createLocation(t, key, 'fr-nf525');
  const tx = await t.request({ method: 'POST', url: '/v1/transactions', key, payload: saleBody(locationId) });
  expect(tx.statusCode).toBe(201);
  for (const system of SYSTEMS) realIds[`location:${system}`] = await createLocation(t, key, system);
  const hook = await t.request({ method: 'POST', url: '/v1/webhooks', key, payload: { url: 'https://receiver.invalid/hook', events: ['fiscalization.completed'] } });
  expect(hook.statusCode, hook.body).toBe(201);
  const keys = await t.request({ method: 'GET', url: '/v1/api-keys', key });
  Object.assign(realIds, {
    locations: locationId, transactions: tx.json().id, webhooks: hook.json().id, 'api-keys': keys.json().data?.[0]?.id ?? keys.json()[0]?.id,
  });
  doc = (await t.request({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(() => t?.close());

function resolve(s: Schema | undefined): Schema | undefined {
  if (!s) return undefined;
  if (s.$ref) return resolve(doc.components?.schemas?.[s.$ref.split('/').pop()!]);
  const alt = s.anyOf ?? s.oneOf ?? s.allOf;
  if (!s.properties && alt) {
    const properties = Object.assign({}, ...alt.map((a) => resolve(a)?.properties ?? {}));
    return { ...s, properties };
  }
  return s;
}

/** The request URLs of a path: each `{param}` a real id of its kind, then each bad one. */
function urlsOf(path: string): string[] {
  const params = [...path.matchAll(/\{(\w+)\}/g)];
  if (params.length === 0) return [path];
  const real = path.replace(/\/([\w-]+)\/\{\w+\}/g, (all, word: string) => (realIds[word] ? `/${word}/${realIds[word]}` : all));
  const out = /\{/.test(real) ? [] : [real];
  for (const bad of BAD_IDS) out.push(path.replace(/\{\w+\}/g, bad));
  return out;
}

/** A body each route would take, where the test has one: the wrong field goes beside the right ones. */
const BASES: Record<string, () => Record<string, unknown>> = {
  'POST /v1/transactions': () => saleBody(realIds.locations!),
  'POST /v1/transactions/preview': () => saleBody(realIds.locations!),
  'POST /v1/locations': () => ({ ...locationBody('pt-saft') }),
  'POST /v1/webhooks': () => ({ url: 'https://receiver.invalid/hook', events: ['fiscalization.completed'] }),
  'POST /v1/accounts': () => ({ name: 'Fuzz SL', billing_email: `fuzz-${Math.random().toString(36).slice(2)}@example.com` }),
};

interface Call { method: string; url: string; payload?: string; query?: Record<string, string> }

function callsOf(path: string, method: string, op: Operation): Call[] {
  const calls: Call[] = [];
  const upper = method.toUpperCase();
  const jsonBody = op.requestBody?.content?.['application/json'];
  const schema = resolve(jsonBody?.schema);
  const query = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  for (const url of urlsOf(path)) {
    calls.push({ method: upper, url });
    for (const name of query) for (const v of BAD_QUERY) calls.push({ method: upper, url, query: { [name]: v } });
    if (!jsonBody) continue;
    for (const body of BAD_BODIES) calls.push({ method: upper, url, payload: body });
    // Each property wrong in turn, alone and beside a body the route would take (a sale).
    const base = BASES[`${upper} ${path}`]?.() ?? {};
    for (const prop of Object.keys(schema?.properties ?? {})) {
      for (const v of BAD_VALUES) calls.push({ method: upper, url, payload: JSON.stringify({ ...base, [prop]: v }) });
    }
  }
  return calls;
}

describe('every documented route, bad input: never a 500', () => {
  it('covers the API reference', () => {
    expect(Object.keys(doc.paths).length).toBeGreaterThan(40);
    for (const kind of ['transactions', 'locations', 'webhooks', 'api-keys']) expect(realIds[kind], kind).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers every wrong body, query and id with a status below 500, as JSON with an error', async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        for (const c of callsOf(path, method, op)) {
          sent++;
          const res = await t.request({
            method: c.method as 'GET', url: c.url, key, ...(c.query ? { query: c.query } : {}),
            ...(c.payload !== undefined ? { payload: c.payload, headers: { 'content-type': 'application/json' } } : {}),
          });
          const shown = `${c.method} ${c.url.slice(0, 120)}${c.query ? ` ?${JSON.stringify(c.query).slice(0, 80)}` : ''}${c.payload ? ` ${c.payload.slice(0, 100)}` : ''}`;
          if (res.statusCode >= 500) failures.push(`${shown} → ${res.statusCode} ${res.body.slice(0, 200)}`);
          else if (res.statusCode >= 400 && res.headers['content-type']?.toString().includes('application/json') && typeof res.json().error === 'undefined') {
            failures.push(`${shown} → ${res.statusCode} without an error field: ${res.body.slice(0, 200)}`);
          }
        }
      }
    }
    expect(sent).toBeGreaterThan(3000);
    expect(failures).toEqual([]);
  }, 300_000);

  it('a sale to every system, each line field and each metadata field wrong in turn: never a 500', async () => {
    expect(metadataFields('it-sdi')).toContain('invoice_number');
    expect(metadataFields('es-sii')).toEqual(expect.arrayContaining(['simplified', 'issue_date']));
    const failures: string[] = [];
    for (const system of SYSTEMS) {
      const fields = metadataFields(system);
      const sale: Record<string, unknown> = saleBody(realIds[`location:${system}`]!, { ...saleLines[system], metadata: { ...saleMetadata[system] } });
      const item = (sale.items as Record<string, unknown>[])[0]!;
      const bodies: Record<string, unknown>[] = [];
      for (const v of BAD_VALUES) bodies.push({ ...sale, metadata: v }, { ...sale, items: v }, { ...sale, items: [v] });
      for (const prop of Object.keys(item)) for (const v of BAD_VALUES) bodies.push({ ...sale, items: [{ ...item, [prop]: v }] });
      for (const name of fields) for (const v of BAD_META) bodies.push({ ...sale, metadata: { ...(sale.metadata as object), [name]: v } });
      for (const body of bodies) {
        const res = await t.request({ method: 'POST', url: '/v1/transactions', key, payload: body });
        if (res.statusCode >= 500) failures.push(`${system} ${JSON.stringify(body).slice(0, 300)} → ${res.statusCode} ${res.body.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  }, 600_000);

  it('odd headers: keys, idempotency keys, content types, accept: never a 500', async () => {
    const failures: string[] = [];
    const sale = JSON.stringify(saleBody(realIds.locations!));
    const odd = ['', ' ', 'x'.repeat(10_000), 'é', '\u00ff\u00fe', 'a\tb', 'Bearer', 'Bearer ', `Bearer ${'x'.repeat(5000)}`, 'Basic dXNlcjpwYXNz', 'bearer ' + key, `Bearer ${key} extra`, `Bearer ${key.slice(0, -1)}`];
    const send = async (what: string, headers: Record<string, string>, url = '/v1/transactions', payload: string | undefined = sale) => {
      const res = await t.app.inject({ method: payload === undefined ? 'GET' : 'POST', url, ...(payload === undefined ? {} : { payload }), headers });
      if (res.statusCode >= 500) failures.push(`${what} → ${res.statusCode} ${res.body.slice(0, 200)}`);
    };
    for (const v of odd) {
      // Latin-1 text is what a raw header byte can carry; inject takes strings.
      await send(`authorization ${v.slice(0, 40)}`, { authorization: v, 'content-type': 'application/json' }, '/v1/locations', undefined);
      await send(`idempotency-key ${v.slice(0, 40)}`, { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': v });
    }
    for (const type of ['application/json; charset=utf-16', 'application/json; charset=latin1', 'application/json;;', 'application/JSON', 'application/vnd.api+json', 'application/json; boundary=x', '*/*', 'text/json']) {
      await send(`content-type ${type}`, { authorization: `Bearer ${key}`, 'content-type': type, 'idempotency-key': `ct-${type}` });
    }
    for (const accept of ['application/xml', 'text/html', '*/*;q=0', 'application/json;q=x', 'x'.repeat(5000)]) {
      await send(`accept ${accept.slice(0, 40)}`, { authorization: `Bearer ${key}`, accept }, `/v1/transactions/${realIds.transactions}`, undefined);
      await send(`accept ${accept.slice(0, 40)} (receipt)`, { authorization: `Bearer ${key}`, accept }, `/v1/transactions/${realIds.transactions}/receipt`, undefined);
    }
    expect(failures).toEqual([]);
  });

  it('XML to the authority receiver, forms to the certificate upload, events to the billing receiver: never a 500, nothing read from disk', async () => {
    const sdiNotice = fs.readFileSync(new URL('../../src/countries/it-sdi/fixtures/notifications/NS.xml', import.meta.url), 'utf8');
    const xml: string[] = [
      '', ' ', '<', '<a>', '<a></b>', 'not xml at all', '\u0000<a/>', '<?xml version="1.0" encoding="UTF-16"?><a/>',
      // Entities: expanded a billion times, or read from the disk (XXE): neither may happen.
      '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">' +
        '<!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">]><l>&f;&f;&f;&f;&f;</l>',
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><x>&xxe;</x>',
      sdiNotice.replace(/<NomeFile>[^<]+<\/NomeFile>/, '<NomeFile>&xxe;</NomeFile>').replace('<?xml version="1.0" encoding="UTF-8"?>', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'),
      '<a>'.repeat(20_000) + '</a>'.repeat(20_000),
      sdiNotice, sdiNotice.replace(/<IdentificativoSdI>\d+<\/IdentificativoSdI>/g, '<IdentificativoSdI>x'.repeat(1000) + '</IdentificativoSdI>'),
      sdiNotice.replace(/<NomeFile>[^<]+<\/NomeFile>/, ''), sdiNotice.replace(/<ListaErrori>[\s\S]*<\/ListaErrori>/, '<ListaErrori><Errore/></ListaErrori>'),
    ];
    const failures: string[] = [];
    const check = (what: string, res: { statusCode: number; body: string }) => {
      if (res.statusCode >= 500) failures.push(`${what.slice(0, 160)} → ${res.statusCode} ${res.body.slice(0, 200)}`);
      if (res.body.includes('root:')) failures.push(`${what.slice(0, 160)} → answered with /etc/passwd`);
    };
    for (const body of xml) {
      for (const contentType of ['application/xml', 'text/xml; charset=utf-8', 'application/soap+xml', 'application/json']) {
        check(`inbound ${contentType} ${body}`, await t.request({ method: 'POST', url: '/v1/inbound/sdi', payload: body, headers: { 'content-type': contentType, 'x-sdi-secret': SDI_SECRET } }));
      }
    }
    const p12 = Buffer.from('3082010a0201033082', 'hex');
    const forms: Parameters<typeof multipartBody>[0][] = [
      [], [{ name: 'certificate_id', value: 'x' }], [{ name: 'password', value: 'x' }],
      [{ name: 'certificate', filename: 'c.p12', data: Buffer.alloc(0) }, { name: 'password', value: '' }, { name: 'certificate_id', value: 'c1' }],
      [{ name: 'certificate', filename: 'c.p12', data: p12 }, { name: 'password', value: 'x'.repeat(100_000) }, { name: 'certificate_id', value: 'c1' }],
      [{ name: 'certificate', filename: 'c.p12', data: Buffer.from('not a p12') }, { name: 'password', value: 'pw' }, { name: 'certificate_id', value: '../../etc' }],
      [{ name: 'certificate', filename: '../../x.p12', data: p12 }, { name: 'password', value: 'pw' }, { name: 'certificate_id', value: 'é\u0000'.repeat(50) }],
      [{ name: 'certificate', value: 'text instead of a file' }, { name: 'password', value: 'pw' }, { name: 'certificate_id', value: 'c2' }],
      [{ name: 'certificate', filename: 'a.p12', data: p12 }, { name: 'certificate', filename: 'b.p12', data: p12 }, { name: 'password', value: 'pw' }, { name: 'certificate_id', value: 'c3' }],
    ];
    for (const parts of forms) {
      const { payload, headers } = multipartBody(parts);
      check(`certificates ${JSON.stringify(parts.map((p) => p.name))}`, await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers }));
    }
    check('certificates, a broken boundary', await t.request({ method: 'POST', url: '/v1/certificates', key, payload: '--x\r\nnot a part', headers: { 'content-type': 'multipart/form-data; boundary=x' } }));
    check('certificates, no boundary', await t.request({ method: 'POST', url: '/v1/certificates', key, payload: 'x', headers: { 'content-type': 'multipart/form-data' } }));
    const now = Math.floor(Date.now() / 1000);
    const events = ['', 'null', '[]', '{}', '{"id":"evt_1"}', '{"id":"evt_2","type":"invoice.payment_succeeded"}', '{"id":"evt_3","type":"invoice.payment_succeeded","data":null}',
      '{"id":"evt_4","type":"invoice.payment_failed","data":{"object":{"customer":12}}}', '{"id":"evt_5","type":"customer.subscription.deleted","data":{"object":[]}}', '{"id":7,"type":{}}'];
    for (const body of events) {
      for (const signature of [billingSignatureHeader(BILLING_SECRET, now, body), 't=,v1=', 't=abc,v1=zz', `t=${'9'.repeat(30)},v1=00`, 'v1=' + 'a'.repeat(10_000), ',,,,']) {
        check(`billing ${signature.slice(0, 30)} ${body}`, await t.request({ method: 'POST', url: '/v1/webhooks/stripe', payload: body, headers: { 'content-type': 'application/json', 'billing-signature': signature } }));
      }
    }
    expect(failures).toEqual([]);
  }, 300_000);
});
