import { describe, expect, it } from 'vitest';
import { lastAcceptedCorrection, type CorrectionStatus } from './corrections-repo.ts';

const c = (id: string, status: CorrectionStatus) => ({ id, status });

describe('the last accepted correction of a transaction', () => {
  it('none when there are none, or none was accepted (refused, pending)', () => {
    expect(lastAcceptedCorrection([])).toBeUndefined();
    expect(lastAcceptedCorrection([c('r1', 'rejected')])).toBeUndefined();
    expect(lastAcceptedCorrection([c('r1', 'rejected'), c('p1', 'pending')])).toBeUndefined();
  });

  it('of several accepted, the last (oldest first); refused or pending ones after it do not count', () => {
    expect(lastAcceptedCorrection([c('a1', 'accepted'), c('a2', 'accepted')])?.id).toBe('a2');
    expect(lastAcceptedCorrection([c('a1', 'accepted'), c('r1', 'rejected'), c('a2', 'accepted'), c('r2', 'rejected'), c('p1', 'pending')])?.id).toBe('a2');
    expect(lastAcceptedCorrection([c('r1', 'rejected'), c('a1', 'accepted')])?.id).toBe('a1');
  });
});
