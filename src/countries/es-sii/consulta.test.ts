import { describe, expect, it } from 'vitest';
import { sii } from './index.ts';
import { soapEnvelope, titularOf } from './soap.ts';
import { consultaBody, csvFromConsulta, invoiceOfRecord, parseConsultaResponse, sortableTimestamp, type ConsultaAnswer, type ConsultaRecord } from './consulta.ts';
import { SiiResponseError } from './response.ts';
import { goldenFiles } from '../shared/golden.ts';
import { draft, location, validatedBuild } from '../shared/test-fixtures.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';

/** Byte-for-byte comparison with golden/<name> (shared/golden.ts; `UPDATE_GOLDEN=1` rewrites it). */
const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));

const loc = location('es-sii');
const party = { counterparty_nif: 'A13585625', counterparty_name: 'Cliente Ejemplo SA' };
const BASE = 'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/ssii/fact/ws';

function expectValidConsulta(content: string): void {
  if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
  const result = xsdValidate(content, 'es/sii/ConsultaLR.xsd');
  expect(result.ok, result.output).toBe(true);
}

describe('SII consultation request (ConsultaLRFacturasEmitidas, ConsultaLR.xsd)', () => {
  it('an alta: the Titular\'s book, the record\'s period, number and date; golden, valid', () => {
    const { record } = validatedBuild(sii, loc, draft({ metadata: { ...party, invoice_number: 'F-2026-1' } }));
    const invoice = invoiceOfRecord(record.body);
    expect(invoice).toEqual({ exercise: '2026', period: '01', issuerNif: 'B12345674', numSerie: 'F-2026-1', issueDate: '15-01-2026' });
    const body = consultaBody(titularOf(loc), invoice!);
    expectValidConsulta(body);
    // The whole message as AEAT receives it.
    expectGolden('consulta-f1.xml', soapEnvelope(body));
  });

  it('a baja (a void in an earlier period): the period and invoice the baja names; golden, valid', () => {
    const { record } = validatedBuild(sii, loc, draft({ type: 'void', metadata: { original_invoice_number: 'F-2025-77', original_issue_date: '30-12-2025' } }));
    const invoice = invoiceOfRecord(record.body);
    expect(invoice).toEqual({ exercise: '2025', period: '12', issuerNif: 'B12345674', numSerie: 'F-2025-77', issueDate: '30-12-2025' });
    const body = consultaBody(titularOf(loc), invoice!);
    expectValidConsulta(body);
    expectGolden('consulta-baja-void.xml', soapEnvelope(body));
  });

  it('the schema would refuse a filter without its period (the check can fail)', () => {
    if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
    const { record } = validatedBuild(sii, loc, draft({ metadata: { simplified: true } }));
    const body = consultaBody(titularOf(loc), invoiceOfRecord(record.body)!).replace(/<sii:PeriodoLiquidacion>[\s\S]*?<\/sii:PeriodoLiquidacion>\s*/, '');
    expect(xsdValidate(body, 'es/sii/ConsultaLR.xsd').ok).toBe(false);
  });

  it('escapes the number; a record that names no invoice gives nothing to ask for', () => {
    const { record } = validatedBuild(sii, loc, draft({ metadata: { simplified: true, invoice_number: 'A&B<1>' } }));
    const body = consultaBody(titularOf(loc), invoiceOfRecord(record.body)!);
    expect(body).toContain('<sii:NumSerieFacturaEmisor>A&amp;B&lt;1&gt;</sii:NumSerieFacturaEmisor>');
    expectValidConsulta(body);
    expect(invoiceOfRecord('{"placeholder":true}')).toBeUndefined();
    expect(invoiceOfRecord('<x:Other xmlns:x="urn:x"/>')).toBeUndefined();
  });
});

/** An answer shaped as RespuestaConsultaLR.xsd. */
function consultaAnswer(records: string[], resultado = records.length > 0 ? 'ConDatos' : 'SinDatos'): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body>
<siiLRRC:RespuestaConsultaLRFacturasEmitidas xmlns:siiLRRC="${BASE}/RespuestaConsultaLR.xsd" xmlns:sii="${BASE}/SuministroInformacion.xsd">
<sii:Cabecera><sii:IDVersionSii>1.1</sii:IDVersionSii><sii:Titular><sii:NombreRazon>Ejemplo SL</sii:NombreRazon><sii:NIF>B12345674</sii:NIF></sii:Titular></sii:Cabecera>
<siiLRRC:PeriodoLiquidacion><siiLRRC:Ejercicio>2026</siiLRRC:Ejercicio><siiLRRC:Periodo>01</siiLRRC:Periodo></siiLRRC:PeriodoLiquidacion>
<siiLRRC:IndicadorPaginacion>N</siiLRRC:IndicadorPaginacion><siiLRRC:ResultadoConsulta>${resultado}</siiLRRC:ResultadoConsulta>
${records.join('\n')}
</siiLRRC:RespuestaConsultaLRFacturasEmitidas></env:Body></env:Envelope>`;
}

const entry = (o: { numSerie?: string; csv?: string; presented: string; modified: string; state: string }): string =>
  `<siiLRRC:RegistroRespuestaConsultaLRFacturasEmitidas>
<siiLRRC:IDFactura><sii:IDEmisorFactura><sii:NIF>B12345674</sii:NIF></sii:IDEmisorFactura><sii:NumSerieFacturaEmisor>${o.numSerie ?? 'F-1'}</sii:NumSerieFacturaEmisor><sii:FechaExpedicionFacturaEmisor>15-01-2026</sii:FechaExpedicionFacturaEmisor></siiLRRC:IDFactura>
<siiLRRC:DatosFacturaEmitida><siiLRRC:TipoFactura>F2</siiLRRC:TipoFactura><siiLRRC:ClaveRegimenEspecialOTrascendencia>01</siiLRRC:ClaveRegimenEspecialOTrascendencia><siiLRRC:DescripcionOperacion>Sale</siiLRRC:DescripcionOperacion><siiLRRC:TipoDesglose><siiLRRC:DesgloseFactura><sii:Sujeta><sii:NoExenta><sii:TipoNoExenta>S1</sii:TipoNoExenta><sii:DesgloseIVA><sii:DetalleIVA><sii:TipoImpositivo>21.00</sii:TipoImpositivo><sii:BaseImponible>10.00</sii:BaseImponible><sii:CuotaRepercutida>2.10</sii:CuotaRepercutida></sii:DetalleIVA></sii:DesgloseIVA></sii:NoExenta></sii:Sujeta></siiLRRC:DesgloseFactura></siiLRRC:TipoDesglose><siiLRRC:Cobros>N</siiLRRC:Cobros></siiLRRC:DatosFacturaEmitida>
<siiLRRC:DatosPresentacion><sii:NIFPresentador>B12345674</sii:NIFPresentador><sii:TimestampPresentacion>${o.presented}</sii:TimestampPresentacion>${o.csv ? `<sii:CSV>${o.csv}</sii:CSV>` : ''}</siiLRRC:DatosPresentacion>
<siiLRRC:EstadoFactura><siiLRRC:TimestampUltimaModificacion>${o.modified}</siiLRRC:TimestampUltimaModificacion><siiLRRC:EstadoRegistro>${o.state}</siiLRRC:EstadoRegistro></siiLRRC:EstadoFactura>
</siiLRRC:RegistroRespuestaConsultaLRFacturasEmitidas>`;

const invoice = { exercise: '2026', period: '01', issuerNif: 'B12345674', numSerie: 'F-1', issueDate: '15-01-2026' };
const parsed = (xml: string): Extract<ConsultaAnswer, { kind: 'answer' }> => {
  const a = parseConsultaResponse(xml);
  if (a.kind !== 'answer') throw new Error('not an answer');
  return a;
};

describe('SII consultation answer (RespuestaConsultaLR.xsd)', () => {
  it('the answers written here are schema-valid (so the shapes below are AEAT\'s)', () => {
    if (!HAVE_SCHEMAS) return console.warn(SCHEMAS_MISSING_MESSAGE);
    const xml = consultaAnswer([entry({ csv: 'CSVALTA000000001', presented: '15-01-2026 11:00:03', modified: '15-01-2026 11:00:03', state: 'Correcta' })]);
    const content = /<siiLRRC:RespuestaConsultaLRFacturasEmitidas[\s\S]*<\/siiLRRC:RespuestaConsultaLRFacturasEmitidas>/.exec(xml)![0];
    const v = xsdValidate(content, 'es/sii/RespuestaConsultaLR.xsd');
    expect(v.ok, v.output).toBe(true);
  });

  it('parses each invoice: id, DatosPresentacion, EstadoFactura; a fault; refuses what is not an answer', () => {
    const a = parsed(consultaAnswer([entry({ csv: 'CSVALTA000000001', presented: '15-01-2026 11:00:03', modified: '16-01-2026 09:00:00', state: 'Anulada' })]));
    expect(a).toEqual({
      kind: 'answer', resultado: 'ConDatos',
      records: [{ nif: 'B12345674', numSerie: 'F-1', issueDate: '15-01-2026', csv: 'CSVALTA000000001', presentedAt: '15-01-2026 11:00:03', state: 'Anulada', lastModifiedAt: '16-01-2026 09:00:00' }],
    });
    expect(parsed(consultaAnswer([]))).toEqual({ kind: 'answer', resultado: 'SinDatos', records: [] });
    const fault = '<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body><env:Fault><faultcode>env:Server</faultcode><faultstring>Codigo[3500].Error técnico de base de datos</faultstring></env:Fault></env:Body></env:Envelope>';
    expect(parseConsultaResponse(fault)).toEqual({ kind: 'fault', faultcode: 'env:Server', faultstring: 'Codigo[3500].Error técnico de base de datos', code: '3500' });
    expect(() => parseConsultaResponse('<html>busy')).toThrow(SiiResponseError);
    expect(() => parseConsultaResponse('<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body><x/></env:Body></env:Envelope>')).toThrow(SiiResponseError);
  });

  it('sii:Timestamp (dd-mm-yyyy hh:mm:ss) sorts by date then time', () => {
    expect(sortableTimestamp('31-12-2025 23:59:59')! < sortableTimestamp('01-01-2026 00:00:00')!).toBe(true);
    expect(sortableTimestamp('2026-01-01T00:00:00')).toBeUndefined();
    expect(sortableTimestamp(undefined)).toBeUndefined();
  });
});

describe('which CSV the consultation gives for a duplicate', () => {
  const one = (o: Parameters<typeof entry>[0]) => parsed(consultaAnswer([entry(o)]));
  const csvOf = (r: ReturnType<typeof csvFromConsulta>) => (r.kind === 'csv' ? r.csv : undefined);
  const reasonOf = (r: ReturnType<typeof csvFromConsulta>) => (r.kind === 'none' ? r.reason : undefined);

  it('alta (3000): the CSV of a registered invoice (Correcta, AceptadaConErrores)', () => {
    for (const state of ['Correcta', 'AceptadaConErrores']) {
      expect(csvOf(csvFromConsulta('alta', one({ csv: 'CSVALTA000000001', presented: '15-01-2026 11:00:03', modified: '15-01-2026 11:00:03', state }), invoice))).toBe('CSVALTA000000001');
    }
  });

  it('alta of an annulled invoice: the CSV only when its presentation predates the annulment', () => {
    expect(csvOf(csvFromConsulta('alta', one({ csv: 'CSVALTA000000001', presented: '15-01-2026 11:00:03', modified: '16-01-2026 09:00:00', state: 'Anulada' }), invoice))).toBe('CSVALTA000000001');
    const latest = csvFromConsulta('alta', one({ csv: 'CSVBAJA000000001', presented: '16-01-2026 09:00:00', modified: '16-01-2026 09:00:00', state: 'Anulada' }), invoice);
    expect(latest.kind).toBe('none');
    expect(reasonOf(latest)).toMatch(/annulled and gives the CSV CSVBAJA000000001 of its latest submission/);
  });

  it('baja (3001): the CSV of the annulment, i.e. of a presentation as recent as the last modification of an Anulada record', () => {
    expect(csvOf(csvFromConsulta('baja', one({ csv: 'CSVBAJA000000001', presented: '16-01-2026 09:00:00', modified: '16-01-2026 09:00:00', state: 'Anulada' }), invoice))).toBe('CSVBAJA000000001');
    const older = csvFromConsulta('baja', one({ csv: 'CSVALTA000000001', presented: '15-01-2026 11:00:03', modified: '16-01-2026 09:00:00', state: 'Anulada' }), invoice);
    expect(older.kind).toBe('none');
    expect(reasonOf(older)).toMatch(/gives the CSV CSVALTA000000001 of a submission older than the annulment \(presented 15-01-2026 11:00:03, last modified 16-01-2026 09:00:00\)/);
    const unreadable = csvFromConsulta('baja', one({ csv: 'CSVBAJA000000001', presented: '16-01-2026', modified: '16-01-2026 09:00:00', state: 'Anulada' }), invoice);
    expect(unreadable.kind).toBe('none');
  });

  it('baja of an invoice the book does not show annulled: no CSV, and says what it shows', () => {
    const r = csvFromConsulta('baja', one({ csv: 'CSVALTA000000001', presented: '15-01-2026 11:00:03', modified: '15-01-2026 11:00:03', state: 'Correcta' }), invoice);
    expect(reasonOf(r)).toBe('AEAT answered that invoice F-1 of 15-01-2026 (period 2026/01) is already annulled, but its consultation shows it Correcta');
  });

  it('not found, another invoice only, or no CSV in DatosPresentacion (optional): no CSV, with the reason', () => {
    expect(reasonOf(csvFromConsulta('alta', parsed(consultaAnswer([])), invoice))).toBe("AEAT's consultation found no invoice F-1 of 15-01-2026 (period 2026/01)");
    const other = one({ numSerie: 'F-2', csv: 'CSVOTHER00000001', presented: '15-01-2026 11:00:03', modified: '15-01-2026 11:00:03', state: 'Correcta' });
    expect(csvFromConsulta('alta', other, invoice).kind).toBe('none');
    const noCsv = csvFromConsulta('alta', one({ presented: '15-01-2026 11:00:03', modified: '15-01-2026 11:00:03', state: 'Correcta' }), invoice);
    expect(reasonOf(noCsv)).toBe("AEAT's consultation gives no CSV for invoice F-1 of 15-01-2026 (period 2026/01)");
    expect(noCsv.kind === 'none' && noCsv.record).toMatchObject({ state: 'Correcta' } satisfies Partial<ConsultaRecord>);
  });
});
