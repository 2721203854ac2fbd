import { describe, expect, it } from 'vitest';
import { ticketBaiSandboxFor } from '../es-ticketbai/sandbox.ts';
import { siiSandboxFor } from '../es-sii/sandbox.ts';
import { verifactuSandboxFor } from '../es-verifactu/sandbox.ts';
import type { AuthorityCode } from '../types.ts';
import { withDuplicates } from './sandbox.ts';

const flagged = (codes: Readonly<Record<string, AuthorityCode>>) => Object.entries(codes).filter(([, c]) => c.duplicate === true).map(([code]) => code).sort();
const where = (territory: string) => ({ config: { territory } });

describe('Spanish stubs: duplicates per service', () => {
  it('withDuplicates flags exactly the listed codes, keeps each entry otherwise, and refuses a code it does not know', () => {
    const codes: Record<string, AuthorityCode> = {
      A: { message: 'a', category: 'submission', retriable: false, duplicate: true },
      B: { message: 'b', category: 'validation', retriable: false },
    };
    expect(withDuplicates(codes, ['B'])).toEqual({ A: { message: 'a', category: 'submission', retriable: false }, B: { ...codes.B, duplicate: true } });
    expect(() => withDuplicates(codes, ['C'])).toThrow(/C is not in the codes table/);
  });

  it('each stub flags the codes its real client reads as duplicates for that record', () => {
    expect(flagged(ticketBaiSandboxFor({ kind: 'record' }, where('gipuzkoa')).codes)).toEqual(['005', '019']);
    expect(flagged(ticketBaiSandboxFor({ kind: 'cancellation' }, where('araba')).codes)).toEqual(['019']);
    expect(flagged(ticketBaiSandboxFor({ kind: 'record' }, where('bizkaia')).codes)).toEqual(['B4_2000003']);
    expect(flagged(ticketBaiSandboxFor({ kind: 'cancellation' }, where('bizkaia')).codes)).toEqual(['B4_2000006']);
    expect(flagged(verifactuSandboxFor({ kind: 'record' }).codes)).toEqual(['3000']);
    expect(flagged(verifactuSandboxFor({ kind: 'cancellation' }).codes)).toEqual(['3000', '3001']);
    expect(flagged(siiSandboxFor({ kind: 'record' }).codes)).toEqual(['3000']);
    expect(flagged(siiSandboxFor({ kind: 'cancellation' }).codes)).toEqual(['3000', '3001']);
  });
});
