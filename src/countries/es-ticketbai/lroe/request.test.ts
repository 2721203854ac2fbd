import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SAMPLE_NIF, officialSample, sampleVariant } from '../../../../test/support/fake-ticketbai.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../../test/support/xml-tools.ts';
import { goldenFiles } from '../../shared/golden.ts';
import { ticketBaiIdentity } from './identity.ts';
import {
  LROE_DOCUMENTS,
  LROE_MAX_RECORDS,
  LroeInputError,
  buildLroeHttpRequest,
  buildLroeRequestXml,
  lroeModelFor,
  lroeN3Data,
  lroeSubmissionUrl,
  type LroeModel,
  type LroeRequestInput,
} from './request.ts';
import type { LroeKind } from './identity.ts';

const withSchemas = (name: string, fn: () => void) => (HAVE_SCHEMAS ? it(name, fn) : it.skip(`${name} (${SCHEMAS_MISSING_MESSAGE})`, fn));

const COMPANY = { issuerNif: 'B12345674', issuerName: 'Ejemplo SL' };
const PERSON = { issuerNif: SAMPLE_NIF, issuerName: 'GEZURREZKO JAULKITZAILEA - EMISOR FICTICIO' };

/** The official samples, as a company's (240) or as the sample's own individual issuer (140). */
function files(model: LroeModel, kind: LroeKind): string[] {
  const names = kind === 'alta' ? (['alta-01', 'alta-02'] as const) : (['anulacion-02'] as const);
  return names.map((n) => (model === '240' ? sampleVariant(officialSample(n), { nif: COMPANY.issuerNif }) : officialSample(n)));
}

function input(model: LroeModel, kind: LroeKind): LroeRequestInput {
  return {
    model,
    kind,
    ...(model === '240' ? COMPANY : PERSON),
    year: 2024,
    files: files(model, kind),
    renta: model === '140' ? { epigrafe: '6520' } : undefined,
  };
}

/** golden/<name>, byte for byte (shared/golden.ts; `UPDATE_GOLDEN=1` rewrites it). */
const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));

describe('LROE model choice', () => {
  it('companies file Modelo 240, individuals Modelo 140', () => {
    expect(lroeModelFor('B12345674')).toBe('240');
    expect(lroeModelFor('A99800005')).toBe('240');
    expect(lroeModelFor('Q2826000H')).toBe('240');
    expect(lroeModelFor('99999974E')).toBe('140');
    expect(lroeModelFor('X1234567L')).toBe('140');
    expect(lroeModelFor('K1234567L')).toBe('140');
  });
});

describe('LROE request XML', () => {
  it('Cabecera, namespaces and one base64 file per item (240 alta)', () => {
    const xml = buildLroeRequestXml({ model: '240', kind: 'alta', ...COMPANY, year: 2024, files: ['<a>1</a>', Buffer.from('<b>ñ</b>')] });
    expect(xml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>' +
        '<lrpjfecsgap:LROEPJ240FacturasEmitidasConSGAltaPeticion xmlns:lrpjfecsgap="https://www.batuz.eus/fitxategiak/batuz/LROE/esquemas/LROE_PJ_240_1_1_FacturasEmitidas_ConSG_AltaPeticion_V1_0_2.xsd">' +
        '<Cabecera><Modelo>240</Modelo><Capitulo>1</Capitulo><Subcapitulo>1.1</Subcapitulo><Operacion>A00</Operacion><Version>1.0</Version><Ejercicio>2024</Ejercicio>' +
        '<ObligadoTributario><NIF>B12345674</NIF><ApellidosNombreRazonSocial>Ejemplo SL</ApellidosNombreRazonSocial></ObligadoTributario></Cabecera>' +
        `<FacturasEmitidas><FacturaEmitida><TicketBai>${Buffer.from('<a>1</a>').toString('base64')}</TicketBai></FacturaEmitida>` +
        `<FacturaEmitida><TicketBai>${Buffer.from('<b>ñ</b>').toString('base64')}</TicketBai></FacturaEmitida></FacturasEmitidas>` +
        '</lrpjfecsgap:LROEPJ240FacturasEmitidasConSGAltaPeticion>',
    );
  });

  it('anulación: Operacion AN0 and AnulacionTicketBai; 140: Ingresos with Renta', () => {
    const anul = buildLroeRequestXml({ model: '240', kind: 'anulacion', ...COMPANY, year: 2024, files: ['<x/>'] });
    expect(anul).toContain('<Operacion>AN0</Operacion>');
    expect(anul).toContain('<FacturasEmitidas><FacturaEmitida><AnulacionTicketBai>');
    const pf = buildLroeRequestXml({ model: '140', kind: 'alta', ...PERSON, year: 2024, files: ['<x/>'], renta: { epigrafe: '6520' } });
    expect(pf).toContain('<lrpficfcsgap:LROEPF140IngresosConFacturaConSGAltaPeticion');
    expect(pf).toContain('<Ingresos><Ingreso><TicketBai>PHgvPg==</TicketBai><Renta><DetalleRenta><Epigrafe>6520</Epigrafe></DetalleRenta></Renta></Ingreso></Ingresos>');
    const pfAnul = buildLroeRequestXml({ model: '140', kind: 'anulacion', ...PERSON, year: 2024, files: ['<x/>'] });
    expect(pfAnul).toContain('<Ingresos><Ingreso><AnulacionTicketBai>PHgvPg==</AnulacionTicketBai></Ingreso></Ingresos>');
  });

  it('escapes the name and cuts it at 120 characters', () => {
    const xml = buildLroeRequestXml({ model: '240', kind: 'alta', issuerNif: 'B12345674', issuerName: `A&B <${'x'.repeat(200)}`, year: 2024, files: ['<x/>'] });
    const name = /<ApellidosNombreRazonSocial>(.*?)<\/ApellidosNombreRazonSocial>/.exec(xml)![1]!;
    expect(name.startsWith('A&amp;B &lt;x')).toBe(true);
    expect(name.replace('&amp;', '&').replace('&lt;', '<')).toHaveLength(120);
  });

  it('refuses what Batuz could not accept', () => {
    const ok: LroeRequestInput = { model: '240', kind: 'alta', ...COMPANY, year: 2024, files: ['<x/>'] };
    expect(() => buildLroeRequestXml({ ...ok, issuerNif: 'B123' })).toThrow(LroeInputError);
    expect(() => buildLroeRequestXml({ ...ok, issuerName: ' ' })).toThrow(LroeInputError);
    expect(() => buildLroeRequestXml({ ...ok, year: 24 })).toThrow(LroeInputError);
    expect(() => buildLroeRequestXml({ ...ok, files: [] })).toThrow(LroeInputError);
    expect(() => buildLroeRequestXml({ ...ok, files: Array.from({ length: LROE_MAX_RECORDS + 1 }, () => '<x/>') })).toThrow(LroeInputError);
    expect(() => buildLroeRequestXml({ ...ok, model: '140', ...PERSON })).toThrow(/epigrafe/);
    expect(() => buildLroeRequestXml({ ...ok, model: '140', ...PERSON, renta: { epigrafe: '12345678' } })).toThrow(/epigrafe/);
  });

  for (const model of ['240', '140'] as const) {
    for (const kind of ['alta', 'anulacion'] as const) {
      withSchemas(`Modelo ${model} ${kind} validates against ${LROE_DOCUMENTS[model][kind].xsd}`, () => {
        const xml = buildLroeRequestXml(input(model, kind));
        const r = xsdValidate(xml, `es/ticketbai/bizkaia-lroe/${LROE_DOCUMENTS[model][kind].xsd}`);
        expect(r.output).toMatch(/validates$/);
        expect(r.ok).toBe(true);
      });
    }
  }

  withSchemas('the base64 files decode to the signed bytes, still valid TicketBAI', () => {
    const xml = buildLroeRequestXml(input('140', 'alta'));
    const b64 = [...xml.matchAll(/<TicketBai>([^<]+)<\/TicketBai>/g)].map((m) => m[1]!);
    expect(b64.map((b) => Buffer.from(b, 'base64').toString('utf8'))).toEqual([officialSample('alta-01'), officialSample('alta-02')]);
    expect(xsdValidate(Buffer.from(b64[0]!, 'base64'), 'es/ticketbai/ticketbaiv1-2-2.xsd').ok).toBe(true);
  });

  withSchemas('golden: Modelo 240 alta of the two official samples (UPDATE_GOLDEN=1 rewrites)', () => {
    expectGolden('pj240-alta.xml', buildLroeRequestXml(input('240', 'alta')));
  });

  withSchemas('golden: Modelo 140 anulación of the official cancellation sample', () => {
    expectGolden('pf140-anulacion.xml', buildLroeRequestXml(input('140', 'anulacion')));
  });
});

describe('LROE HTTP request', () => {
  it('n3 data header: con, apa, inte, drs; ASCII-only', () => {
    expect(lroeN3Data({ model: '240', ...COMPANY, year: 2024 })).toBe(
      '{"con":"LROE","apa":"1.1","inte":{"nif":"B12345674","nrs":"Ejemplo SL"},"drs":{"mode":"240","ejer":"2024"}}',
    );
    const accented = lroeN3Data({ model: '140', issuerNif: '12345678Z', issuerName: 'Iñaki Agirre Ibáñez €', year: 2025 });
    expect(accented).toMatch(/^[\x20-\x7e]+$/);
    expect(JSON.parse(accented)).toEqual({ con: 'LROE', apa: '1.1', inte: { nif: '12345678Z', nrs: 'Iñaki Agirre Ibáñez €' }, drs: { mode: '140', ejer: '2025' } });
  });

  it('headers per FORMATS.md §1.6 and a gzip body holding the XML', () => {
    const inp: LroeRequestInput = { model: '240', kind: 'alta', ...COMPANY, year: 2024, files: ['<x/>'] };
    const req = buildLroeHttpRequest(inp);
    expect(req.headers).toEqual({
      'content-encoding': 'gzip',
      'content-type': 'application/octet-stream',
      'accept-encoding': 'gzip',
      'eus-bizkaia-n3-version': '1.0',
      'eus-bizkaia-n3-content-type': 'application/xml',
      'eus-bizkaia-n3-data': lroeN3Data(inp),
    });
    expect(zlib.gunzipSync(req.body).toString('utf8')).toBe(req.xml);
    expect(req.xml).toBe(buildLroeRequestXml(inp));
  });

  it('submission endpoints (production, test, fake)', () => {
    expect(lroeSubmissionUrl('live')).toBe('https://sarrerak.bizkaia.eus/N3B4000M/aurkezpena');
    expect(lroeSubmissionUrl('test')).toBe('https://pruesarrerak.bizkaia.eus/N3B4000M/aurkezpena');
    expect(lroeSubmissionUrl('test', 'https://127.0.0.1:9999/')).toBe('https://127.0.0.1:9999/N3B4000M/aurkezpena');
  });
});

describe('TicketBAI file identity', () => {
  withSchemas('reads issuer, invoice key, year and the TBAI id of the official samples', () => {
    expect(ticketBaiIdentity(officialSample('alta-01'))).toEqual({
      kind: 'alta',
      nif: SAMPLE_NIF,
      name: 'GEZURREZKO JAULKITZAILEA - EMISOR FICTICIO',
      series: 'TB-2024-S',
      number: '1',
      date: '29-02-2024',
      year: 2024,
      // FORMATS.md test vectors: sample 01.
      tbaiId: 'TBAI-99999974E-290224-Yl3mXsALUBz6H-135',
    });
    expect(ticketBaiIdentity(officialSample('anulacion-02'))).toMatchObject({ kind: 'anulacion', nif: SAMPLE_NIF, series: 'TB-2024-S', number: '2', tbaiId: null });
  });

  it('null for anything else', () => {
    expect(ticketBaiIdentity('<x/>')).toBeNull();
    expect(ticketBaiIdentity('not xml')).toBeNull();
  });
});
