import { describe, expect, it } from 'vitest';
import type { ChainLink } from '../../../core/chain-link.ts';
import type { LedgerEntry } from '../../../ledger/types.ts';
import type { Queryable } from '../../../store/db.ts';
import { fixedRecordKey, location as testLocation } from '../../shared/test-fixtures.ts';
import type { LocationChange, LocationChangeDeps } from '../../types.ts';
import { nf525 } from '../index.ts';
import { buildJet, type JetInput, type Nf525JetEntry } from './jet.ts';
import { environmentsOf, jetEventOf, journalLocationChange, parameterDetails } from './location-changes.ts';
import { verifyJet } from './verify.ts';

const key = fixedRecordKey();
const software = { name: 'Fiscalization API', version: '0.1.0' };
const NOW = new Date('2026-03-02T09:00:00.000Z');
const SIRET = '73282932000074';
const SIREN = '732829320';

describe('France: a location change as a JET event', () => {
  it('a parameters event names each changed field with its value before and after, and the status', () => {
    expect(parameterDetails([{ field: 'legal_name', secret: false, before: 'Exemple SAS', after: 'Nouveau Nom SAS' }], { before: 'active', after: 'inactive' })).toEqual({
      fields: 'country_config.legal_name,status',
      'country_config.legal_name.before': 'Exemple SAS',
      'country_config.legal_name.after': 'Nouveau Nom SAS',
      'status.before': 'active',
      'status.after': 'inactive',
    });
  });

  it('a secret field is named, never valued; a field set for the first time has no before', () => {
    const d = parameterDetails([
      { field: 'api_secret', secret: true },
      { field: 'register_id', secret: false, after: SIRET },
    ]);
    expect(d).toEqual({ fields: 'country_config.api_secret,country_config.register_id', 'country_config.register_id.after': SIRET });
  });

  it('a deletion is a register_deleted event with the status it had', () => {
    const change: LocationChange = { kind: 'deleted', location: testLocation('fr-nf525'), status: 'inactive', environment: 'test' };
    expect(jetEventOf(change)).toEqual({ event: 'register_deleted', details: { status: 'inactive' } });
  });

  it('France declares the hook (the locations service calls it)', () => {
    expect(nf525.onLocationChanged).toBe(journalLocationChange);
  });
});

/** A Queryable answering the JET heads given (chain key → seq). */
const headsDb = (heads: Record<string, number>): Queryable => ({
  query: async (_sql: string, params?: unknown[]) => {
    const seq = heads[String(params?.[0])];
    return { rows: seq === undefined ? [] : [{ seq, last_fingerprint: 'x', last_link: null }], rowCount: seq === undefined ? 0 : 1 };
  },
}) as unknown as Queryable;

describe('France: which JETs a location change goes to', () => {
  it('the request\'s environment; live first (written with the change) once live is involved', async () => {
    expect(await environmentsOf(headsDb({}), 'L', 'test')).toEqual(['test']);
    expect(await environmentsOf(headsDb({}), 'L', 'live')).toEqual(['live']);
    expect(await environmentsOf(headsDb({ 'fr-nf525:L:jet:live': 3 }), 'L', 'test')).toEqual(['live', 'test']);
    expect(await environmentsOf(headsDb({ 'fr-nf525:L:jet:test': 2 }), 'L', 'live')).toEqual(['live', 'test']);
  });
});

describe('France: the change commits in the JET entry\'s transaction', () => {
  const loc = testLocation('fr-nf525', { legal_name: 'Nouveau Nom SAS', register_id: SIRET });
  const change: LocationChange = {
    kind: 'updated', location: loc, config: [{ field: 'legal_name', secret: false, before: 'Exemple SAS', after: 'Nouveau Nom SAS' }], environment: 'test',
  };
  const tx = { query: async () => ({ rows: [], rowCount: 0 }) } as unknown as Queryable;
  const depsWith = (append: (e: LedgerEntry) => Promise<void>, logged: unknown[] = []): LocationChangeDeps => ({
    db: headsDb({ [`fr-nf525:${loc.id}:jet:live`]: 1 }) as LocationChangeDeps['db'], clock: { now: () => NOW } as LocationChangeDeps['clock'],
    log: { error: (o: unknown) => void logged.push(o) } as unknown as LocationChangeDeps['log'],
    ledger: { append: async (e: LedgerEntry) => { await append(e); return undefined as never; }, preview: async () => undefined as never },
    signingKeys: { recordKey: async () => key } as unknown as LocationChangeDeps['signingKeys'],
    software: { ...software, vendorTaxId: 'A99800005' } as LocationChangeDeps['software'],
  });

  it('the change is written by the first entry\'s afterWrite (live), in its transaction; the test JET gets the same event after', async () => {
    const appended: { chainKey: string; entry: Nf525JetEntry; hasWrite: boolean }[] = [];
    const committed: Queryable[] = [];
    await journalLocationChange(depsWith(async (e) => {
      const built = e.build({ seq: 1, previous: null }, NOW);
      if (e.afterWrite) await e.afterWrite(tx, built, NOW);
      appended.push({ chainKey: e.chainKey, entry: JSON.parse(built.record.body) as Nf525JetEntry, hasWrite: e.afterWrite !== undefined });
    }), change, async (q) => void committed.push(q));
    expect(committed).toEqual([tx]);
    expect(appended.map((a) => [a.chainKey, a.hasWrite, a.entry.event, a.entry.code, a.entry.register_id])).toEqual([
      [`fr-nf525:${loc.id}:jet:live`, true, 'parameters', '20', SIRET],
      [`fr-nf525:${loc.id}:jet:test`, false, 'parameters', '20', SIRET],
    ]);
  });

  it('the first append failing fails the change (nothing committed); the second failing is logged, the change stands', async () => {
    const committed: Queryable[] = [];
    await expect(journalLocationChange(depsWith(async () => { throw new Error('store lost'); }), change, async (q) => void committed.push(q))).rejects.toThrow('store lost');
    expect(committed).toEqual([]);

    const logged: unknown[] = [];
    let n = 0;
    await journalLocationChange(depsWith(async (e) => {
      if (n++ > 0) throw new Error('store lost');
      if (e.afterWrite) await e.afterWrite(tx, e.build({ seq: 1, previous: null }, NOW), NOW);
    }, logged), change, async (q) => void committed.push(q));
    expect(committed).toEqual([tx]);
    expect(logged).toMatchObject([{ environment: 'test', event: 'parameters' }]);
  });
});

describe('France: the JET verifier and a register id changed before the first record', () => {
  const base = (over: Partial<JetInput>): JetInput => ({
    accountId: 'acc', locationId: 'L', registerId: SIREN, environment: 'test', event: 'export', key, software,
    details: { file: 'jet', limit: '20', offset: '0', count: '0' }, ...over,
  });
  const chain = (inputs: JetInput[]): Nf525JetEntry[] => {
    const out: Nf525JetEntry[] = [];
    for (const input of inputs) {
      const prev = out[out.length - 1];
      const link: ChainLink = { seq: out.length + 1, previous: prev ? { fingerprint: prev.signature.value, fiscalId: prev.number, issuedAt: NOW.toISOString() } : null };
      out.push(buildJet(input, link, NOW).entry);
    }
    return out;
  };
  const moved = (before: string, after: string) => parameterDetails([{ field: 'register_id', secret: false, before, after }]);

  it('the chain moves to the new register at the parameters event that says so', () => {
    const entries = chain([base({}), base({ registerId: SIRET, event: 'parameters', details: moved(SIREN, SIRET) }), base({ registerId: SIRET })]);
    expect(verifyJet(entries, key.publicKeyPem)).toMatchObject({ ok: true, count: 3 });
  });

  it('anywhere else a register change is a break: an ordinary event, or a parameters event naming another register', () => {
    const silent = chain([base({}), base({ registerId: SIRET })]);
    expect(verifyJet(silent, key.publicKeyPem)).toMatchObject({ ok: false, break: { index: 1, reason: 'register or environment differs from the document before it' } });
    const wrong = chain([base({}), base({ registerId: SIRET, event: 'parameters', details: moved('552100554', SIRET) })]);
    expect(verifyJet(wrong, key.publicKeyPem)).toMatchObject({ ok: false, break: { index: 1 } });
    const legalName = chain([base({}), base({ registerId: SIRET, event: 'parameters', details: parameterDetails([{ field: 'legal_name', secret: false, before: 'A', after: 'B' }]) })]);
    expect(verifyJet(legalName, key.publicKeyPem)).toMatchObject({ ok: false, break: { index: 1 } });
  });
});
