import { describe, expect, it } from 'vitest';
import { nifMismatchWarning } from './nif-match.ts';

describe('nifMismatchWarning', () => {
  it('matches regardless of case, separators and the ES prefix', () => {
    expect(nifMismatchWarning('B12345674', 'b-12345674', 'x')).toBeNull();
    expect(nifMismatchWarning('B12345674', 'ESB12345674', 'x')).toBeNull();
    expect(nifMismatchWarning(null, 'B12345674', 'x')).toBeNull();
    expect(nifMismatchWarning('B12345674', null, 'x')).toBeNull();
  });
  it('names both values and the place when they differ', () => {
    expect(nifMismatchWarning('12345678Z', 'B12345674', 'location L1')).toBe('certificate NIF 12345678Z differs from tax_id B12345674 of location L1');
  });
});
