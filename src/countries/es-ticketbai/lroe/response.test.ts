import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../../test/support/xml-tools.ts';
import { TransportError } from '../../types.ts';
import { LROE_DOCUMENTS, lroeNamespace } from './request.ts';
import { decodeLroeBody, interpretLroeAnswer, parseLroeAnswerBody, readLroeHeaders, type LroeSentRecord } from './response.ts';

const withSchemas = (name: string, fn: () => void) => (HAVE_SCHEMAS ? it(name, fn) : it.skip(`${name} (${SCHEMAS_MISSING_MESSAGE})`, fn));

const ALTA = LROE_DOCUMENTS['240'].alta;

interface Reg {
  series?: string;
  number: string;
  date?: string;
  estado: string;
  code?: string;
  es?: string;
}

/** An AltaRespuesta as LROE_PJ_240_1_1_FacturasEmitidas_ConSG_AltaRespuesta_V1_0_1.xsd describes it. */
function altaRespuesta(regs: Reg[], doc = ALTA): string {
  const registros = regs
    .map(
      (r) =>
        '<Registro><Identificador><IDFactura>' +
        (r.series ? `<SerieFactura>${r.series}</SerieFactura>` : '') +
        `<NumFactura>${r.number}</NumFactura><FechaExpedicionFactura>${r.date ?? '29-02-2024'}</FechaExpedicionFactura></IDFactura></Identificador>` +
        `<SituacionRegistro><EstadoRegistro>${r.estado}</EstadoRegistro>` +
        (r.code ? `<CodigoErrorRegistro>${r.code}</CodigoErrorRegistro><DescripcionErrorRegistroES>${r.es ?? 'Error'}</DescripcionErrorRegistroES><DescripcionErrorRegistroEU>Akatsa</DescripcionErrorRegistroEU>` : '') +
        '</SituacionRegistro></Registro>',
    )
    .join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<lrpjfecsgar:${doc.responseRoot} xmlns:lrpjfecsgar="${lroeNamespace(doc.responseXsd)}">` +
    `<Cabecera><Modelo>240</Modelo><Capitulo>1</Capitulo><Subcapitulo>1.1</Subcapitulo><Operacion>${doc.root.includes('Anulacion') ? 'AN0' : 'A00'}</Operacion><Version>1.0</Version><Ejercicio>2024</Ejercicio>` +
    '<ObligadoTributario><NIF>B12345674</NIF><ApellidosNombreRazonSocial>Ejemplo SL</ApellidosNombreRazonSocial></ObligadoTributario></Cabecera>' +
    '<DatosPresentacion><FechaPresentacion>01-03-2024 10:00:00</FechaPresentacion><NIFPresentador>B12345674</NIFPresentador></DatosPresentacion>' +
    `<Registros>${registros}</Registros>` +
    `</lrpjfecsgar:${doc.responseRoot}>`
  );
}

const n3 = (tipo: string, extra: Record<string, string> = {}) => ({
  'content-encoding': 'gzip',
  'eus-bizkaia-n3-tipo-respuesta': tipo,
  'eus-bizkaia-n3-identificativo': 'ID-1',
  'eus-bizkaia-n3-numero-registro': '2024-REG-1',
  ...extra,
});
const gz = (s: string) => zlib.gzipSync(Buffer.from(s, 'utf8'));

const sent = (...numbers: string[]): LroeSentRecord[] =>
  numbers.map((n) => ({ key: { series: 'TB-2024-S', number: n, date: '29-02-2024' }, fiscalId: `TBAI-${n}` }));

describe('LROE answer headers', () => {
  it('reads the n3 headers, case-insensitively', () => {
    expect(readLroeHeaders({ 'Eus-Bizkaia-N3-Tipo-Respuesta': 'Correcto', 'eus-bizkaia-n3-numero-registro': 'R1', 'eus-bizkaia-n3-identificativo': 'I1' })).toEqual({
      tipoRespuesta: 'Correcto',
      codigo: null,
      mensaje: null,
      identificativo: 'I1',
      numeroRegistro: 'R1',
    });
  });

  it('reads the three answer types, in either spelling of the partial one', () => {
    expect(readLroeHeaders({ 'eus-bizkaia-n3-tipo-respuesta': 'Parcialmente correcto' }).tipoRespuesta).toBe('Parcialmente correcto');
    expect(readLroeHeaders({ 'eus-bizkaia-n3-tipo-respuesta': 'ParcialmenteCorrecto' }).tipoRespuesta).toBe('Parcialmente correcto');
    expect(readLroeHeaders({ 'eus-bizkaia-n3-tipo-respuesta': 'Incorrecto' }).tipoRespuesta).toBe('Incorrecto');
    expect(readLroeHeaders({}).tipoRespuesta).toBeNull();
  });

  it('messages are read as UTF-8 when their bytes are UTF-8, else as Latin-1', () => {
    const utf8AsLatin1 = Buffer.from('petición', 'utf8').toString('latin1');
    expect(readLroeHeaders({ 'eus-bizkaia-n3-mensaje-respuesta': utf8AsLatin1 }).mensaje).toBe('petición');
    expect(readLroeHeaders({ 'eus-bizkaia-n3-mensaje-respuesta': 'petición' }).mensaje).toBe('petición');
  });
});

describe('LROE answer body', () => {
  it('gunzips by header or magic bytes, passes plain text through', () => {
    expect(decodeLroeBody(gz('<a/>'), { 'content-encoding': 'gzip' })).toBe('<a/>');
    expect(decodeLroeBody(gz('<a/>'), {})).toBe('<a/>');
    expect(decodeLroeBody(Buffer.from('<a/>'), {})).toBe('<a/>');
    expect(decodeLroeBody(Buffer.alloc(0), {})).toBeNull();
    expect(decodeLroeBody(Buffer.from('nope'), { 'content-encoding': 'gzip' })).toBeNull();
  });

  it('reads DatosPresentacion and every Registro', () => {
    const body = parseLroeAnswerBody(altaRespuesta([
      { series: 'TB-2024-S', number: '1', estado: 'Correcto' },
      { number: '2', estado: 'Incorrecto', code: 'B4_2000063', es: 'La licencia TicketBAI no está registrada' },
    ]));
    expect(body).toEqual({
      fechaPresentacion: '01-03-2024 10:00:00',
      nifPresentador: 'B12345674',
      registros: [
        { key: { series: 'TB-2024-S', number: '1', date: '29-02-2024' }, estado: 'Correcto', codigo: null, descripcionEs: null, descripcionEu: null },
        {
          key: { series: '', number: '2', date: '29-02-2024' },
          estado: 'Incorrecto',
          codigo: 'B4_2000063',
          descripcionEs: 'La licencia TicketBAI no está registrada',
          descripcionEu: 'Akatsa',
        },
      ],
    });
  });

  withSchemas('the answers these tests build validate against the AltaRespuesta XSD', () => {
    const xml = altaRespuesta([{ series: 'S', number: '1', estado: 'Correcto' }, { number: '2', estado: 'Incorrecto', code: 'B4_2000003' }]);
    expect(xsdValidate(xml, `es/ticketbai/bizkaia-lroe/${ALTA.responseXsd}`).ok).toBe(true);
  });

  it('an identifier given as the base64 file is read from the file', () => {
    const file = '<T:TicketBai xmlns:T="urn:ticketbai:emision"><Sujetos><Emisor><NIF>B12345674</NIF></Emisor></Sujetos><Factura><CabeceraFactura><SerieFactura>S</SerieFactura><NumFactura>9</NumFactura><FechaExpedicionFactura>01-01-2024</FechaExpedicionFactura></CabeceraFactura></Factura></T:TicketBai>';
    const xml = altaRespuesta([]).replace(
      '<Registros></Registros>',
      `<Registros><Registro><Identificador><TicketBai>${Buffer.from(file).toString('base64')}</TicketBai></Identificador><SituacionRegistro><EstadoRegistro>Correcto</EstadoRegistro></SituacionRegistro></Registro></Registros>`,
    );
    expect(parseLroeAnswerBody(xml)!.registros[0]!.key).toEqual({ series: 'S', number: '9', date: '01-01-2024' });
  });

  it('null for what is not an answer', () => {
    expect(parseLroeAnswerBody('<html/>')).toBeNull();
    expect(parseLroeAnswerBody('garbage')).toBeNull();
  });
});

describe('LROE answer → per-record outcomes', () => {
  it('Correcto: every record accepted, with its TBAI id and the registration number', () => {
    const body = altaRespuesta([{ series: 'TB-2024-S', number: '1', estado: 'Correcto' }, { series: 'TB-2024-S', number: '2', estado: 'Correcto' }]);
    const a = interpretLroeAnswer({ status: 200, headers: n3('Correcto'), body: gz(body) }, sent('1', '2'), 'alta');
    expect(a.tipoRespuesta).toBe('Correcto');
    expect(a.numeroRegistro).toBe('2024-REG-1');
    expect(a.outcomes.map((o) => o.kind)).toEqual(['accepted', 'accepted']);
    expect(a.outcomes[1]).toMatchObject({ fiscalId: 'TBAI-2', response: { lroe_numero_registro: '2024-REG-1', estado_registro: 'Correcto' } });
  });

  it('Correcto without a body: every record accepted', () => {
    const a = interpretLroeAnswer({ status: 200, headers: n3('Correcto'), body: Buffer.alloc(0) }, sent('1'), 'alta');
    expect(a.outcomes[0]!.kind).toBe('accepted');
  });

  it('Parcialmente correcto: matched by invoice key, not by position', () => {
    const body = altaRespuesta([
      { series: 'TB-2024-S', number: '3', estado: 'Incorrecto', code: 'B4_2000063', es: 'La licencia TicketBAI no está registrada' },
      { series: 'TB-2024-S', number: '1', estado: 'Correcto' },
      { series: 'TB-2024-S', number: '2', estado: 'Incorrecto', code: 'B4_2000003', es: 'El registro no puede existir en el sistema' },
    ]);
    const a = interpretLroeAnswer({ status: 200, headers: n3('Parcialmente correcto'), body: gz(body) }, sent('1', '2', '3'), 'alta');
    expect(a.tipoRespuesta).toBe('Parcialmente correcto');
    expect(a.outcomes[0]).toMatchObject({ kind: 'accepted', fiscalId: 'TBAI-1' });
    expect(a.outcomes[1]).toMatchObject({ kind: 'duplicate', fiscalId: 'TBAI-2' });
    expect(a.outcomes[2]).toMatchObject({ kind: 'rejected', code: 'B4_2000063', message: 'La licencia TicketBAI no está registrada' });
  });

  it('AceptadoConErrores is accepted with a warning; a technical record error is retried', () => {
    const body = altaRespuesta([
      { series: 'TB-2024-S', number: '1', estado: 'AceptadoConErrores', code: 'B4_2000100', es: 'Aviso' },
      { series: 'TB-2024-S', number: '2', estado: 'Incorrecto', code: 'B4_1000004', es: 'Error técnico' },
    ]);
    const a = interpretLroeAnswer({ status: 200, headers: n3('Parcialmente correcto'), body: gz(body) }, sent('1', '2'), 'alta');
    expect(a.outcomes[0]).toMatchObject({ kind: 'accepted', warnings: ['B4_2000100: Aviso'] });
    expect(a.outcomes[1]).toMatchObject({ kind: 'retry_later', code: 'B4_1000004' });
  });

  it('a record missing from a partial answer is retried later', () => {
    const body = altaRespuesta([{ series: 'TB-2024-S', number: '1', estado: 'Correcto' }]);
    const a = interpretLroeAnswer({ status: 200, headers: n3('Parcialmente correcto'), body: gz(body) }, sent('1', '2'), 'alta');
    expect(a.outcomes[1]).toMatchObject({ kind: 'retry_later', code: 'lroe_record_missing' });
  });

  it('unreadable identifiers fall back to position when the counts agree', () => {
    const body = altaRespuesta([{ number: 'X', estado: 'Correcto' }, { number: 'Y', estado: 'Incorrecto', code: 'B4_2000063' }]);
    const a = interpretLroeAnswer({ status: 200, headers: n3('Parcialmente correcto'), body: gz(body) }, sent('1', '2'), 'alta');
    expect(a.outcomes.map((o) => o.kind)).toEqual(['accepted', 'rejected']);
  });

  it('Incorrecto with records: each record by its own result; anulación duplicate is B4_2000006', () => {
    const doc = LROE_DOCUMENTS['240'].anulacion;
    const body = altaRespuesta(
      [
        { series: 'TB-2024-S', number: '1', estado: 'Incorrecto', code: 'B4_2000006', es: 'El registro ya está anulado' },
        { series: 'TB-2024-S', number: '2', estado: 'Incorrecto', code: 'B4_2000004', es: 'El registro que se anula no existe en el sistema' },
      ],
      doc,
    );
    const a = interpretLroeAnswer(
      { status: 200, headers: n3('Incorrecto', { 'eus-bizkaia-n3-codigo-respuesta': 'B4_1000002' }), body: gz(body) },
      sent('1', '2'),
      'anulacion',
    );
    expect(a.tipoRespuesta).toBe('Incorrecto');
    expect(a.codigo).toBe('B4_1000002');
    expect(a.outcomes[0]).toMatchObject({ kind: 'duplicate' });
    expect(a.outcomes[1]).toMatchObject({ kind: 'rejected', code: 'B4_2000004' });
  });

  it('Incorrecto without records: the answer code for every record (rejected, or retried when server-side)', () => {
    const refused = interpretLroeAnswer(
      { status: 200, headers: n3('Incorrecto', { 'eus-bizkaia-n3-codigo-respuesta': 'B4_1000030', 'eus-bizkaia-n3-mensaje-respuesta': 'Nombre no coincide' }), body: Buffer.alloc(0) },
      sent('1', '2'),
      'alta',
    );
    expect(refused.outcomes).toEqual([
      expect.objectContaining({ kind: 'rejected', code: 'B4_1000030', message: 'Nombre no coincide' }),
      expect.objectContaining({ kind: 'rejected', code: 'B4_1000030' }),
    ]);
    const technical = interpretLroeAnswer(
      { status: 200, headers: n3('Incorrecto', { 'eus-bizkaia-n3-codigo-respuesta': 'B4_1000004', 'eus-bizkaia-n3-mensaje-respuesta': 'Error técnico' }), body: Buffer.alloc(0) },
      sent('1'),
      'alta',
    );
    expect(technical.outcomes[0]).toMatchObject({ kind: 'retry_later', code: 'B4_1000004' });
  });

  it('Incorrecto B4_1000002 ("every record incorrect") with no readable records: each record is sent again, never refused on the summary code', () => {
    for (const body of [Buffer.alloc(0), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01]), gz('<html>truncated')]) {
      const a = interpretLroeAnswer(
        { status: 200, headers: n3('Incorrecto', { 'eus-bizkaia-n3-codigo-respuesta': 'B4_1000002', 'eus-bizkaia-n3-mensaje-respuesta': 'Todos los registros son incorrectos' }), body },
        sent('1', '2'),
        'alta',
      );
      expect(a.outcomes).toEqual([
        expect.objectContaining({ kind: 'retry_later', code: 'lroe_record_missing' }),
        expect.objectContaining({ kind: 'retry_later', code: 'lroe_record_missing' }),
      ]);
    }
  });

  it('an answer with n3 headers counts even on a 5xx', () => {
    const a = interpretLroeAnswer(
      { status: 500, headers: n3('Incorrecto', { 'eus-bizkaia-n3-codigo-respuesta': 'B4_1000004' }), body: Buffer.alloc(0) },
      sent('1'),
      'alta',
    );
    expect(a.outcomes[0]!.kind).toBe('retry_later');
  });

  it('5xx or an unreadable 2xx without n3 headers is a transport fault', () => {
    expect(() => interpretLroeAnswer({ status: 503, headers: {}, body: Buffer.from('<html/>') }, sent('1'), 'alta')).toThrow(TransportError);
    expect(() => interpretLroeAnswer({ status: 200, headers: {}, body: Buffer.from('ok') }, sent('1'), 'alta')).toThrow(TransportError);
  });

  it('403 without n3 headers rejects every record (client certificate)', () => {
    const a = interpretLroeAnswer({ status: 403, headers: {}, body: Buffer.from('client certificate required') }, sent('1', '2'), 'alta');
    expect(a.outcomes.map((o) => (o.kind === 'rejected' ? o.code : o.kind))).toEqual(['http_403', 'http_403']);
  });
});
