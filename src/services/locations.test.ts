import { describe, expect, it } from 'vitest';
import { configChanges } from './locations.ts';

describe('configChanges: what a PATCH does to a location config, as its system is told', () => {
  it('names the fields whose value changes, in the new config\'s order then the dropped ones, with their values', () => {
    expect(configChanges({ a: '1', b: 'x', gone: true }, { b: 'y', a: '1', added: { n: 2 } }, [])).toEqual([
      { field: 'b', secret: false, before: 'x', after: 'y' },
      { field: 'added', secret: false, after: { n: 2 } },
      { field: 'gone', secret: false, before: true },
    ]);
  });

  it('equal values (objects compared deeply) are no change', () => {
    expect(configChanges({ a: { x: [1, 2] }, b: 's' }, { b: 's', a: { x: [1, 2] } }, [])).toEqual([]);
  });

  it('a secret field is named, never valued', () => {
    const out = configChanges({ key: 'old-secret', n: '1' }, { key: 'new-secret', n: '1' }, ['key']);
    expect(out).toEqual([{ field: 'key', secret: true }]);
    expect(JSON.stringify(out)).not.toMatch(/old-secret|new-secret/);
  });
});
