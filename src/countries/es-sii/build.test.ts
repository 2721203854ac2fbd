import { describe, it, expect } from 'vitest';
import { sii } from './index.ts';
import { bajaBody, suministroBody, titularOf } from './soap.ts';
import { goldenFiles } from '../shared/golden.ts';
import { TX_ID, NOW, draft, line, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { RECARGO_SALE, replacingBuild } from '../es/test-fixtures.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import type { FiscalRecord, TransactionDraft } from '../types.ts';
import { XmlCharacterError } from '../../xml/escape.ts';

/** Byte-for-byte comparison with golden/<name> (shared/golden.ts; `UPDATE_GOLDEN=1` rewrites it). */
const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));

const loc = location('es-sii');
const party = { counterparty_nif: 'A13585625', counterparty_name: 'Cliente Ejemplo SA' };
const twoRates = [line(), line({ description: 'Bread', unit_price: 250, quantity: 2, tax_rate: 4, tax_amount: 20, total_amount: 520 })];

/** The SOAP body content a record travels in, validated against the official XSD. */
function expectValid(record: FiscalRecord, kind: 'record' | 'cancellation'): void {
  if (!HAVE_SCHEMAS) {
    console.warn(SCHEMAS_MISSING_MESSAGE);
    return;
  }
  const content = kind === 'record' ? suministroBody(titularOf(loc), [record.body]) : bajaBody(titularOf(loc), [record.body]);
  const result = xsdValidate(content, 'es/sii/SuministroLR.xsd');
  expect(result.ok, result.output).toBe(true);
}

function cancellationOf(tx: TransactionDraft, record: FiscalRecord): FiscalRecord {
  return sii.build({
    transactionId: '99999999-8888-4777-8666-555555555555',
    kind: 'cancellation',
    tx: { ...tx, metadata: { ...tx.metadata, cancellation_reason: 'wrong customer' } },
    original: { transactionId: TX_ID, fiscalId: 'CSVDELALTA000001', tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber ?? null },
    location: loc,
    environment: 'test',
    // The cancellation happens days later: the baja still names the original's period and date.
    now: new Date('2026-02-03T09:00:00.000Z'),
    chain: { seq: 1, previous: null },
    software: { name: 'fiscal-api', version: '0.1.0', vendorTaxId: 'A99800005' },
  });
}

describe('es-sii records (SII 1.1 RegistroLRFacturasEmitidas / RegistroLRBajaExpedidas)', () => {
  it('F2 simplified invoice: golden, valid, no counterparty', () => {
    const { record } = validatedBuild(sii, loc, draft({ items: twoRates, metadata: { simplified: true, series: 'T2026-', invoice_number: 17 } }));
    expect(record).toMatchObject({ contentType: 'application/xml', placeholder: false, fiscalId: null, fingerprint: null, qrData: null, documentNumber: 'T2026-17' });
    expect(record.renderHints).toEqual([{ key: 'invoice_number', placement: 'header', mandatory: true, kind: 'text', value: 'T2026-17' }]);
    expect(record.body).toContain('<sii:TipoFactura>F2</sii:TipoFactura>');
    expect(record.body).not.toContain('Contraparte');
    expectGolden('f2-simplified.xml', record.body);
    expectValid(record, 'record');
  });

  it('F3: a full invoice replacing two tickets names the counterparty and each ticket in FacturasAgrupadas (as reported: number and issue date); golden, valid', () => {
    const tickets = ['a', 'b'].map((suffix, i) => {
      const transactionId = `11111111-2222-4333-8444-55555555555${suffix}`;
      const built = validatedBuild(sii, loc, draft({ metadata: { simplified: true, series: 'T2026-', invoice_number: 20 + i, issue_date: `1${i}-01-2026` } }), { transactionId });
      return { transactionId, ...built, issuedAt: NOW };
    });
    const { tx, record } = replacingBuild(sii, loc, draft({ items: [line(), line()], metadata: { ...party, replaces_simplified: tickets.map((t) => t.transactionId), invoice_number: 'F-2026-3' } }), tickets);
    expect(tx.metadata.invoice_type).toBe('F3');
    expect(tx.metadata.replaced_invoices).toEqual([
      { transaction_id: tickets[0]!.transactionId, number: 'T2026-20', issue_date: '10-01-2026' },
      { transaction_id: tickets[1]!.transactionId, number: 'T2026-21', issue_date: '11-01-2026' },
    ]);
    expect(record.body).toContain('<sii:TipoFactura>F3</sii:TipoFactura>');
    expect(record.body).toContain(
      '<sii:FacturasAgrupadas>\n' +
      '      <sii:IDFacturaAgrupada>\n        <sii:NumSerieFacturaEmisor>T2026-20</sii:NumSerieFacturaEmisor>\n        <sii:FechaExpedicionFacturaEmisor>10-01-2026</sii:FechaExpedicionFacturaEmisor>\n      </sii:IDFacturaAgrupada>\n' +
      '      <sii:IDFacturaAgrupada>\n        <sii:NumSerieFacturaEmisor>T2026-21</sii:NumSerieFacturaEmisor>',
    );
    expect(record.body).toContain('<sii:NIF>A13585625</sii:NIF>');
    expectGolden('f3-replaces.xml', record.body);
    expectValid(record, 'record');
  });

  it('a character XML cannot carry (stored data from before the API refused it) is a 400, never a broken record', () => {
    const bad = [{ ...line(), description: 'bell\u0007' }];
    expect(() => validatedBuild(sii, loc, draft({ items: bad, metadata: { simplified: true, invoice_number: 18 } }))).toThrow(XmlCharacterError);
    expect(() => validatedBuild(sii, loc, draft({ metadata: { ...party, counterparty_name: 'Cliente\u0001', invoice_number: 'F-2026-2' } }))).toThrow(XmlCharacterError);
  });

  it('F1 invoice names the counterparty by NIF', () => {
    const { record } = validatedBuild(sii, loc, draft({ metadata: { ...party, invoice_number: 'F-2026-1', regime_key: '01' } }));
    expect(record.body).toContain('<sii:Contraparte>\n      <sii:NombreRazon>Cliente Ejemplo SA</sii:NombreRazon>\n      <sii:NIF>A13585625</sii:NIF>');
    expectGolden('f1-counterparty.xml', record.body);
    expectValid(record, 'record');
  });

  it('F1 with a foreign counterparty uses IDOtro', () => {
    const foreign = { counterparty_name: 'Client SARL', counterparty_id_type: '02', counterparty_country: 'FR', counterparty_id: 'FR12345678901' };
    const { record } = validatedBuild(sii, loc, draft({ metadata: foreign }));
    expect(record.body).toContain('<sii:IDOtro>\n        <sii:CodigoPais>FR</sii:CodigoPais>\n        <sii:IDType>02</sii:IDType>\n        <sii:ID>FR12345678901</sii:ID>');
    // AEAT: a counterparty named by IDOtro takes the breakdown by operation type (OCA's
    // _is_sii_type_breakdown_required), never DesgloseFactura.
    expect(record.body).toContain('<sii:TipoDesglose>\n      <sii:DesgloseTipoOperacion>\n        <sii:Entrega>\n          <sii:Sujeta>');
    expect(record.body).not.toContain('DesgloseFactura');
    expectValid(record, 'record');
  });

  it('a non-resident entity (NIF starting with N) too takes DesgloseTipoOperacion; a Spanish NIF keeps DesgloseFactura', () => {
    const nonResident = validatedBuild(sii, loc, draft({ metadata: { counterparty_nif: 'N0032484H', counterparty_name: 'Non Resident Ltd' } })).record;
    expect(nonResident.body).toContain('<sii:DesgloseTipoOperacion>');
    expect(nonResident.body).not.toContain('DesgloseFactura');
    expectValid(nonResident, 'record');
    const domestic = validatedBuild(sii, loc, draft({ metadata: party })).record;
    expect(domestic.body).toContain('<sii:DesgloseFactura>');
  });

  it('R1 refund: corrective by differences, negative amounts, names the corrected invoice', () => {
    const { record } = validatedBuild(
      sii,
      loc,
      draft({ type: 'refund', items: twoRates, metadata: { ...party, invoice_number: 'A-2026-3', original_invoice_number: 'F-2026-1', original_issue_date: '10-01-2026' } }),
    );
    expect(record.body).toMatch(/<sii:TipoFactura>R1<\/sii:TipoFactura>\s*<sii:TipoRectificativa>I<\/sii:TipoRectificativa>/);
    expect(record.body).toContain('<sii:ImporteTotal>-17.30</sii:ImporteTotal>');
    expect(record.body).toContain('<sii:BaseImponible>-5.00</sii:BaseImponible>');
    expectGolden('r1-refund.xml', record.body);
    expectValid(record, 'record');
  });

  it('an exempt operation: the 0 % lines go under Sujeta/Exenta with their cause, the others under NoExenta (S1); the receipt cites the article', () => {
    const exempt = line({ description: 'Curso de formación', unit_price: 12000, tax_rate: 0, tax_amount: 0, total_amount: 12000 });
    const { record } = validatedBuild(sii, loc, draft({ items: [exempt, ...twoRates], metadata: { ...party, invoice_number: 'F-2026-9', exemption_code: 'E1' } }));
    expect(record.body).toMatch(
      /<sii:Sujeta>\s*<sii:Exenta>\s*<sii:DetalleExenta>\s*<sii:CausaExencion>E1<\/sii:CausaExencion>\s*<sii:BaseImponible>120\.00<\/sii:BaseImponible>\s*<\/sii:DetalleExenta>\s*<\/sii:Exenta>\s*<sii:NoExenta>/,
    );
    expect(record.body.match(/<sii:DetalleIVA>/g)).toHaveLength(2); // 21 % and 4 %, not the exempt 0 %
    expect(record.body).not.toContain('<sii:TipoImpositivo>0.00</sii:TipoImpositivo>');
    expect(record.renderHints).toContainEqual({ key: 'exemption', placement: 'body', mandatory: true, kind: 'text', value: 'Operación exenta de IVA (art. 20 Ley 37/1992)' });
    expectGolden('f1-exempt.xml', record.body);
    expectValid(record, 'record');
    // Every line exempt: Exenta alone. A refund of it is negative, as every corrective by differences.
    const only = validatedBuild(sii, loc, draft({ type: 'refund', items: [exempt], metadata: { simplified: true, exemption_code: 'E6' } })).record;
    expect(only.body).toContain('<sii:CausaExencion>E6</sii:CausaExencion>');
    expect(only.body).toContain('<sii:BaseImponible>-120.00</sii:BaseImponible>');
    expect(only.body).not.toContain('NoExenta');
    expectValid(only, 'record');
  });

  it('FechaOperacion: an invoice issued after its operation states that day after FacturasRectificadas and before the regime key; golden, valid; the receipt states it', () => {
    // Issued (metadata.issue_date) on 12-01-2026 for goods delivered on 05-01-2026.
    const sale = draft({ items: twoRates, metadata: { ...party, invoice_number: 'F-2026-21', issue_date: '12-01-2026', operation_date: '05-01-2026' } });
    const { record } = validatedBuild(sii, loc, sale);
    expect(record.body).toMatch(/<sii:TipoFactura>F1<\/sii:TipoFactura>\s*<sii:FechaOperacion>05-01-2026<\/sii:FechaOperacion>\s*<sii:ClaveRegimenEspecialOTrascendencia>01</);
    expect(record.body).toContain('<sii:FechaExpedicionFacturaEmisor>12-01-2026</sii:FechaExpedicionFacturaEmisor>');
    expect(record.renderHints).toContainEqual(expect.objectContaining({ key: 'operation_date', placement: 'header', value: '05-01-2026' }));
    expectGolden('f1-operation-date.xml', record.body);
    expectValid(record, 'record');
    // A refund carries it too, after FacturasRectificadas.
    const refund = validatedBuild(sii, loc, draft({
      type: 'refund', items: twoRates,
      metadata: { ...party, invoice_number: 'R-2026-21', original_invoice_number: 'F-2026-21', original_issue_date: '12-01-2026', operation_date: '05-01-2026' },
    })).record;
    expect(refund.body).toMatch(/<\/sii:FacturasRectificadas>\s*<sii:FechaOperacion>05-01-2026<\/sii:FechaOperacion>/);
    expectValid(refund, 'record');
    // None on the issue day itself, nor without one.
    const same = validatedBuild(sii, loc, draft({ items: twoRates, metadata: { ...party, issue_date: '12-01-2026', operation_date: '12-01-2026' } })).record;
    expect(same.body).not.toContain('FechaOperacion');
    expect(same.renderHints.map((h) => h.key)).not.toContain('operation_date');
  });

  it('recargo de equivalencia: a DetalleIVA per surcharged rate with TipoRecargoEquivalencia and its quota; ImporteTotal counts it; a refund is negative', () => {
    // A wholesaler's invoice to a retailer in recargo de equivalencia (LIVA arts. 154-163):
    // goods at 21 % + 5.2 % and 10 % + 1.4 %, a service at 21 % without a surcharge.
    const sale = draft({ ...RECARGO_SALE, metadata: { ...party, counterparty_name: 'Ultramarinos Ejemplo SL', invoice_number: 'F-2026-12' } });
    const { record } = validatedBuild(sii, loc, sale);
    expect(record.body).toContain('<sii:ImporteTotal>48.00</sii:ImporteTotal>');
    expect(record.body).toMatch(
      /<sii:DetalleIVA>\s*<sii:TipoImpositivo>21\.00<\/sii:TipoImpositivo>\s*<sii:BaseImponible>20\.00<\/sii:BaseImponible>\s*<sii:CuotaRepercutida>4\.20<\/sii:CuotaRepercutida>\s*<sii:TipoRecargoEquivalencia>5\.20<\/sii:TipoRecargoEquivalencia>\s*<sii:CuotaRecargoEquivalencia>1\.04<\/sii:CuotaRecargoEquivalencia>\s*<\/sii:DetalleIVA>/,
    );
    expect(record.body).toMatch(/<sii:TipoImpositivo>21\.00<\/sii:TipoImpositivo>\s*<sii:BaseImponible>5\.00<\/sii:BaseImponible>\s*<sii:CuotaRepercutida>1\.05<\/sii:CuotaRepercutida>\s*<\/sii:DetalleIVA>/);
    expect(record.body.match(/<sii:DetalleIVA>/g)).toHaveLength(3);
    expectGolden('f1-recargo.xml', record.body);
    expectValid(record, 'record');
    const refund = validatedBuild(sii, loc, { ...sale, type: 'refund', metadata: { ...sale.metadata, invoice_number: 'R-2026-1', original_invoice_number: 'F-2026-12', original_issue_date: '15-01-2026' } }).record;
    expect(refund.body).toContain('<sii:CuotaRecargoEquivalencia>-1.04</sii:CuotaRecargoEquivalencia>');
    expect(refund.body).toContain('<sii:ImporteTotal>-48.00</sii:ImporteTotal>');
    expectValid(refund, 'record');
  });

  it('IGIC location: key 08, the whole sale not subject to IVA by the location rules (NoSujeta/ImporteTAIReglasLocalizacion = ImporteTotal), no DetalleIVA; R1 negative; golden, valid', () => {
    const canary = location('es-sii', { tax: 'igic' });
    const items = [
      line({ description: 'Papas arrugadas', quantity: 2, unit_price: 450, tax_rate: 7, tax_amount: 63, total_amount: 963 }),
      line({ description: 'Pan', unit_price: 120, tax_rate: 0, tax_amount: 0, total_amount: 120 }),
    ];
    const { tx, record } = validatedBuild(sii, canary, draft({ items, total_amount: 1083, metadata: { ...party, invoice_number: 'C-2026-1' } }));
    expect(tx.metadata.regime_key).toBe('08');
    expect(record.body).toContain('<sii:ClaveRegimenEspecialOTrascendencia>08</sii:ClaveRegimenEspecialOTrascendencia>');
    expect(record.body).toContain('<sii:ImporteTotal>10.83</sii:ImporteTotal>');
    expect(record.body).toMatch(/<sii:DesgloseFactura>\s*<sii:NoSujeta>\s*<sii:ImporteTAIReglasLocalizacion>10\.83<\/sii:ImporteTAIReglasLocalizacion>\s*<\/sii:NoSujeta>\s*<\/sii:DesgloseFactura>/);
    expect(record.body).not.toContain('<sii:Sujeta>');
    expect(record.body).not.toContain('DetalleIVA');
    expect(record.renderHints).toEqual([
      { key: 'invoice_number', placement: 'header', mandatory: true, kind: 'text', value: 'C-2026-1' },
      { key: 'tax_name', placement: 'body', mandatory: true, kind: 'text', value: 'IGIC' },
    ]);
    expectGolden('f1-igic.xml', record.body);
    expectValid(record, 'record');

    const refund = validatedBuild(sii, canary, draft({
      type: 'refund', items, total_amount: 1083,
      metadata: { ...party, invoice_number: 'CR-2026-1', original_invoice_number: 'C-2026-1', original_issue_date: '15-01-2026' },
    })).record;
    expect(refund.body).toMatch(/<sii:TipoFactura>R1<\/sii:TipoFactura>\s*<sii:TipoRectificativa>I<\/sii:TipoRectificativa>/);
    expect(refund.body).toContain('<sii:ImporteTotal>-10.83</sii:ImporteTotal>');
    expect(refund.body).toContain('<sii:ImporteTAIReglasLocalizacion>-10.83</sii:ImporteTAIReglasLocalizacion>');
    expectGolden('r1-igic-refund.xml', refund.body);
    expectValid(refund, 'record');
  });

  it('IPSI location: F2 and R5 the same way (key 08, NoSujeta); a foreign counterparty puts NoSujeta under DesgloseTipoOperacion/Entrega; all valid', () => {
    const ceuta = location('es-sii', { tax: 'ipsi' });
    const items = [line({ description: 'Servicio de reparación', unit_price: 4000, tax_rate: 3, tax_amount: 120, total_amount: 4120 })];
    const f2 = validatedBuild(sii, ceuta, draft({ items, total_amount: 4120, metadata: { simplified: true } })).record;
    expect(f2.body).toContain('<sii:TipoFactura>F2</sii:TipoFactura>');
    expect(f2.body).toContain('<sii:ClaveRegimenEspecialOTrascendencia>08</sii:ClaveRegimenEspecialOTrascendencia>');
    expect(f2.body).toContain('<sii:ImporteTAIReglasLocalizacion>41.20</sii:ImporteTAIReglasLocalizacion>');
    expect(f2.renderHints).toContainEqual({ key: 'tax_name', placement: 'body', mandatory: true, kind: 'text', value: 'IPSI' });
    expectValid(f2, 'record');
    const r5 = validatedBuild(sii, ceuta, draft({ type: 'refund', items, total_amount: 4120, metadata: { simplified: true } })).record;
    expect(r5.body).toContain('<sii:TipoFactura>R5</sii:TipoFactura>');
    expect(r5.body).toContain('<sii:ImporteTAIReglasLocalizacion>-41.20</sii:ImporteTAIReglasLocalizacion>');
    expectValid(r5, 'record');
    const foreign = { counterparty_name: 'Client SARL', counterparty_id_type: '02', counterparty_country: 'FR', counterparty_id: 'FR12345678901' };
    const byOperation = validatedBuild(sii, ceuta, draft({ items, total_amount: 4120, metadata: foreign })).record;
    expect(byOperation.body).toMatch(/<sii:DesgloseTipoOperacion>\s*<sii:Entrega>\s*<sii:NoSujeta>\s*<sii:ImporteTAIReglasLocalizacion>41\.20/);
    expectValid(byOperation, 'record');
  });

  it('R5 (refund of a simplified invoice) names no counterparty; escapes text', () => {
    const { record } = validatedBuild(sii, loc, draft({ type: 'refund', metadata: { simplified: true, description: 'Devolución <café> & "té"' } }));
    expect(record.body).toContain('<sii:TipoFactura>R5</sii:TipoFactura>');
    expect(record.body).toContain('<sii:DescripcionOperacion>Devolución &lt;café&gt; &amp; &quot;té&quot;</sii:DescripcionOperacion>');
    expect(record.body).not.toContain('Contraparte');
    expect(record.body).not.toContain('FacturasRectificadas');
    expectValid(record, 'record');
  });

  it('baja (cancellation) names the original invoice by number, date and period', () => {
    const { tx, record } = validatedBuild(sii, loc, draft({ metadata: { ...party, invoice_number: 'F-2026-1' } }));
    const baja = cancellationOf(tx, record);
    expect(baja).toMatchObject({ contentType: 'application/xml', placeholder: false, fiscalId: null, documentNumber: null, fingerprint: null, renderHints: [] });
    expect(baja.body).toContain('<sii:NumSerieFacturaEmisor>F-2026-1</sii:NumSerieFacturaEmisor>');
    expect(baja.body).toContain('<sii:FechaExpedicionFacturaEmisor>15-01-2026</sii:FechaExpedicionFacturaEmisor>');
    expect(baja.body).toContain('<sii:Periodo>01</sii:Periodo>');
    expectGolden('baja-cancellation.xml', baja.body);
    expectValid(baja, 'cancellation');
  });

  it('void: the baja of the invoice its metadata names, in that invoice\'s period (spec: "SII voiding submits a cancellation record")', () => {
    const { record } = validatedBuild(sii, loc, draft({ type: 'void', metadata: { original_invoice_number: 'F-2025-77', original_issue_date: '30-12-2025' } }));
    expect(record.body).toMatch(/^<siiLR:RegistroLRBajaExpedidas /);
    expect(record.body).toContain('<sii:NumSerieFacturaEmisor>F-2025-77</sii:NumSerieFacturaEmisor>');
    expect(record.body).toContain('<sii:FechaExpedicionFacturaEmisor>30-12-2025</sii:FechaExpedicionFacturaEmisor>');
    expect(record.body).toContain('<sii:Ejercicio>2025</sii:Ejercicio>');
    expect(record.body).toContain('<sii:Periodo>12</sii:Periodo>');
    expectGolden('baja-void.xml', record.body);
    expectValid(record, 'cancellation');
  });

  it('a location without tax_id still builds (sandbox), with the placeholder NIF', () => {
    const bare = { ...loc, tax_id: null };
    const { record } = validatedBuild(sii, bare, draft({ metadata: { simplified: true } }));
    expect(record.body).toContain('<sii:NIF>000000000</sii:NIF>');
  });

  it('is deterministic', () => {
    const tx = draft({ metadata: { simplified: true } });
    expect(validatedBuild(sii, loc, tx).record).toEqual(validatedBuild(sii, loc, tx).record);
  });
});

describe('es-sii sandbox (stub mode)', () => {
  it('accept returns the CSV as fiscal id (deterministic per transaction)', async () => {
    const { tx, record } = validatedBuild(sii, loc, draft({ metadata: { simplified: true } }));
    const a = await sii.submit(stored(record, tx), submitCtx(loc));
    const b = await sii.submit(stored(record, tx, 'record', 'another-id'), submitCtx(loc));
    expect(a).toMatchObject({ kind: 'accepted', fiscalId: expect.stringMatching(/^[A-Z0-9]{16}$/) });
    expect(a.kind === 'accepted' && b.kind === 'accepted' && a.fiscalId !== b.fiscalId).toBe(true);
  });

  it('reject:3000 is a duplicate, error:3501 is retried', async () => {
    const dup = validatedBuild(sii, loc, draft({ metadata: { simplified: true, sandbox_outcome: 'reject:3000' } }));
    expect(await sii.submit(stored(dup.record, dup.tx), submitCtx(loc))).toMatchObject({ kind: 'duplicate', fiscalId: expect.any(String) });
    const busy = validatedBuild(sii, loc, draft({ metadata: { simplified: true, sandbox_outcome: 'error:3501' } }));
    expect(await sii.submit(stored(busy.record, busy.tx), submitCtx(loc))).toMatchObject({ kind: 'retry_later', code: '3501' });
  });
});
