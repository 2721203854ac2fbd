import { describe, expect, it } from 'vitest';
import { SII_CODES } from './codes.ts';
import { SiiResponseError, outcomeOf, parseSiiResponse } from './response.ts';

const BASE = 'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/ssii/fact/ws';

/** An answer shaped as RespuestaSuministro.xsd, with AEAT's usual prefixes. */
function answer(opts: { root?: string; csv?: string; estadoEnvio: string; lines: string[] }): string {
  const root = opts.root ?? 'RespuestaLRFacturasEmitidas';
  return `<?xml version="1.0" encoding="UTF-8"?>
<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/">
  <env:Header/>
  <env:Body Id="Body">
    <siiR:${root} xmlns:siiR="${BASE}/RespuestaSuministro.xsd" xmlns:sii="${BASE}/SuministroInformacion.xsd">
      ${opts.csv ? `<siiR:CSV>${opts.csv}</siiR:CSV>
      <siiR:DatosPresentacion><sii:NIFPresentador>B12345674</sii:NIFPresentador><sii:TimestampPresentacion>15-01-2026 11:00:03</sii:TimestampPresentacion></siiR:DatosPresentacion>` : ''}
      <siiR:Cabecera><sii:IDVersionSii>1.1</sii:IDVersionSii><sii:Titular><sii:NombreRazon>Ejemplo SL</sii:NombreRazon><sii:NIF>B12345674</sii:NIF></sii:Titular><sii:TipoComunicacion>A0</sii:TipoComunicacion></siiR:Cabecera>
      <siiR:EstadoEnvio>${opts.estadoEnvio}</siiR:EstadoEnvio>
      ${opts.lines.join('\n')}
    </siiR:${root}>
  </env:Body>
</env:Envelope>`;
}

const line = (numSerie: string, estado: string, extra = ''): string =>
  `<siiR:RespuestaLinea><siiR:IDFactura><sii:IDEmisorFactura><sii:NIF>B12345674</sii:NIF></sii:IDEmisorFactura><sii:NumSerieFacturaEmisor>${numSerie}</sii:NumSerieFacturaEmisor><sii:FechaExpedicionFacturaEmisor>15-01-2026</sii:FechaExpedicionFacturaEmisor></siiR:IDFactura><siiR:EstadoRegistro>${estado}</siiR:EstadoRegistro>${extra}</siiR:RespuestaLinea>`;

const fault = (faultcode: string, faultstring: string): string =>
  `<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body><env:Fault><faultcode>${faultcode}</faultcode><faultstring>${faultstring}</faultstring><detail><callstack>x</callstack></detail></env:Fault></env:Body></env:Envelope>`;

const outcome = (xml: string, numSerie?: string) => outcomeOf(parseSiiResponse(xml), SII_CODES, numSerie);

describe('SII answers (RespuestaSuministro.xsd) → outcomes', () => {
  it('Correcto: accepted, the submission CSV is the fiscal id', () => {
    const xml = answer({ csv: 'A1B2C3D4E5F6G7H8', estadoEnvio: 'Correcto', lines: [line('F-1', 'Correcto')] });
    expect(parseSiiResponse(xml)).toMatchObject({
      kind: 'answer', operation: 'alta', estadoEnvio: 'Correcto', csv: 'A1B2C3D4E5F6G7H8', timestamp: '15-01-2026 11:00:03',
      lines: [{ numSerie: 'F-1', issueDate: '15-01-2026', estado: 'Correcto' }],
    });
    expect(outcome(xml)).toEqual({
      kind: 'accepted',
      fiscalId: 'A1B2C3D4E5F6G7H8',
      response: {
        operation: 'alta', EstadoEnvio: 'Correcto', CSV: 'A1B2C3D4E5F6G7H8', TimestampPresentacion: '15-01-2026 11:00:03',
        EstadoRegistro: 'Correcto', CodigoErrorRegistro: null, DescripcionErrorRegistro: null,
      },
    });
  });

  it('ParcialmenteCorrecto / AceptadoConErrores: accepted with a warning', () => {
    const xml = answer({
      csv: 'CSV0000000000001',
      estadoEnvio: 'ParcialmenteCorrecto',
      lines: [line('F-1', 'AceptadoConErrores', '<siiR:CodigoErrorRegistro>2011</siiR:CodigoErrorRegistro><siiR:DescripcionErrorRegistro>El NIF de la contraparte no está censado</siiR:DescripcionErrorRegistro>')],
    });
    expect(outcome(xml)).toMatchObject({
      kind: 'accepted',
      fiscalId: 'CSV0000000000001',
      warnings: ["2011: Accepted with errors: the counterparty's NIF is not registered in the AEAT census."],
      response: { EstadoEnvio: 'ParcialmenteCorrecto', EstadoRegistro: 'AceptadoConErrores', CodigoErrorRegistro: '2011' },
    });
  });

  it('Incorrecto: rejected with the code, our text and AEAT\'s', () => {
    const xml = answer({
      estadoEnvio: 'Incorrecto',
      lines: [line('F-1', 'Incorrecto', '<siiR:CodigoErrorRegistro>1117</siiR:CodigoErrorRegistro><siiR:DescripcionErrorRegistro>El NIF no está identificado. NIF:A13585625. NOMBRE_RAZON:X</siiR:DescripcionErrorRegistro>')],
    });
    expect(outcome(xml)).toMatchObject({
      kind: 'rejected',
      code: '1117',
      message: 'The NIF is not identified: the NIF and name given do not match the AEAT census. (AEAT: El NIF no está identificado. NIF:A13585625. NOMBRE_RAZON:X)',
      response: { EstadoEnvio: 'Incorrecto', CSV: null },
    });
  });

  it('codes keep their leading zeros and unknown ones keep AEAT\'s text', () => {
    const xml = answer({ estadoEnvio: 'Incorrecto', lines: [line('F-1', 'Incorrecto', '<siiR:CodigoErrorRegistro>0999</siiR:CodigoErrorRegistro><siiR:DescripcionErrorRegistro>Otro error</siiR:DescripcionErrorRegistro>')] });
    expect(outcome(xml)).toMatchObject({ kind: 'rejected', code: '0999', message: 'Otro error' });
  });

  it('retriable codes (AEAT technical errors) are retry_later', () => {
    const xml = answer({ estadoEnvio: 'Incorrecto', lines: [line('F-1', 'Incorrecto', '<siiR:CodigoErrorRegistro>3501</siiR:CodigoErrorRegistro><siiR:DescripcionErrorRegistro>Error técnico de base de datos</siiR:DescripcionErrorRegistro>')] });
    expect(outcome(xml)).toMatchObject({ kind: 'retry_later', code: '3501' });
  });

  it('3000 "Factura duplicada": duplicate, with the CSV of the invoice AEAT holds', () => {
    const xml = answer({
      estadoEnvio: 'Incorrecto',
      lines: [line('F-1', 'Incorrecto', '<siiR:CodigoErrorRegistro>3000</siiR:CodigoErrorRegistro><siiR:DescripcionErrorRegistro>Factura duplicada</siiR:DescripcionErrorRegistro><siiR:CSV>PREVIOUSCSV00001</siiR:CSV><siiR:RegistroDuplicado><sii:EstadoRegistro>Correcta</sii:EstadoRegistro></siiR:RegistroDuplicado>')],
    });
    expect(outcome(xml)).toMatchObject({
      kind: 'duplicate',
      fiscalId: 'PREVIOUSCSV00001',
      response: { CodigoErrorRegistro: '3000', CSVRegistrado: 'PREVIOUSCSV00001', EstadoRegistroDuplicado: 'Correcta' },
    });
  });

  it('baja answers: accepted, and "already cancelled" (with its CSV) is a duplicate', () => {
    const ok = answer({ root: 'RespuestaLRBajaFacturasEmitidas', csv: 'BAJACSV000000001', estadoEnvio: 'Correcto', lines: [line('F-1', 'Correcto')] });
    expect(outcome(ok)).toMatchObject({ kind: 'accepted', fiscalId: 'BAJACSV000000001', response: { operation: 'baja' } });
    const again = answer({
      root: 'RespuestaLRBajaFacturasEmitidas',
      estadoEnvio: 'Incorrecto',
      lines: [line('F-1', 'Incorrecto', '<siiR:CodigoErrorRegistro>3001</siiR:CodigoErrorRegistro><siiR:DescripcionErrorRegistro>Ya dada de baja</siiR:DescripcionErrorRegistro><siiR:CSV>BAJACSV000000001</siiR:CSV>')],
    });
    expect(outcome(again)).toMatchObject({ kind: 'duplicate', fiscalId: 'BAJACSV000000001' });
    const unknown = answer({ root: 'RespuestaLRBajaFacturasEmitidas', estadoEnvio: 'Incorrecto', lines: [line('F-1', 'Incorrecto', '<siiR:CodigoErrorRegistro>3002</siiR:CodigoErrorRegistro>')] });
    expect(outcome(unknown)).toMatchObject({ kind: 'rejected', code: '3002', message: 'The invoice record does not exist at AEAT.' });
  });

  it('several lines: the one of the record asked for', () => {
    const xml = answer({
      csv: 'CSV0000000000002',
      estadoEnvio: 'ParcialmenteCorrecto',
      lines: [line('F-1', 'Correcto'), line('F-2', 'Incorrecto', '<siiR:CodigoErrorRegistro>1100</siiR:CodigoErrorRegistro>')],
    });
    expect(outcome(xml, 'F-1')).toMatchObject({ kind: 'accepted', fiscalId: 'CSV0000000000002' });
    expect(outcome(xml, 'F-2')).toMatchObject({ kind: 'rejected', code: '1100' });
  });

  it('SOAP faults: the Codigo[…] of the faultstring; Server faults are retried', () => {
    const schema = fault('env:Client', 'Codigo[4102].El XML no cumple el esquema. Falta informar campo obligatorio.: TipoDesglose');
    expect(parseSiiResponse(schema)).toEqual({
      kind: 'fault', faultcode: 'env:Client', faultstring: 'Codigo[4102].El XML no cumple el esquema. Falta informar campo obligatorio.: TipoDesglose', code: '4102',
    });
    expect(outcome(schema)).toMatchObject({ kind: 'rejected', code: '4102', message: expect.stringContaining('Falta informar campo obligatorio.: TipoDesglose') });
    expect(outcome(fault('soapenv:Client', 'Codigo[4104].Error en la cabecera'))).toMatchObject({ kind: 'rejected', code: '4104' });
    expect(outcome(fault('soapenv:Server', 'Internal error'))).toMatchObject({ kind: 'retry_later', code: 'SOAP_SERVER_FAULT' });
    expect(outcome(fault('soapenv:Server', 'Codigo[9999].Error técnico'))).toMatchObject({ kind: 'retry_later', code: '9999' });
    expect(outcome(fault('soapenv:Client', 'Mensaje incorrecto'))).toMatchObject({ kind: 'rejected', code: 'SOAP_CLIENT_FAULT' });
  });

  it('Incorrecto without lines (refused as a whole)', () => {
    expect(outcome(answer({ estadoEnvio: 'Incorrecto', lines: [] }))).toMatchObject({ kind: 'rejected', code: 'INCORRECTO' });
  });

  it.each([
    ['', 'not well-formed'],
    ['<html><body>Service Unavailable</body></html>', 'not a SOAP envelope'],
    ['<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body><x/></env:Body></env:Envelope>', 'no SII answer'],
    ['<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body><a>', 'not well-formed'],
    [answer({ estadoEnvio: 'Quizas', lines: [] }), 'unknown EstadoEnvio'],
  ])('refuses what is not an answer: %#', (xml, message) => {
    expect(() => parseSiiResponse(xml)).toThrow(SiiResponseError);
    expect(() => parseSiiResponse(xml)).toThrow(message);
  });
});
