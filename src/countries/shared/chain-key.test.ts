import { describe, expect, it } from 'vitest';
import { chainKeyOf, escapeKeyPart, hasKeySeparator, inEnvironment, keyPartAllowed } from './chain-key.ts';

const LOC = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';

describe('chain keys', () => {
  it('compose as they always did: written out literally, so no stored chain moves', () => {
    expect(chainKeyOf('sys', LOC, 'FT A')).toBe('sys:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee:FT A');
    expect(inEnvironment(chainKeyOf('sys', LOC, 'A'), 'live')).toBe('sys:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee:A:live');
    expect(inEnvironment(chainKeyOf('sys', LOC, 'A'), 'test')).toBe('sys:aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee:A');
  });

  it('escapeKeyPart leaves ordinary text as it is and percent-encodes %, : and #', () => {
    for (const text of ['A', 'default', 'TB-2026', '2026/A.1_x', 'ΑΠΥ', 'A*B', 'A B']) expect(escapeKeyPart(text)).toBe(text);
    expect(escapeKeyPart('A:live')).toBe('A%3Alive');
    expect(escapeKeyPart('A#annulments')).toBe('A%23annulments');
    expect(escapeKeyPart('10%')).toBe('10%25');
    expect(escapeKeyPart('%3A')).toBe('%253A');
  });

  it('escaped, a series no longer keys the live chain or the side sequence of another', () => {
    const key = (series: string, env: 'test' | 'live') => inEnvironment(chainKeyOf('sys', LOC, escapeKeyPart(series)), env);
    // Raw, these collided: test `A:live` and live `A`; `A#annulments` and the annulments of `A`.
    expect(inEnvironment(chainKeyOf('sys', LOC, 'A:live'), 'test')).toBe(inEnvironment(chainKeyOf('sys', LOC, 'A'), 'live'));
    expect(key('A:live', 'test')).not.toBe(key('A', 'live'));
    expect(key('A#annulments', 'test')).not.toBe(`${key('A', 'test')}#annulments`);
    // …and the encoding tells apart what looks alike once decoded (`%3A` typed, `:` typed).
    expect(key('A%3Alive', 'test')).not.toBe(key('A:live', 'test'));
  });

  it('hasKeySeparator and keyPartAllowed: a new separator refused, the stored value kept', () => {
    expect(['A:1', 'A#1', ':', '#'].map(hasKeySeparator)).toEqual([true, true, true, true]);
    expect(['A', 'A-1', 'A/1', 'A*1', 'A%1'].map(hasKeySeparator)).toEqual([false, false, false, false, false]);
    expect(keyPartAllowed('A', undefined)).toBe(true);
    expect(keyPartAllowed('A:1', undefined)).toBe(false);
    expect(keyPartAllowed('A:1', 'A:2')).toBe(false);
    expect(keyPartAllowed('A:1', 'A:1')).toBe(true);
  });
});
