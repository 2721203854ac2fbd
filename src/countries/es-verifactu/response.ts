/**
 * AEAT's answers to a VERI*FACTU submission, read with fast-xml-parser:
 *
 * - `RespuestaRegFactuSistemaFacturacion` (RespuestaSuministro.xsd): `CSV` (only when the
 *   submission is not rejected as a whole), `TiempoEsperaEnvio` (seconds to wait before
 *   the next submission: flow control), `EstadoEnvio` (Correcto / ParcialmenteCorrecto /
 *   Incorrecto) and per record a `RespuestaLinea` with `EstadoRegistro` (Correcto /
 *   AceptadoConErrores / Incorrecto), `CodigoErrorRegistro`, `DescripcionErrorRegistro`
 *   and, for a duplicate, `RegistroDuplicado` (FORMATS.md §2.5);
 * - a SOAP 1.1 `Fault` (SOAP 1.1 §4.4), which AEAT uses for errors that reject the whole
 *   request (schema, header, certificate…). Its faultstring reads
 *   `Codigo[4102].El XML no cumple el esquema…` (the code of AEAT's errores.properties).
 *
 * Namespace prefixes vary (AEAT answers with `env:`, `tikR:`, `tik:`), so they are
 * dropped; values stay strings (codes and CSVs are not numbers).
 */
import { XMLParser } from 'fast-xml-parser';
import type { AuthorityCode, AuthorityOutcome } from '../types.ts';

export type EstadoEnvio = 'Correcto' | 'ParcialmenteCorrecto' | 'Incorrecto';
export type EstadoRegistro = 'Correcto' | 'AceptadoConErrores' | 'Incorrecto';

export interface RespuestaLinea {
  IDEmisorFactura?: string | undefined;
  NumSerieFactura?: string | undefined;
  FechaExpedicionFactura?: string | undefined;
  TipoOperacion?: string | undefined;
  EstadoRegistro: EstadoRegistro;
  CodigoErrorRegistro?: string | undefined;
  DescripcionErrorRegistro?: string | undefined;
  RegistroDuplicado?: {
    IdPeticionRegistroDuplicado?: string | undefined;
    EstadoRegistroDuplicado?: string | undefined;
    CodigoErrorRegistro?: string | undefined;
    DescripcionErrorRegistro?: string | undefined;
  } | undefined;
}

export type VerifactuAnswer =
  | {
      kind: 'respuesta';
      EstadoEnvio: EstadoEnvio;
      CSV?: string | undefined;
      /** Seconds; undefined when absent or unreadable. */
      TiempoEsperaEnvio?: number | undefined;
      lineas: RespuestaLinea[];
    }
  | {
      kind: 'fault';
      faultcode: string;
      faultstring: string;
      /** The AEAT code in `Codigo[…]`, when the faultstring carries one. */
      code?: string | undefined;
    };

const parser = new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name === 'RespuestaLinea',
});

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

const ESTADOS_ENVIO: readonly string[] = ['Correcto', 'ParcialmenteCorrecto', 'Incorrecto'];
const ESTADOS_REGISTRO: readonly string[] = ['Correcto', 'AceptadoConErrores', 'Incorrecto'];

/**
 * Reads an AEAT answer. Null when the text is not a SOAP envelope holding a Fault or a
 * RespuestaRegFactuSistemaFacturacion (an HTML error page, a truncated body…).
 */
export function parseVerifactuAnswer(text: string): VerifactuAnswer | null {
  let doc: unknown;
  try {
    doc = parser.parse(text, true);
  } catch {
    return null;
  }
  const body = isNode(doc) && isNode(doc.Envelope) ? doc.Envelope.Body : undefined;
  if (!isNode(body)) return null;
  if (isNode(body.Fault)) {
    const faultcode = str(body.Fault.faultcode) ?? '';
    const faultstring = str(body.Fault.faultstring) ?? '';
    const code = /Codigo\[(\w+)\]/.exec(faultstring)?.[1];
    return { kind: 'fault', faultcode, faultstring, code };
  }
  const r = body.RespuestaRegFactuSistemaFacturacion;
  if (!isNode(r)) return null;
  const estado = str(r.EstadoEnvio);
  if (estado === undefined || !ESTADOS_ENVIO.includes(estado)) return null;
  const wait = str(r.TiempoEsperaEnvio);
  const lineas: RespuestaLinea[] = [];
  for (const l of Array.isArray(r.RespuestaLinea) ? r.RespuestaLinea : []) {
    if (!isNode(l)) continue;
    const estadoRegistro = str(l.EstadoRegistro);
    if (estadoRegistro === undefined || !ESTADOS_REGISTRO.includes(estadoRegistro)) return null;
    const id = isNode(l.IDFactura) ? l.IDFactura : {};
    const op = isNode(l.Operacion) ? l.Operacion : {};
    const dup = isNode(l.RegistroDuplicado) ? l.RegistroDuplicado : undefined;
    lineas.push({
      IDEmisorFactura: str(id.IDEmisorFactura),
      NumSerieFactura: str(id.NumSerieFactura),
      FechaExpedicionFactura: str(id.FechaExpedicionFactura),
      TipoOperacion: str(op.TipoOperacion),
      EstadoRegistro: estadoRegistro as EstadoRegistro,
      CodigoErrorRegistro: str(l.CodigoErrorRegistro),
      DescripcionErrorRegistro: str(l.DescripcionErrorRegistro),
      RegistroDuplicado: dup && {
        IdPeticionRegistroDuplicado: str(dup.IdPeticionRegistroDuplicado),
        EstadoRegistroDuplicado: str(dup.EstadoRegistroDuplicado),
        CodigoErrorRegistro: str(dup.CodigoErrorRegistro),
        DescripcionErrorRegistro: str(dup.DescripcionErrorRegistro),
      },
    });
  }
  return {
    kind: 'respuesta',
    EstadoEnvio: estado as EstadoEnvio,
    CSV: str(r.CSV),
    TiempoEsperaEnvio: wait !== undefined && /^\d{1,6}$/.test(wait) ? Number(wait) : undefined,
    lineas,
  };
}

/** Drops undefined entries: the stored response is JSON. */
function compact(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = isNode(v) ? compact(v) : v;
  return out;
}

const explain = (codes: Readonly<Record<string, AuthorityCode>>, code: string, aeatText: string | undefined): string =>
  codes[code]?.message ?? (aeatText ? `AEAT error ${code}: ${aeatText}` : `AEAT rejected the record with code ${code} (no description is known for this code)`);

/**
 * The outcome of one record's submission. `record` picks its RespuestaLinea by invoice
 * number when AEAT answers for several; with one record sent, the only line is its own.
 */
export function answerToOutcome(
  answer: VerifactuAnswer,
  codes: Readonly<Record<string, AuthorityCode>>,
  record?: { NumSerieFactura?: string | undefined },
): AuthorityOutcome {
  if (answer.kind === 'fault') {
    const code = answer.code ?? 'SOAP_FAULT';
    const response = compact({ soap_fault: { faultcode: answer.faultcode, faultstring: answer.faultstring }, code: answer.code });
    const message = explain(codes, code, answer.faultstring);
    // SOAP 1.1 §4.4.1: a Server fault is the service's own failure, worth retrying;
    // a Client fault is the message's, unless AEAT lists the code as technical.
    const server = /(^|:)Server(\.|$)/.test(answer.faultcode);
    if (server || codes[code]?.retriable === true) return { kind: 'retry_later', code, message, response };
    return { kind: 'rejected', code, message, response };
  }

  const linea = answer.lineas.find((l) => record?.NumSerieFactura !== undefined && l.NumSerieFactura === record.NumSerieFactura) ?? answer.lineas[0];
  const response = compact({
    EstadoEnvio: answer.EstadoEnvio,
    CSV: answer.CSV,
    TiempoEsperaEnvio: answer.TiempoEsperaEnvio,
    EstadoRegistro: linea?.EstadoRegistro,
    CodigoErrorRegistro: linea?.CodigoErrorRegistro,
    DescripcionErrorRegistro: linea?.DescripcionErrorRegistro,
    RegistroDuplicado: linea?.RegistroDuplicado,
  });
  if (linea === undefined) {
    // No line for the record: AEAT accepted or refused the submission as a whole.
    if (answer.EstadoEnvio === 'Correcto' && answer.CSV) return { kind: 'accepted', fiscalId: answer.CSV, response };
    return { kind: 'rejected', code: 'NO_RECORD_STATUS', message: 'AEAT answered without a status for the record', response };
  }
  switch (linea.EstadoRegistro) {
    case 'Correcto':
      return { kind: 'accepted', fiscalId: answer.CSV, response };
    case 'AceptadoConErrores': {
      // Registered, but to be corrected later with a Subsanacion (errores.properties 2xxx).
      const code = linea.CodigoErrorRegistro;
      const warning = code === undefined ? linea.DescripcionErrorRegistro ?? 'accepted with errors' : `${code}: ${explain(codes, code, linea.DescripcionErrorRegistro)}`;
      return { kind: 'accepted', fiscalId: answer.CSV, response, warnings: [warning] };
    }
    case 'Incorrecto': {
      const code = linea.CodigoErrorRegistro ?? 'INCORRECTO';
      // 3000: AEAT already holds this invoice (issuer, number, date): what it holds stands.
      if (codes[code]?.duplicate === true) return { kind: 'duplicate', fiscalId: answer.CSV, response };
      const message = explain(codes, code, linea.DescripcionErrorRegistro);
      if (codes[code]?.retriable === true) {
        return { kind: 'retry_later', code, message, response, retryAfterSeconds: answer.TiempoEsperaEnvio || undefined };
      }
      return { kind: 'rejected', code, message, response };
    }
  }
}
