import { describe, expect, it } from 'vitest';
import { VERIFACTU_CODES } from './codes.ts';
import { answerOutcomes, answerToOutcome, parseVerifactuAnswer, recordKeyOf, type RecordKey } from './response.ts';

// Answers shaped as AEAT writes them: `env:` SOAP envelope, `tikR:` (RespuestaSuministro.xsd)
// and `tik:` (SuministroInformacion.xsd) prefixes.
const NS = 'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/tike/cont/ws/';
const envelope = (body: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Header/><env:Body>${body}</env:Body></env:Envelope>`;

function respuesta(estadoEnvio: string, lineas: string, opts: { csv?: string; wait?: string } = {}): string {
  return envelope(
    `<tikR:RespuestaRegFactuSistemaFacturacion xmlns:tikR="${NS}RespuestaSuministro.xsd" xmlns:tik="${NS}SuministroInformacion.xsd">` +
      (opts.csv ? `<tikR:CSV>${opts.csv}</tikR:CSV>` : '') +
      '<tikR:Cabecera><tik:ObligadoEmision><tik:NombreRazon>Ejemplo SL</tik:NombreRazon><tik:NIF>B12345674</tik:NIF></tik:ObligadoEmision></tikR:Cabecera>' +
      `<tikR:TiempoEsperaEnvio>${opts.wait ?? '60'}</tikR:TiempoEsperaEnvio><tikR:EstadoEnvio>${estadoEnvio}</tikR:EstadoEnvio>${lineas}` +
      '</tikR:RespuestaRegFactuSistemaFacturacion>',
  );
}

function linea(num: string, estado: string, extra = '', tipo: 'Alta' | 'Anulacion' = 'Alta'): string {
  return (
    '<tikR:RespuestaLinea><tikR:IDFactura><tik:IDEmisorFactura>B12345674</tik:IDEmisorFactura>' +
    `<tik:NumSerieFactura>${num}</tik:NumSerieFactura><tik:FechaExpedicionFactura>15-01-2026</tik:FechaExpedicionFactura></tikR:IDFactura>` +
    `<tikR:Operacion><tik:TipoOperacion>${tipo}</tik:TipoOperacion></tikR:Operacion><tikR:EstadoRegistro>${estado}</tikR:EstadoRegistro>${extra}</tikR:RespuestaLinea>`
  );
}

const error = (code: string, text: string) =>
  `<tikR:CodigoErrorRegistro>${code}</tikR:CodigoErrorRegistro><tikR:DescripcionErrorRegistro>${text}</tikR:DescripcionErrorRegistro>`;

/** The outcome of the record numbered `num` (an alta of B12345674 issued 15-01-2026). */
const outcome = (xml: string, num = 'A-1') => {
  const answer = parseVerifactuAnswer(xml);
  expect(answer).not.toBeNull();
  return answerToOutcome(answer!, VERIFACTU_CODES, { IDEmisorFactura: 'B12345674', NumSerieFactura: num, FechaExpedicionFactura: '15-01-2026', TipoOperacion: 'Alta' });
};

describe('VERI*FACTU answers', () => {
  it('reads EstadoEnvio, CSV, TiempoEsperaEnvio and the lines (codes stay strings)', () => {
    expect(parseVerifactuAnswer(respuesta('Correcto', linea('A-1', 'Correcto'), { csv: 'A-YDSW8NLFLANWPM', wait: '060' }))).toEqual({
      kind: 'respuesta',
      EstadoEnvio: 'Correcto',
      CSV: 'A-YDSW8NLFLANWPM',
      TiempoEsperaEnvio: 60,
      lineas: [{ IDEmisorFactura: 'B12345674', NumSerieFactura: 'A-1', FechaExpedicionFactura: '15-01-2026', TipoOperacion: 'Alta', EstadoRegistro: 'Correcto' }],
    });
  });

  it('Correcto → accepted, the CSV is the fiscal id', () => {
    expect(outcome(respuesta('Correcto', linea('A-1', 'Correcto'), { csv: 'CSV0000000000001' }))).toEqual({
      kind: 'accepted',
      fiscalId: 'CSV0000000000001',
      response: { EstadoEnvio: 'Correcto', CSV: 'CSV0000000000001', TiempoEsperaEnvio: 60, EstadoRegistro: 'Correcto' },
    });
  });

  it('AceptadoConErrores → accepted with a warning in English', () => {
    const out = outcome(respuesta('Correcto', linea('A-1', 'AceptadoConErrores', error('2001', 'El NIF del bloque Destinatarios no está identificado en el censo de la AEAT.')), { csv: 'CSV1' }));
    expect(out).toMatchObject({
      kind: 'accepted',
      fiscalId: 'CSV1',
      warnings: ['2001: Accepted with errors: the NIF of the Destinatarios block is not identified in the AEAT census.'],
      response: { EstadoRegistro: 'AceptadoConErrores', CodigoErrorRegistro: '2001' },
    });
  });

  it('Incorrecto → rejected with the code and its English text; AEAT\'s own text when the code is unknown', () => {
    expect(outcome(respuesta('Incorrecto', linea('A-1', 'Incorrecto', error('1104', 'El valor del campo NumSerieFactura es incorrecto.'))))).toMatchObject({
      kind: 'rejected',
      code: '1104',
      message: 'Invalid NumSerieFactura (invoice series and number) value.',
      response: { EstadoEnvio: 'Incorrecto', DescripcionErrorRegistro: 'El valor del campo NumSerieFactura es incorrecto.' },
    });
    expect(outcome(respuesta('Incorrecto', linea('A-1', 'Incorrecto', error('1999', 'Nuevo error.'))))).toMatchObject({
      kind: 'rejected', code: '1999', message: 'AEAT error 1999: Nuevo error.',
    });
  });

  it('a technical error (retriable code) → retry_later after TiempoEsperaEnvio', () => {
    expect(outcome(respuesta('Incorrecto', linea('A-1', 'Incorrecto', error('3501', 'Error técnico de base de datos.')), { wait: '120' }))).toMatchObject({
      kind: 'retry_later', code: '3501', retryAfterSeconds: 120,
    });
  });

  it('3000 → duplicate, with what AEAT says it holds', () => {
    const dup =
      error('3000', 'Registro de facturación duplicado.') +
      '<tikR:RegistroDuplicado><tik:IdPeticionRegistroDuplicado>202601151100001</tik:IdPeticionRegistroDuplicado><tik:EstadoRegistroDuplicado>Correcta</tik:EstadoRegistroDuplicado></tikR:RegistroDuplicado>';
    expect(outcome(respuesta('Incorrecto', linea('A-1', 'Incorrecto', dup)))).toEqual({
      kind: 'duplicate',
      fiscalId: undefined,
      response: {
        EstadoEnvio: 'Incorrecto', TiempoEsperaEnvio: 60, EstadoRegistro: 'Incorrecto', CodigoErrorRegistro: '3000',
        DescripcionErrorRegistro: 'Registro de facturación duplicado.',
        RegistroDuplicado: { IdPeticionRegistroDuplicado: '202601151100001', EstadoRegistroDuplicado: 'Correcta' },
      },
      warnings: [
        '3000: AEAT already holds this record, registered by its submission 202601151100001. AEAT gives a CSV only in the answer to the submission that registers a record, and neither this answer nor its consultation service returns it: this answer sets no fiscal_id.',
      ],
    });
  });

  it('a duplicate in a ParcialmenteCorrecto answer: the CSV is the submission\'s, not the duplicate\'s fiscal id', () => {
    const dup = error('3000', 'Registro de facturación duplicado.');
    const xml = respuesta('ParcialmenteCorrecto', linea('A-1', 'Incorrecto', dup) + linea('A-2', 'Correcto'), { csv: 'CSV3' });
    expect(outcome(xml, 'A-1')).toMatchObject({ kind: 'duplicate', fiscalId: undefined, response: { CSV: 'CSV3' }, warnings: [expect.stringMatching(/^3000: AEAT already holds this record\. /)] });
    expect(outcome(xml, 'A-2')).toMatchObject({ kind: 'accepted', fiscalId: 'CSV3' });
  });

  it('3001 on an annulment is its duplicate (no CSV, the warning); on an alta a rejection', () => {
    const held = error('3001', 'El registro de facturación ya ha sido dado de baja.');
    const annulment = { IDEmisorFactura: 'B12345674', NumSerieFactura: 'A-1', FechaExpedicionFactura: '15-01-2026', TipoOperacion: 'Anulacion' } as const;
    expect(answerToOutcome(parseVerifactuAnswer(respuesta('Incorrecto', linea('A-1', 'Incorrecto', held, 'Anulacion')))!, VERIFACTU_CODES, annulment))
      .toMatchObject({ kind: 'duplicate', fiscalId: undefined, warnings: [expect.stringMatching(/^3001: /)] });
    expect(outcome(respuesta('Incorrecto', linea('A-1', 'Incorrecto', held)))).toMatchObject({ kind: 'rejected', code: '3001' });
  });

  it('ParcialmenteCorrecto: each record reads its own line', () => {
    const xml = respuesta('ParcialmenteCorrecto', linea('A-1', 'Correcto') + linea('A-2', 'Incorrecto', error('1105', 'Fecha incorrecta.')), { csv: 'CSV2' });
    expect(outcome(xml, 'A-1')).toMatchObject({ kind: 'accepted', fiscalId: 'CSV2' });
    expect(outcome(xml, 'A-2')).toMatchObject({ kind: 'rejected', code: '1105' });
  });

  it('a Client SOAP fault → rejected with the AEAT code; a Server fault → retry_later', () => {
    const clientFault = envelope(
      '<env:Fault><faultcode>env:Client</faultcode><faultstring>Codigo[4102].El XML no cumple el esquema. Falta informar campo obligatorio.: NombreRazon</faultstring></env:Fault>',
    );
    expect(parseVerifactuAnswer(clientFault)).toMatchObject({ kind: 'fault', faultcode: 'env:Client', code: '4102' });
    expect(outcome(clientFault)).toMatchObject({ kind: 'rejected', code: '4102', message: 'The XML does not match the schema: a mandatory field is missing.' });
    const serverFault = envelope('<env:Fault><faultcode>env:Server</faultcode><faultstring>Codigo[102].Error interno en el servidor</faultstring></env:Fault>');
    expect(outcome(serverFault)).toMatchObject({ kind: 'retry_later', code: '102' });
    const bare = envelope('<env:Fault><faultcode>env:Client</faultcode><faultstring>Something else</faultstring></env:Fault>');
    expect(outcome(bare)).toMatchObject({ kind: 'rejected', code: 'SOAP_FAULT' });
  });

  it('a technical fault code is retried even when AEAT files it as Client', () => {
    const fault = envelope('<env:Fault><faultcode>env:Client</faultcode><faultstring>Codigo[4111].Error técnico al crear el trámite.</faultstring></env:Fault>');
    expect(outcome(fault)).toMatchObject({ kind: 'retry_later', code: '4111' });
  });

  it.each([
    ['an HTML page', '<html><body><h1>403 Forbidden</h1></body></html>'],
    ['a broken document', '<env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body>'],
    ['an empty body', ''],
    ['an unknown state', respuesta('Quizás', '')],
    ['an envelope without an answer', envelope('<x/>')],
  ])('is not an answer: %s', (_name, xml) => {
    expect(parseVerifactuAnswer(xml)).toBeNull();
  });
});

describe('VERI*FACTU answers to a request of several records', () => {
  const key = (num: string, tipo: 'Alta' | 'Anulacion' = 'Alta'): RecordKey =>
    ({ IDEmisorFactura: 'B12345674', NumSerieFactura: num, FechaExpedicionFactura: '15-01-2026', TipoOperacion: tipo });
  const respuestaOf = (xml: string) => {
    const a = parseVerifactuAnswer(xml);
    if (a?.kind !== 'respuesta') throw new Error('not a respuesta');
    return a;
  };

  it('each record takes the line that names it, whatever the order of the lines', () => {
    const xml = respuesta('ParcialmenteCorrecto',
      linea('A-3', 'Correcto') + linea('A-1', 'Incorrecto', error('1104', 'Mal.')) + linea('A-2', 'AceptadoConErrores', error('2001', 'NIF.')), { csv: 'CSV9' });
    const out = answerOutcomes(respuestaOf(xml), VERIFACTU_CODES, [key('A-1'), key('A-2'), key('A-3')]);
    expect(out.map((o) => o.kind)).toEqual(['rejected', 'accepted', 'accepted']);
    expect(out[0]).toMatchObject({ code: '1104' });
    expect(out[1]).toMatchObject({ warnings: [expect.stringMatching(/^2001: /)] });
    expect(out[2]).toMatchObject({ fiscalId: 'CSV9', response: { EstadoRegistro: 'Correcto' } });
  });

  it('an alta and its annulment in one request are told apart by TipoOperacion', () => {
    const xml = respuesta('ParcialmenteCorrecto', linea('A-1', 'Incorrecto', error('3002', 'No existe.'), 'Anulacion') + linea('A-1', 'Correcto'), { csv: 'CSV8' });
    const out = answerOutcomes(respuestaOf(xml), VERIFACTU_CODES, [key('A-1'), key('A-1', 'Anulacion')]);
    expect(out.map((o) => o.kind)).toEqual(['accepted', 'rejected']);
    expect(out[1]).toMatchObject({ code: '3002' });
  });

  it('a record no line names is its own retriable failure (NO_RECORD_LINE), never another record\'s answer', () => {
    const xml = respuesta('Correcto', linea('A-1', 'Correcto'), { csv: 'CSV7' });
    const out = answerOutcomes(respuestaOf(xml), VERIFACTU_CODES, [key('A-1'), key('A-2')]);
    expect(out[0]).toMatchObject({ kind: 'accepted', fiscalId: 'CSV7' });
    expect(out[1]).toMatchObject({ kind: 'retry_later', code: 'NO_RECORD_LINE', message: expect.stringContaining('Alta B12345674 A-2 15-01-2026') });
    expect(VERIFACTU_CODES.NO_RECORD_LINE?.retriable).toBe(true);
    // Alone too: a line for another invoice is not this record's answer.
    expect(outcome(respuesta('Correcto', linea('A-9', 'Correcto'), { csv: 'CSV6' }), 'A-1')).toMatchObject({ kind: 'retry_later', code: 'NO_RECORD_LINE' });
    expect(outcome(respuesta('Correcto', '', { csv: 'CSV6' }), 'A-1')).toMatchObject({ kind: 'retry_later', code: 'NO_RECORD_LINE' });
  });

  it('recordKeyOf reads a stored record\'s own IDFactura (unescaped), alta or annulment', () => {
    const alta = '<sf:RegistroAlta xmlns:sf="x"><sf:IDVersion>1.0</sf:IDVersion><sf:IDFactura><sf:IDEmisorFactura>B12345674</sf:IDEmisorFactura>' +
      '<sf:NumSerieFactura>12345678&amp;G33</sf:NumSerieFactura><sf:FechaExpedicionFactura>01-01-2024</sf:FechaExpedicionFactura></sf:IDFactura>' +
      '<sf:Encadenamiento><sf:RegistroAnterior><sf:IDEmisorFactura>B12345674</sf:IDEmisorFactura><sf:NumSerieFactura>OTHER</sf:NumSerieFactura></sf:RegistroAnterior></sf:Encadenamiento></sf:RegistroAlta>';
    expect(recordKeyOf(alta)).toEqual({ IDEmisorFactura: 'B12345674', NumSerieFactura: '12345678&G33', FechaExpedicionFactura: '01-01-2024', TipoOperacion: 'Alta' });
    const anulacion = '<sf:RegistroAnulacion xmlns:sf="x"><sf:IDFactura><sf:IDEmisorFacturaAnulada>B12345674</sf:IDEmisorFacturaAnulada>' +
      '<sf:NumSerieFacturaAnulada>A-1</sf:NumSerieFacturaAnulada><sf:FechaExpedicionFacturaAnulada>15-01-2026</sf:FechaExpedicionFacturaAnulada></sf:IDFactura></sf:RegistroAnulacion>';
    expect(recordKeyOf(anulacion)).toEqual(key('A-1', 'Anulacion'));
    expect(recordKeyOf('{"placeholder":true}')).toBeUndefined();
  });
});
