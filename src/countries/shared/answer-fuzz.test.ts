import { describe, expect, it } from 'vitest';
import { TransportError } from '../types.ts';
import { parseVerifactuAnswer } from '../es-verifactu/response.ts';
import { parseSiiResponse } from '../es-sii/response.ts';
import { interpretTicketBaiHttp, parseTicketBaiResponse } from '../es-ticketbai/response.ts';
import { interpretLroeAnswer, parseLroeAnswerBody } from '../es-ticketbai/lroe/response.ts';
import { parseSdiCoopResponse } from '../it-sdi/sdicoop.ts';
import { interpretAnswer, readEsito } from '../it-dc/corrispettivi/response.ts';
import { parseResponseDoc } from '../gr-mydata/response.ts';
import { ValidationError } from '../../core/errors.ts';

/**
 * What an authority answers is not ours: every country's reader of an answer is given
 * bodies an authority, a proxy in front of it or a broken connection could send, and must
 * either read them or refuse them with its own error (a transport fault, retried; a
 * "cannot read" answer), never crash on them (a TypeError would reach the merchant as
 * "Cannot read properties of undefined" and the queue as an unexplained failure).
 */
const SOAP = (body: string) => `<?xml version="1.0"?><env:Envelope xmlns:env="http://schemas.xmlsoap.org/soap/envelope/"><env:Body>${body}</env:Body></env:Envelope>`;
const BODIES: readonly string[] = [
  '', ' ', 'null', '{}', '[]', '<', '<a>', '<html><body>502 Bad Gateway</body></html>', 'x'.repeat(100_000), '\u0000\u0001\u0002',
  '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>', '<a>'.repeat(20_000) + '</a>'.repeat(20_000),
  SOAP(''), SOAP('<x/>'), SOAP('<env:Fault/>'), SOAP('<env:Fault><faultcode>x</faultcode></env:Fault>'),
  SOAP('<RespuestaRegFactuSistemaFacturacion/>'), SOAP('<RespuestaLRFacturasEmitidas><RespuestaLinea/></RespuestaLRFacturasEmitidas>'),
  '<TicketBaiResponse/>', '<TicketBaiResponse><Salida/></TicketBaiResponse>', '<LROEPJ240FacturasEmitidasConSGAltaRespuesta/>',
  '<ResponseDoc/>', '<ResponseDoc><response/></ResponseDoc>', '<ResponseDoc><response><statusCode/><errors><error/></errors></response></ResponseDoc>',
  SOAP('<ns:rispostaSdIRiceviFile xmlns:ns="http://www.fatturapa.gov.it/sdi/ws/trasmissione/v1.0/types"/>'),
  '<EsitoOperazione/>', '<EsitoOperazione><Errori><Errore/></Errori></EsitoOperazione>', '{"idOperazione":null,"errori":[null]}', '{"errori":"x"}',
];
const HEADERS: readonly Record<string, string>[] = [
  {}, { 'content-type': 'text/xml' }, { 'content-encoding': 'gzip' }, { 'eus-bizkaia-n3-tipo-respuesta': 'Correcto' },
  { 'eus-bizkaia-n3-tipo-respuesta': 'Incorrecto', 'eus-bizkaia-n3-codigo-respuesta': 'B4_1000001' }, { 'retry-after': 'x' }, { 'retry-after': '-5' },
];
const STATUSES = [200, 202, 400, 403, 404, 408, 429, 500, 503];

/** Runs `read`; a crash (a TypeError, RangeError…) is reported, a deliberate refusal is fine. */
function crashOf(read: () => unknown): string | undefined {
  try {
    read();
    return undefined;
  } catch (e) {
    if (e instanceof TransportError || e instanceof ValidationError) return undefined;
    if (e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError || e instanceof SyntaxError) return `${e.name}: ${e.message}`;
    return undefined; // the reader's own error, with its message
  }
}

describe('authority answers nobody planned for: read or refused, never a crash', () => {
  const readers: Record<string, (body: string, status: number, headers: Record<string, string>) => unknown> = {
    'VERI*FACTU': (b) => parseVerifactuAnswer(b),
    SII: (b) => parseSiiResponse(b),
    'TicketBAI (parse)': (b) => parseTicketBaiResponse(b),
    'TicketBAI (HTTP)': (b, status, headers) => interpretTicketBaiHttp({ status, headers, body: Buffer.from(b) }, 'alta', { fiscalId: null, host: 'test' }),
    'LROE (body)': (b) => parseLroeAnswerBody(b),
    'LROE (HTTP)': (b, status, headers) => interpretLroeAnswer({ status, headers, body: Buffer.from(b) }, [{ key: { series: 'S', number: '1', date: '15-01-2026' }, fiscalId: 'TBAI-1' }], 'alta'),
    SdICoop: (b) => parseSdiCoopResponse(b),
    'corrispettivi (esito)': (b) => readEsito(b),
    'corrispettivi (HTTP)': (b, status, headers) => interpretAnswer({ status, headers, body: Buffer.from(b) }, new Date('2026-01-15T10:00:00Z')),
    myDATA: (b) => parseResponseDoc(b),
  };
  it.each(Object.keys(readers))('%s', (name) => {
    const read = readers[name]!;
    const crashes: string[] = [];
    // A reader that takes the HTTP status (and headers) is tried with each: its arity says.
    for (const body of BODIES) {
      for (const status of read.length > 1 ? STATUSES : [200]) {
        for (const headers of read.length > 2 ? HEADERS : [{}]) {
          const crash = crashOf(() => read(body, status, headers));
          if (crash) crashes.push(`${status} ${JSON.stringify(headers)} ${JSON.stringify(body.slice(0, 80))}: ${crash}`);
        }
      }
    }
    expect(crashes).toEqual([]);
  });
});
