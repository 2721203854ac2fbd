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
import { unescapeXml } from '../shared/xml-text.ts';

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
 * What identifies a record in AEAT's answer: `RespuestaLinea` repeats the invoice id
 * (`IDFactura`: issuer, number, issue date; for an annulment, the annulled invoice's) and
 * the operation (`Operacion/TipoOperacion`: Alta or Anulacion), RespuestaSuministro.xsd
 * `RespuestaExpedidaType`. The operation tells an alta from its annulment when both travel
 * in one request. Fields left undefined are not compared.
 */
export interface RecordKey {
  IDEmisorFactura?: string | undefined;
  NumSerieFactura?: string | undefined;
  FechaExpedicionFactura?: string | undefined;
  TipoOperacion?: 'Alta' | 'Anulacion' | undefined;
}

/**
 * The key of a stored record (a `sf:RegistroAlta` or `sf:RegistroAnulacion` as xml.ts
 * writes it: its first `sf:IDFactura` is the record's own), values unescaped and trimmed
 * as AEAT's answer carries them. Undefined for anything else (a placeholder).
 */
export function recordKeyOf(body: string): RecordKey | undefined {
  const op = /^<sf:Registro(Alta|Anulacion)[ >]/.exec(body)?.[1] as 'Alta' | 'Anulacion' | undefined;
  if (!op) return undefined;
  const idFactura = /<sf:IDFactura>([\s\S]*?)<\/sf:IDFactura>/.exec(body)?.[1] ?? '';
  const suffix = op === 'Anulacion' ? 'Anulada' : '';
  const field = (name: string) => {
    const m = new RegExp(`<sf:${name}${suffix}>([^<]*)</sf:${name}${suffix}>`).exec(idFactura);
    return m ? unescapeXml(m[1]!).trim() : undefined;
  };
  return { IDEmisorFactura: field('IDEmisorFactura'), NumSerieFactura: field('NumSerieFactura'), FechaExpedicionFactura: field('FechaExpedicionFactura'), TipoOperacion: op };
}

const describeKey = (k: RecordKey): string =>
  [k.TipoOperacion, k.IDEmisorFactura, k.NumSerieFactura, k.FechaExpedicionFactura].filter((v) => v !== undefined).join(' ');

function matches(l: RespuestaLinea, k: RecordKey): boolean {
  return (k.IDEmisorFactura === undefined || l.IDEmisorFactura === k.IDEmisorFactura)
    && (k.NumSerieFactura === undefined || l.NumSerieFactura === k.NumSerieFactura)
    && (k.FechaExpedicionFactura === undefined || l.FechaExpedicionFactura === k.FechaExpedicionFactura)
    && (k.TipoOperacion === undefined || l.TipoOperacion === k.TipoOperacion);
}

/** A SOAP Fault: AEAT refused the message as a whole (no record was judged). */
export function faultToOutcome(
  answer: Extract<VerifactuAnswer, { kind: 'fault' }>,
  codes: Readonly<Record<string, AuthorityCode>>,
): Extract<AuthorityOutcome, { kind: 'retry_later' | 'rejected' }> {
  const code = answer.code ?? 'SOAP_FAULT';
  const response = compact({ soap_fault: { faultcode: answer.faultcode, faultstring: answer.faultstring }, code: answer.code });
  const message = explain(codes, code, answer.faultstring);
  // SOAP 1.1 §4.4.1: a Server fault is the service's own failure, worth retrying;
  // a Client fault is the message's, unless AEAT lists the code as technical.
  const server = /(^|:)Server(\.|$)/.test(answer.faultcode);
  if (server || codes[code]?.retriable === true) return { kind: 'retry_later', code, message, response };
  return { kind: 'rejected', code, message, response };
}

/**
 * The outcome of each record of a request that AEAT answered with a
 * `RespuestaRegFactuSistemaFacturacion`, in the order of `keys`. Each record takes the
 * answer line that names it (`IDFactura` + `TipoOperacion`), wherever it stands in the
 * answer; a line serves one record only. A record no line names was not answered for:
 * `NO_RECORD_LINE`, a retriable failure (sending it again is safe: if AEAT holds it, it
 * answers 3000 and the record counts as registered).
 */
export function answerOutcomes(
  answer: Extract<VerifactuAnswer, { kind: 'respuesta' }>,
  codes: Readonly<Record<string, AuthorityCode>>,
  keys: readonly RecordKey[],
): AuthorityOutcome[] {
  const used = new Set<number>();
  return keys.map((key) => {
    const index = answer.lineas.findIndex((l, i) => !used.has(i) && matches(l, key));
    if (index < 0) {
      const response = compact({ EstadoEnvio: answer.EstadoEnvio, CSV: answer.CSV, TiempoEsperaEnvio: answer.TiempoEsperaEnvio });
      const message = `${codes.NO_RECORD_LINE?.message ?? 'AEAT\'s answer has no line for this record.'} (${describeKey(key)})`;
      return { kind: 'retry_later', code: 'NO_RECORD_LINE', message, response };
    }
    used.add(index);
    return lineOutcome(answer, answer.lineas[index]!, codes, key.TipoOperacion);
  });
}

/**
 * The outcome of one record's submission: a Fault, or the answer line that names the
 * record (see `answerOutcomes`).
 */
export function answerToOutcome(answer: VerifactuAnswer, codes: Readonly<Record<string, AuthorityCode>>, key: RecordKey): AuthorityOutcome {
  if (answer.kind === 'fault') return faultToOutcome(answer, codes);
  return answerOutcomes(answer, codes, [key])[0]!;
}

/**
 * Codes by which AEAT refuses an annulment because it holds exactly what the annulment asks
 * for: 3001 "El registro de facturación ya ha sido dado de baja" (errores.properties). Our
 * own annulment sent again after its answer was lost meets it, so for a RegistroAnulacion it
 * is the duplicate, as 3000 is for an alta (and TicketBAI 019, LROE B4_2000006 for theirs).
 * On an alta it stays a rejection (the invoice is annulled at AEAT).
 */
export const ANNULMENT_HELD_CODES: readonly string[] = ['3001'];

/**
 * Why a duplicate leaves `fiscal_id` empty (`response_payload.warnings`). The VERI*FACTU CSV
 * belongs to a submission, not to a record: RespuestaSuministro.xsd `RespuestaBaseType/CSV`
 * "CSV asociado al envío generado por AEAT. Solo se genera si no hay rechazo del envío". The
 * submission that registered the record is the earlier one whose answer was lost (AEAT names
 * it: `RegistroDuplicado/IdPeticionRegistroDuplicado`, a request id, not a CSV), and nothing
 * returns its CSV later: the consultation service (`ConsultaFactuSistemaFacturacion`,
 * RespuestaConsultaLR.xsd `RegistroRespuestaConsultaRegFacturacionType`) gives each record's
 * `DatosPresentacion` as NIFPresentador, TimestampPresentacion and IdPeticion, no CSV (where
 * SII's consultation, DatosPresentacion2Type, has one).
 */
export function duplicateWarning(code: string, idPeticion: string | undefined): string {
  const held = idPeticion ? `AEAT already holds this record, registered by its submission ${idPeticion}` : 'AEAT already holds this record';
  return `${code}: ${held}. AEAT gives a CSV only in the answer to the submission that registers a record, and neither this answer nor its consultation service returns it: this answer sets no fiscal_id.`;
}

/** One record's answer line as an outcome (`operation`: the record's own, else the line's). */
function lineOutcome(
  answer: Extract<VerifactuAnswer, { kind: 'respuesta' }>,
  linea: RespuestaLinea,
  codes: Readonly<Record<string, AuthorityCode>>,
  operation: RecordKey['TipoOperacion'] = undefined,
): AuthorityOutcome {
  const response = compact({
    EstadoEnvio: answer.EstadoEnvio,
    CSV: answer.CSV,
    TiempoEsperaEnvio: answer.TiempoEsperaEnvio,
    EstadoRegistro: linea.EstadoRegistro,
    CodigoErrorRegistro: linea.CodigoErrorRegistro,
    DescripcionErrorRegistro: linea.DescripcionErrorRegistro,
    RegistroDuplicado: linea.RegistroDuplicado,
  });
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
      // No fiscal id: the answer's CSV, when there is one (ParcialmenteCorrecto), is this
      // submission's, which did not register the record (`duplicateWarning`).
      if (codes[code]?.duplicate === true || ((operation ?? linea.TipoOperacion) === 'Anulacion' && ANNULMENT_HELD_CODES.includes(code))) {
        return { kind: 'duplicate', fiscalId: undefined, response, warnings: [duplicateWarning(code, linea.RegistroDuplicado?.IdPeticionRegistroDuplicado)] };
      }
      const message = explain(codes, code, linea.DescripcionErrorRegistro);
      if (codes[code]?.retriable === true) {
        return { kind: 'retry_later', code, message, response, retryAfterSeconds: answer.TiempoEsperaEnvio || undefined };
      }
      return { kind: 'rejected', code, message, response };
    }
  }
}
