import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';

const nested = (n: number) => '['.repeat(n) + '1' + ']'.repeat(n);

describe('nestsDeeperThan', () => {
  it('counts objects and arrays to the limit, not past it', () => {
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[{"c":1}]}}', 3)).toBe(true);
    // Siblings do not add up: depth, not count.
    expect(nestsDeeperThan(JSON.stringify({ items: Array.from({ length: 500 }, () => ({ x: [1] })) }), 4)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(JSON.stringify({ note: '['.repeat(500) }), 2)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ note: '\\"[[[[' + '"{{{{' }), 1)).toBe(false);
    expect(nestsDeeperThan('{"a":"\\\\"}', 1)).toBe(false); // an escaped backslash ends before the quote
  });
});
