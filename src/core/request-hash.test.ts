import { describe, expect, it } from 'vitest';
import { requestHash, sameRequest } from './request-hash.ts';
import { stableHash } from './stable-json.ts';

const body = { location_id: 'l', items: [{ description: 'Café', quantity: 1, unit_price: 100, tax_rate: 20 }], metadata: { a: 1, b: 2 } };
const text = JSON.stringify(body);
const stored = (r: { body: unknown; text?: string; sandbox: string | undefined }) => ({ request_hash: requestHash(r), request_payload: r.body });

describe('requestHash', () => {
  it('hashes the text as received, with the sandbox header', () => {
    expect(requestHash({ body, text, sandbox: undefined })).toMatch(/^r1::[0-9a-f]{64}$/);
    expect(requestHash({ body, text, sandbox: 'authority' })).toMatch(/^r1:authority:[0-9a-f]{64}$/);
    // Without a text (the embedded engine): the body as JSON.stringify writes it.
    expect(requestHash({ body, sandbox: undefined })).toBe(requestHash({ body, text, sandbox: undefined }));
  });
});

describe('sameRequest', () => {
  const first = stored({ body, text, sandbox: undefined });
  it('the same text is the same request', () => {
    expect(sameRequest(first, { body, text, sandbox: undefined })).toBe(true);
  });
  it('the same JSON value in another text is the same request', () => {
    const reordered = { metadata: { b: 2, a: 1 }, items: body.items, location_id: 'l' };
    expect(sameRequest(first, { body: reordered, text: `  ${JSON.stringify(reordered, null, 2)}`, sandbox: undefined })).toBe(true);
  });
  it('another value, or another sandbox header, is another request', () => {
    const changed = { ...body, metadata: { a: 1, b: 3 } };
    expect(sameRequest(first, { body: changed, text: JSON.stringify(changed), sandbox: undefined })).toBe(false);
    expect(sameRequest(first, { body, text, sandbox: 'authority' })).toBe(false);
    expect(sameRequest(stored({ body, text, sandbox: 'authority' }), { body, text, sandbox: undefined })).toBe(false);
  });
  it('a hash stored before r1 (stable JSON of body and sandbox) is compared as it was made', () => {
    const legacy = { request_hash: stableHash({ body, sandbox: null }), request_payload: body };
    expect(sameRequest(legacy, { body: { metadata: { b: 2, a: 1 }, items: body.items, location_id: 'l' }, sandbox: undefined })).toBe(true);
    expect(sameRequest(legacy, { body, sandbox: 'authority' })).toBe(false);
    expect(sameRequest(legacy, { body: { ...body, location_id: 'm' }, sandbox: undefined })).toBe(false);
  });
});

describe('sameRequest: an endpoint whose hashes before r1 were made otherwise', () => {
  it('compares a hash stored before r1 with the legacy hash it is given; r1 hashes as any other', () => {
    const read = { transaction: 't1', changes: { metadata: { a: 1 } }, sandbox_outcome: null };
    const legacyHash = (r: { body: unknown }) => stableHash(r.body);
    const legacy = { request_hash: stableHash(read), request_payload: read };
    expect(sameRequest(legacy, { body: { ...read }, sandbox: undefined }, undefined, legacyHash)).toBe(true);
    // The create's legacy rule (body and sandbox together) would not know it.
    expect(sameRequest(legacy, { body: { ...read }, sandbox: undefined })).toBe(false);
    expect(sameRequest(legacy, { body: { ...read, transaction: 't2' }, sandbox: undefined }, undefined, legacyHash)).toBe(false);
    const r1 = stored({ body: read, sandbox: undefined });
    expect(sameRequest(r1, { body: { sandbox_outcome: null, changes: { metadata: { a: 1 } }, transaction: 't1' }, sandbox: undefined }, undefined, legacyHash)).toBe(true);
  });
});
