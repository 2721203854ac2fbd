import { describe, expect, it } from 'vitest';
import { inlineParams } from './pg-db.ts';

describe('inlineParams (the statement BEGIN travels with)', () => {
  it('writes values as the literals the driver would send, quoted by its own escaping', () => {
    const sql = inlineParams('SELECT $1::text, $2::timestamptz, $3::text[], $10, $4::bytea, $5::int, $6, $7::jsonb', [
      "it's \\ here", new Date('2026-01-01T00:00:00Z'), ['a', 'b"c'], Buffer.from([1, 255]), 5, null, { k: "o'k" }, 0, 0, 'ten',
    ]);
    expect(sql).toBe(
      `SELECT  E'it''s \\\\ here'::text, '2026-01-01T00:00:00.000+00:00'::timestamptz,  E'{"a","b\\\\"c"}'::text[], 'ten', '\\x01ff'::bytea, '5'::int, NULL, '{"k":"o''k"}'::jsonb`,
    );
  });
});
