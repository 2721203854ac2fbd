import { describe, expect, it } from 'vitest';
import { sii } from './index.ts';
import { draft, location } from '../shared/test-fixtures.ts';

/*
 * The chain key of an SII record: the series is the merchant's free text, escaped in the
 * key (shared/chain-key.ts escapeKeyPart) so that no series keys another's chain; the
 * ordinary ones keep their key exactly (written out literally).
 */
const loc = location('es-sii');
const keyOf = (metadata: Record<string, unknown>) => sii.chainKey({ location: loc, tx: draft({ metadata }) });

describe('es-sii chainKey', () => {
  it('an ordinary series (or none) keeps its key', () => {
    expect(keyOf({ series: 'A' })).toBe('es-sii:7d9c5a34-6e1f-4b2a-8c3d-1e2f3a4b5c6d:A');
    expect(keyOf({ series: 'TB-2026/1' })).toBe('es-sii:7d9c5a34-6e1f-4b2a-8c3d-1e2f3a4b5c6d:TB-2026/1');
    expect(keyOf({})).toBe('es-sii:7d9c5a34-6e1f-4b2a-8c3d-1e2f3a4b5c6d:default');
  });

  it('a series with ":", "#" or "%" is escaped: no `:live` or `#annulments` of another series', () => {
    expect(keyOf({ series: 'A:live' })).toBe('es-sii:7d9c5a34-6e1f-4b2a-8c3d-1e2f3a4b5c6d:A%3Alive');
    expect(keyOf({ series: 'A#annulments' })).toBe('es-sii:7d9c5a34-6e1f-4b2a-8c3d-1e2f3a4b5c6d:A%23annulments');
    expect(keyOf({ series: '5%' })).toBe('es-sii:7d9c5a34-6e1f-4b2a-8c3d-1e2f3a4b5c6d:5%25');
  });
});
