import { describe, expect, it } from 'vitest';
import { issuerAsIssued } from '../../../store/repos/fiscal-records-repo.ts';
import type { BatchClaim } from '../../../store/repos/transactions-repo.ts';
import { groupLroeClaims, lroeNameOf } from './groups.ts';

function claim(id: string, o: { taxId?: string | null; kind?: 'record' | 'cancellation'; mode?: 'stub' | 'authority' | null; loc?: string; issuer?: unknown } = {}): BatchClaim {
  return {
    t: { id, sandbox_mode: o.mode === undefined ? 'stub' : o.mode } as BatchClaim['t'],
    record: { kind: o.kind ?? 'record', body: '<TicketBai/>', content_type: 'application/xml', fiscal_id: null, ...(o.issuer !== undefined ? { issuer: o.issuer } : {}) },
    location: { id: o.loc ?? 'loc-1', tax_id: o.taxId === undefined ? 'B12345674' : o.taxId } as BatchClaim['location'],
    // As the claim hands it (batchTransactionsRepo.claim): the kept issuer, read.
    issuer: issuerAsIssued(o.issuer),
  };
}

describe('LROE groups', () => {
  it('one group per issuer, kind and mode; altas first; claim order kept inside a group', () => {
    const groups = groupLroeClaims([
      claim('c1', { kind: 'cancellation' }),
      claim('a1'),
      claim('b1', { taxId: 'A58818501' }),
      claim('a2', { loc: 'loc-2' }), // another location of the same issuer
      claim('x1', { mode: 'authority' }),
      claim('a3', { mode: null }), // rows from before sandbox_mode: the stub
      claim('a4', { taxId: ' b12345674 ' }),
    ]);
    expect(groups.map((g) => [g.kind, g.issuerTaxId, g.mode, g.claims.map((c) => c.t.id)])).toEqual([
      ['alta', 'A58818501', 'stub', ['b1']],
      ['alta', 'B12345674', 'authority', ['x1']],
      ['alta', 'B12345674', 'stub', ['a1', 'a2', 'a3', 'a4']],
      ['anulacion', 'B12345674', 'stub', ['c1']],
    ]);
  });

  it('a location without tax_id is a group of its own', () => {
    const groups = groupLroeClaims([claim('a1', { taxId: null }), claim('a2')]);
    expect(groups.map((g) => g.issuerTaxId)).toEqual(['B12345674', 'location:loc-1']);
  });

  it('records of one issuer issued under different names go apart, each group with its issuer as issued, in the order of its first record', () => {
    const old = { name: 'Taberna', address: 'Kale Nagusia 1', legal_name: 'Nombre Antiguo SL' };
    const renamed = { ...old, legal_name: 'Nombre Nuevo SL' };
    const groups = groupLroeClaims([
      claim('a1', { issuer: old }),
      claim('a2', { issuer: renamed }),
      claim('a3', { issuer: old }),
      claim('a4', { issuer: null }), // stored before the issuer was kept: the location now names it
      claim('a5', { issuer: { ...old, legal_name: null } }), // no legal name when issued: the name
    ]);
    expect(groups.map((g) => [g.issuerTaxId, g.issuer?.legalName, g.issuer?.name, g.claims.map((c) => c.t.id)])).toEqual([
      ['B12345674', 'Nombre Antiguo SL', 'Taberna', ['a1', 'a3']],
      ['B12345674', 'Nombre Nuevo SL', 'Taberna', ['a2']],
      ['B12345674', undefined, undefined, ['a4']],
      ['B12345674', null, 'Taberna', ['a5']],
    ]);
    expect(groups.map((g) => (g.issuer ? lroeNameOf(g.issuer) : null))).toEqual(['Nombre Antiguo SL', 'Nombre Nuevo SL', null, 'Taberna']);
  });
});
