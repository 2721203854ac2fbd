import { describe, expect, it } from 'vitest';
import { sdiDocs } from './api-docs.ts';
import { SEMPLIFICATA_MAX_TOTAL, TIPI_DOCUMENTO } from './metadata.ts';
import { decimal } from '../shared/amounts.ts';
import { sdi } from './index.ts';
import { BOLLO_AMOUNT, BOLLO_NATURE, BOLLO_THRESHOLD } from './bollo.ts';
import { draft, location, txCtx } from '../shared/test-fixtures.ts';

/*
 * The API reference (GET /openapi.json, the create body's metadata description) says what
 * the SDI rules do: the document types a request may name, and the fattura semplificata's
 * rules (TD07) and notes (TD08, TD09), which only the quickstart described.
 */
describe('it-sdi api-docs: the metadata the rules read, TD07 and its notes', () => {
  const text = sdiDocs.metadata!;

  it('lists every tipo_documento a request may name, and only those', () => {
    const listed = /tipo_documento: ((?:TD\d\d, )*TD\d\d) /.exec(text)?.[1]?.split(', ');
    expect(listed).toEqual([...TIPI_DOCUMENTO]);
    for (const tipo of ['TD03', 'TD05', 'TD08']) {
      expect(() => sdi.validateTransaction(draft({ metadata: { invoice_number: '1', tipo_documento: tipo } }), txCtx(location('it-sdi')))).toThrow(/must be one of/);
    }
  });

  it("states TD07's rules with the ceiling the rules apply, and the simplified notes", () => {
    expect(text).toContain(`TD07, the fattura semplificata (DPR 633/1972 art. 21-bis), is sent in the simplified format FSM10: a sale of at most ${decimal(SEMPLIFICATA_MAX_TOTAL)} EUR in total`);
    expect(decimal(SEMPLIFICATA_MAX_TOTAL)).toBe('400.00');
    for (const fact of ['RF19', 'FPA12', 'N6.x', 'N3.2', 'nota di credito semplificata (TD08, FSM10)', 'nota di debito semplificata (TD09)', 'TD07 on a refund or void issues a TD08', 'original_invoice_date (DatiFatturaRettificata)', 'a refund or void without tipo_documento whose original_invoice_number and original_invoice_date name a TD07 of its partita IVA (any location of the account with that partita IVA) issues that TD08 too', 'original_invoice_number alone names it when exactly one invoice of that partita IVA holds the number']) {
      expect(text).toContain(fact);
    }
  });

  it('states the stamp duty rule with the values bollo.ts applies, and the bollo_virtuale override', () => {
    expect(text).toContain(`ImportoBollo ${BOLLO_AMOUNT}`);
    expect(text).toContain(`(Natura ${BOLLO_NATURE.join(', ')}; not N3.1, N3.2, N3.3, N5, N6.x) exceed ${decimal(BOLLO_THRESHOLD)} EUR`);
    expect(decimal(BOLLO_THRESHOLD)).toBe('77.47');
    expect(text).toContain('bollo_virtuale true forces it, false suppresses it');
    expect(text).toContain('not added to ImportoTotaleDocumento');
  });
});
