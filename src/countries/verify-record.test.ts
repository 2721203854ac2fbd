import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { goldenChain } from './es-verifactu/golden-cases.ts';
import { verifactu } from './es-verifactu/index.ts';
import { ticketBai } from './es-ticketbai/index.ts';
import { goldenDcCases, goldenDcLocation } from './it-dc/golden-cases.ts';
import { documentoCommerciale as dc } from './it-dc/index.ts';
import { goldenMyDataCases, goldenLocation } from './gr-mydata/golden-cases.ts';
import { myData } from './gr-mydata/index.ts';
import { goldenProducerKey, goldenPtCases, goldenPtLocation } from './pt-saft/golden-cases.ts';
import { saft } from './pt-saft/index.ts';
import type { ChainedRecord, FiscalRecord } from './types.ts';
import { chained, location, verifyRun } from './shared/test-fixtures.ts';

/**
 * The plug-ins' `verifyRecord` (verify-chain) on their golden chains: sound as built, and
 * the first fault named when a body, a signature or a link is changed. The CLI test
 * (test/cli/operator.test.ts) runs them on stored records of every system.
 */
const run = (records: readonly FiscalRecord[]): ChainedRecord[] => records.map((r, i) => chained(r, i + 1, i > 0 ? records[i - 1]! : null));
const edit = (list: ChainedRecord[], seq: number, change: (body: string) => string): ChainedRecord[] =>
  list.map((r) => (r.seq === seq ? { ...r, body: change(r.body) } : r));

describe('verifyRecord', () => {
  it('VERI*FACTU: huella recomputed, Encadenamiento checked', () => {
    const loc = location('es-verifactu');
    const list = run(goldenChain(loc).map((c) => c.record));
    expect(verifyRun(verifactu, loc, list)).toBeNull();
    expect(verifyRun(verifactu, loc, edit(list, 2, (b) => b.replace(/<sf:ImporteTotal>[^<]+</, '<sf:ImporteTotal>9.99<')))).toMatchObject({ seq: 2, kind: 'body_changed' });
    // Record 3 presented after record 1: its Encadenamiento names record 2.
    expect(verifyRun(verifactu, loc, [list[0]!, { ...list[2]!, seq: 2 }])).toMatchObject({ seq: 2, kind: 'link_broken' });
  });

  it('TicketBAI: XAdES-EPES verified as signed, SignatureValue is the fingerprint, the chain excerpt checked', () => {
    const loc = location('es-ticketbai');
    const body = (f: string) => readFileSync(new URL(`./es-ticketbai/golden/${f}`, import.meta.url), 'utf8');
    const sigOf = (xml: string) => /<ds:SignatureValue[^>]*>([^<]+)</.exec(xml)![1]!;
    const first = body('gipuzkoa-first.xml');
    const second = body('gipuzkoa-chained.xml');
    const rec = (xml: string, seq: number, prev: string | null): ChainedRecord => ({
      chainKey: 'k', seq, kind: 'record', transactionId: null, body: xml, contentType: 'application/xml', fingerprint: sigOf(xml),
      previousFingerprint: prev ? sigOf(prev) : null, fiscalId: null, documentNumber: null,
    });
    const list = [rec(first, 1, null), rec(second, 2, first)];
    expect(verifyRun(ticketBai, loc, list)).toBeNull();
    expect(verifyRun(ticketBai, loc, edit(list, 2, (b) => b.replace(/<ImporteTotalFactura>[^<]+</, '<ImporteTotalFactura>1.00<')))).toMatchObject({ seq: 2, kind: 'body_changed' });
    expect(verifyRun(ticketBai, loc, edit(list, 1, (b) => b.replace(/(<ds:SignatureValue[^>]*>)(.)/, (_m, t: string, c: string) => `${t}${c === 'A' ? 'B' : 'A'}`)))).toMatchObject({ seq: 1, kind: 'signature_invalid' });
    // The chained invoice alone, as if it were the first: it names a previous invoice.
    expect(verifyRun(ticketBai, loc, [rec(second, 1, null)])).toMatchObject({ seq: 1, kind: 'link_broken' });
  });

  it('DC: seal verified, fingerprint = SHA-256 of the SignatureValue, signed link checked', () => {
    const loc = goldenDcLocation();
    const list = run(goldenDcCases(loc).map((c) => c.record));
    expect(verifyRun(dc, loc, list)).toBeNull();
    expect(verifyRun(dc, loc, edit(list, 2, (b) => b.replace(/(<ds:SignatureValue[^>]*>)(.)/, (_m, t: string, c: string) => `${t}${c === 'A' ? 'B' : 'A'}`)))).toMatchObject({ seq: 2, kind: 'signature_invalid' });
    expect(verifyRun(dc, loc, [list[0]!, { ...list[2]!, seq: 2 }])).toMatchObject({ seq: 2, kind: 'link_broken' });
  });

  it('SAF-T (PT): the Hash verifies over the document and the previous Hash, with the location\'s producer key', () => {
    const loc = goldenPtLocation();
    const first = goldenPtCases(loc).find((c) => c.kind === 'record' && c.record.fingerprint !== null)!;
    const list = run([first.record]);
    const signingKey = goldenProducerKey();
    expect(verifyRun(saft, loc, list, { signingKey })).toBeNull();
    expect(verifyRun(saft, loc, edit(list, 1, (b) => b.replace(/<GrossTotal>[^<]+</, '<GrossTotal>1.00<')), { signingKey })).toMatchObject({ seq: 1, kind: 'signature_invalid' });
    // Verified with another key (the sandbox key of test documents): refused.
    expect(verifyRun(saft, loc, list)).toMatchObject({ seq: 1, kind: 'signature_invalid' });
  });

  it('myDATA: the UID recomputed from the document', () => {
    const loc = goldenLocation();
    const first = goldenMyDataCases()[0]!.record;
    const list = run([first]);
    expect(verifyRun(myData, loc, list)).toBeNull();
    expect(verifyRun(myData, loc, edit(list, 1, (b) => b.replace(/<aa>[^<]+</, '<aa>77<')))).toMatchObject({ seq: 1, kind: 'body_changed' });
  });
});
