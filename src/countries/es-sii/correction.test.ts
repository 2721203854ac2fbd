import { describe, expect, it } from 'vitest';
import { sii } from './index.ts';
import { siiRequestOf } from './client.ts';
import { suministroBody, titularOf } from './soap.ts';
import { COUNTERPARTY_NOT_NAMED, NOTHING_IN_RECORD, VOID_NOT_CORRECTED } from './correction.ts';
import { goldenFiles } from '../shared/golden.ts';
import { NOW, TX_ID, buildInput, draft, location, stored, validatedBuild } from '../shared/test-fixtures.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import type { FiscalRecord, TransactionDraft } from '../types.ts';

const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));
const loc = location('es-sii');
const rule = sii.correct!;
const party = { counterparty_nif: 'A13585625', counterparty_name: 'Cliente Ejemplo SA' };
/** The correction is made weeks later, in another month: it still names the invoice's date and period. */
const LATER = new Date('2026-02-20T08:30:00.000Z');

/** The original as validated and built on NOW, and its correction built from `changes` (metadata merged). */
function corrected(original: { tx: TransactionDraft; record: FiscalRecord }, changes: Record<string, unknown>) {
  const tx: TransactionDraft = { ...original.tx, metadata: { ...original.tx.metadata, ...changes } };
  const metadata = rule.validate(tx, original.tx, { location: loc, environment: 'test', now: NOW });
  const input = buildInput(loc, { ...tx, metadata }, { now: LATER });
  const record = rule.build({
    ...input, tx: { ...tx, metadata }, earlierRefused: false,
    original: { transactionId: TX_ID, documentNumber: original.record.documentNumber ?? null, issuedAt: NOW.toISOString(), fiscalId: 'CSVDELALTA000001', upstreamId: null, body: original.record.body },
  });
  return { tx: { ...tx, metadata }, record };
}

function expectValid(message: string): void {
  if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
  const result = xsdValidate(message, 'es/sii/SuministroLR.xsd');
  expect(result.ok, result.output).toBe(true);
}

/** An element of the record, its indentation left out (a DesgloseTipoOperacion nests the same breakdown deeper). */
const between = (xml: string, tag: string): string => new RegExp(`<${tag}>[\\s\\S]*?</${tag}>`).exec(xml)![0].replace(/>\s+</g, '><');

describe('es-sii correction: a modification (A1) of an invoice AEAT holds', () => {
  const f1 = () => validatedBuild(sii, loc, draft({ metadata: { ...party, series: 'F-2026-', invoice_number: 1 } }));

  it('the same IDFactura and period, amounts and type; only Contraparte and DescripcionOperacion change; sent with TipoComunicacion A1; golden, valid', () => {
    const original = f1();
    const fixed = corrected(original, { counterparty_nif: 'B64717838', counterparty_name: 'Cliente Corregido SL', description: 'Café y tostada' });
    const body = fixed.record.body;
    for (const tag of ['siiLR:IDFactura', 'sii:PeriodoLiquidacion', 'sii:TipoDesglose', 'sii:ImporteTotal', 'sii:TipoFactura', 'sii:ClaveRegimenEspecialOTrascendencia']) {
      expect(between(body, tag)).toBe(between(original.record.body, tag));
    }
    expect(between(body, 'sii:Contraparte')).toBe('<sii:Contraparte><sii:NombreRazon>Cliente Corregido SL</sii:NombreRazon><sii:NIF>B64717838</sii:NIF></sii:Contraparte>');
    expect(body).toContain('<sii:DescripcionOperacion>Café y tostada</sii:DescripcionOperacion>');
    // Not a new invoice: no number of its own, nothing new to print.
    expect(fixed.record).toMatchObject({ documentNumber: null, fiscalId: null, fingerprint: null, renderHints: [] });

    // The message: the header says A1, the record travels byte for byte.
    const message = siiRequestOf({ ...stored(fixed.record, fixed.tx), correction: true }, { location: loc });
    expect(message).toContain('<sii:TipoComunicacion>A1</sii:TipoComunicacion>');
    expect(message).toContain(body);
    // The same record sent as a new one (no `correction`) would be an A0.
    expect(siiRequestOf(stored(fixed.record, fixed.tx), { location: loc })).toContain('<sii:TipoComunicacion>A0</sii:TipoComunicacion>');
    const content = suministroBody(titularOf(loc), [body], 'A1');
    expectGolden('a1-correction.xml', content);
    expectValid(content);
  });

  it('a foreign counterparty (IDOtro) takes the breakdown by operation type, as AEAT requires; amounts unchanged', () => {
    const original = f1();
    const fixed = corrected(original, {
      counterparty_nif: null, counterparty_name: 'Client Étranger SARL', counterparty_id_type: '02', counterparty_country: 'FR', counterparty_id: 'FR40303265045',
    });
    expect(fixed.record.body).toContain('<sii:IDOtro>');
    expect(fixed.record.body).toContain('<sii:DesgloseTipoOperacion>');
    expect(between(fixed.record.body, 'sii:DesgloseIVA')).toBe(between(original.record.body, 'sii:DesgloseIVA'));
    expectValid(suministroBody(titularOf(loc), [fixed.record.body], 'A1'));
  });

  it('400: a counterparty on an invoice whose record names none (F2, R5); nothing that reaches the record; a counterparty removed from an F1', () => {
    const ticket = validatedBuild(sii, loc, draft({ metadata: { simplified: true } }));
    expect(() => corrected(ticket, party)).toThrow(COUNTERPARTY_NOT_NAMED('F2'));
    // The description of a ticket can be corrected.
    expect(corrected(ticket, { description: 'Dos cafés' }).record.body).toContain('<sii:DescripcionOperacion>Dos cafés</sii:DescripcionOperacion>');
    const original = f1();
    expect(() => corrected(original, {})).toThrow(NOTHING_IN_RECORD);
    // customer_context alone is not written in the SII record.
    const tx = { ...original.tx, customer_context: { name: 'Otro' } };
    expect(() => rule.validate(tx, original.tx, { location: loc, environment: 'test', now: NOW })).toThrow(NOTHING_IN_RECORD);
    expect(() => corrected(original, { counterparty_nif: null, counterparty_name: null })).toThrow(/counterparty_nif and counterparty_name are required/);
  });

  it('409: a void (its record is a baja)', () => {
    const voided = validatedBuild(sii, loc, draft({ type: 'void', metadata: { original_invoice_number: 'F-2026-1', original_issue_date: '15-01-2026' } }));
    expect(() => rule.validate({ ...voided.tx, metadata: { ...voided.tx.metadata, description: 'x' } }, voided.tx, { location: loc, environment: 'test', now: NOW }))
      .toThrow(VOID_NOT_CORRECTED);
  });
});
