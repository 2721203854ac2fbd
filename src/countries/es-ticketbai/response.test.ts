import { describe, expect, it } from 'vitest';
import { TransportError } from '../types.ts';
import { interpretTicketBaiHttp, parseTicketBaiResponse, ticketBaiOutcome } from './response.ts';

const TBAI_ID = 'TBAI-99999974E-290224-Yl3mXsALUBz6H-135';

/** The answer shape of FORMATS.md §1.6 (as in the Odoo l10n_es_edi_tbai test answer). */
function answer(estado: string, resultados: [string, string][] = [], extra = ''): string {
  const rv = resultados
    .map(([c, d]) => `<ResultadosValidacion><Codigo>${c}</Codigo><Descripcion>${d}</Descripcion><Azalpena>eu ${d}</Azalpena></ResultadosValidacion>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<TicketBaiResponse>
  <Salida>
    <IdentificadorTBAI>${TBAI_ID}</IdentificadorTBAI>
    <FechaRecepcion>01-03-2024 12:31:34</FechaRecepcion>
    <Estado>${estado}</Estado>
    <Descripcion>DESC_ES</Descripcion>
    <Azalpena>DESC_EU</Azalpena>
    ${rv}
    ${extra}
  </Salida>
</TicketBaiResponse>`;
}

const http = (status: number, body: string, headers: Record<string, string> = {}) => ({ status, headers, body: Buffer.from(body) });

describe('TicketBAI answer parsing (Gipuzkoa, Araba)', () => {
  it('reads every field of Salida, codes kept as strings', () => {
    const a = parseTicketBaiResponse(answer('01', [['005', 'Ya recibida'], ['011', 'Otro']], '<CSV>TBAI33076dde</CSV>'));
    expect(a).toEqual({
      identificadorTbai: TBAI_ID,
      fechaRecepcion: '01-03-2024 12:31:34',
      estado: '01',
      descripcion: 'DESC_ES',
      azalpena: 'DESC_EU',
      resultados: [
        { codigo: '005', descripcion: 'Ya recibida', azalpena: 'eu Ya recibida' },
        { codigo: '011', descripcion: 'Otro', azalpena: 'eu Otro' },
      ],
      csv: 'TBAI33076dde',
    });
  });

  it('ignores namespace prefixes', () => {
    const xml = '<t:TicketBaiResponse xmlns:t="urn:x"><t:Salida><t:Estado>00</t:Estado><t:CSV>C1</t:CSV></t:Salida></t:TicketBaiResponse>';
    expect(parseTicketBaiResponse(xml)).toMatchObject({ estado: '00', csv: 'C1', resultados: [] });
  });

  it('returns null for anything that is not a TicketBaiResponse', () => {
    expect(parseTicketBaiResponse('')).toBeNull();
    expect(parseTicketBaiResponse('<html><body>503</body>')).toBeNull();
    expect(parseTicketBaiResponse('<Other><Salida><Estado>00</Estado></Salida></Other>')).toBeNull();
    expect(parseTicketBaiResponse('<TicketBaiResponse><Salida></Salida></TicketBaiResponse>')).toBeNull();
  });
});

describe('TicketBAI answer → outcome', () => {
  const opts = { fiscalId: 'TBAI-LOCAL' };

  it('Estado 00 is accepted, with the TBAI id as fiscal id and the CSV kept', () => {
    const o = ticketBaiOutcome(parseTicketBaiResponse(answer('00', [], '<CSV>TBAI-CSV-1</CSV>'))!, 'alta', opts);
    expect(o.kind).toBe('accepted');
    if (o.kind !== 'accepted') return;
    expect(o.fiscalId).toBe(TBAI_ID);
    expect(o.response).toMatchObject({ estado: '00', csv: 'TBAI-CSV-1', fecha_recepcion: '01-03-2024 12:31:34' });
    expect(o.warnings).toBeUndefined();
  });

  it('validation results that come with Estado 00 are warnings', () => {
    const o = ticketBaiOutcome(parseTicketBaiResponse(answer('00', [['100', 'Aviso']]))!, 'alta', opts);
    expect(o).toMatchObject({ kind: 'accepted', warnings: ['100: Aviso'] });
  });

  it('Estado 01 is rejected with the first validation code', () => {
    const o = ticketBaiOutcome(parseTicketBaiResponse(answer('01', [['011', 'Datos incorrectos'], ['012', 'Licencia']]))!, 'alta', opts);
    expect(o).toMatchObject({ kind: 'rejected', code: '011', message: 'Datos incorrectos' });
  });

  it('Estado 01 without validation results is still a rejection', () => {
    const o = ticketBaiOutcome(parseTicketBaiResponse(answer('01'))!, 'alta', opts);
    expect(o).toMatchObject({ kind: 'rejected', code: 'estado_01', message: 'DESC_ES' });
  });

  it('"already received" is a duplicate: 005 or 019 for an alta, 019 for a cancellation', () => {
    expect(ticketBaiOutcome(parseTicketBaiResponse(answer('01', [['005', 'Ya recibida']]))!, 'alta', opts)).toMatchObject({
      kind: 'duplicate',
      fiscalId: TBAI_ID,
    });
    expect(ticketBaiOutcome(parseTicketBaiResponse(answer('01', [['019', 'x']]))!, 'alta', opts).kind).toBe('duplicate');
    expect(ticketBaiOutcome(parseTicketBaiResponse(answer('01', [['019', 'Ya anulada']]))!, 'anulacion', opts).kind).toBe('duplicate');
    // 005 means something else in the cancellation list.
    expect(ticketBaiOutcome(parseTicketBaiResponse(answer('01', [['005', 'Certificado']]))!, 'anulacion', opts)).toMatchObject({
      kind: 'rejected',
      code: '005',
    });
  });

  it('a duplicate code anywhere in the list wins over other codes', () => {
    const o = ticketBaiOutcome(parseTicketBaiResponse(answer('01', [['011', 'x'], ['005', 'Ya recibida']]))!, 'alta', opts);
    expect(o.kind).toBe('duplicate');
  });

  it('006 (service unavailable) is retried later', () => {
    const o = ticketBaiOutcome(parseTicketBaiResponse(answer('01', [['006', 'Servicio no disponible']]))!, 'alta', opts);
    expect(o).toMatchObject({ kind: 'retry_later', code: '006', message: 'Servicio no disponible' });
  });

  it('falls back to the local TBAI id when the answer has none', () => {
    const o = ticketBaiOutcome(parseTicketBaiResponse('<TicketBaiResponse><Salida><Estado>00</Estado></Salida></TicketBaiResponse>')!, 'alta', opts);
    expect(o).toMatchObject({ kind: 'accepted', fiscalId: 'TBAI-LOCAL' });
  });
});

describe('TicketBAI HTTP exchange → outcome', () => {
  const opts = { fiscalId: null, host: 'tbai-z.prep.gipuzkoa.eus' };

  it('a parsable answer is the answer, whatever the status', () => {
    expect(interpretTicketBaiHttp(http(200, answer('00')), 'alta', opts).kind).toBe('accepted');
    expect(interpretTicketBaiHttp(http(500, answer('01', [['006', 'No disponible']])), 'alta', opts).kind).toBe('retry_later');
  });

  it('5xx without an answer is a transport fault', () => {
    const err = (() => {
      try {
        interpretTicketBaiHttp(http(503, '<html>Service Unavailable</html>'), 'alta', opts);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('server_error');
  });

  it('a 2xx that cannot be read is a transport fault too', () => {
    expect(() => interpretTicketBaiHttp(http(200, 'OK'), 'alta', opts)).toThrow(TransportError);
  });

  it('403 without an answer is a refusal (client certificate)', () => {
    const o = interpretTicketBaiHttp(http(403, 'client certificate required'), 'alta', opts);
    expect(o).toMatchObject({ kind: 'rejected', code: 'http_403' });
    if (o.kind === 'rejected') expect(o.message).toMatch(/client certificate/);
  });

  it('429 is retried later, honouring Retry-After', () => {
    expect(interpretTicketBaiHttp(http(429, '', { 'retry-after': '30' }), 'alta', opts)).toMatchObject({
      kind: 'retry_later',
      code: 'http_429',
      retryAfterSeconds: 30,
    });
  });
});
