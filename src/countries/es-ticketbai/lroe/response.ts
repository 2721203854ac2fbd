/**
 * Reading a Batuz LROE answer (pure). Two layers:
 * - headers (FORMATS.md §1.6, Batuz "Servicio Entradas" v1.0.3):
 *   `eus-bizkaia-n3-tipo-respuesta` Correcto / Parcialmente correcto / Incorrecto,
 *   `-codigo-respuesta` and `-mensaje-respuesta` (when Incorrecto), `-identificativo`,
 *   `-numero-registro` (the submission's registration number);
 * - the gzip body, the `…AltaRespuesta` / `…AnulacionRespuesta` document
 *   (LROE_PJ_240_1_1_FacturasEmitidas_ConSG_AltaRespuesta_V1_0_1.xsd and siblings):
 *   `Registros/Registro` (at most 1000), each with `Identificador` (either
 *   `IDFactura` {SerieFactura, NumFactura, FechaExpedicionFactura} or the file itself,
 *   base64) and `SituacionRegistro` {EstadoRegistro Correcto | AceptadoConErrores |
 *   Anulado | Incorrecto, CodigoErrorRegistro, DescripcionErrorRegistroES/EU}.
 *
 * Each record sent gets an `AuthorityOutcome`, matched by its invoice key (series, number,
 * issue date), not by position.
 */
import zlib from 'node:zlib';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { TransportError, type AuthorityOutcome } from '../../types.ts';
import { invoiceKeyString, ticketBaiIdentity, type InvoiceKey, type LroeKind } from './identity.ts';

export type LroeTipoRespuesta = 'Correcto' | 'Parcialmente correcto' | 'Incorrecto';

export interface LroeAnswerHeaders {
  tipoRespuesta: LroeTipoRespuesta | null;
  codigo: string | null;
  mensaje: string | null;
  identificativo: string | null;
  numeroRegistro: string | null;
}

export interface LroeRegistro {
  /** null when the identifier could not be read. */
  key: InvoiceKey | null;
  estado: string;
  codigo: string | null;
  descripcionEs: string | null;
  descripcionEu: string | null;
}

export interface LroeAnswerBody {
  fechaPresentacion: string | null;
  nifPresentador: string | null;
  registros: LroeRegistro[];
}

/** What the batch processor knows of each record it sent. */
export interface LroeSentRecord {
  key: InvoiceKey;
  /** The record's TBAI identifier (altas), reported back as the outcome's `fiscalId`. */
  fiscalId: string | null;
}

export interface LroeAnswer extends LroeAnswerHeaders {
  httpStatus: number;
  body: LroeAnswerBody | null;
  /** One per sent record, same order. */
  outcomes: AuthorityOutcome[];
}

/**
 * Record-level codes meaning Batuz already holds the record (OCA l10n-spain
 * l10n_es_ticketbai_api_batuz `LROEOperationResponseLineCode`, PR #1924): B4_2000003
 * "registro duplicado" for an alta, B4_2000006 "el registro ya está anulado" for an
 * anulación. They are `duplicate` outcomes, not failures.
 */
export const LROE_DUPLICATE_CODES: Readonly<Record<LroeKind, readonly string[]>> = {
  alta: ['B4_2000003'],
  anulacion: ['B4_2000006'],
};

/**
 * Server-side answer codes: the request was fine, Batuz could not process it now
 * (gobl.ticketbai `internal/gateways/ebizkaia.go` treats them as connection errors):
 * B4_1000004 "Error técnico" and N3_0000011 "Otros, consulte el mensaje recibido".
 */
export const LROE_RETRIABLE_CODES: readonly string[] = ['B4_1000004', 'N3_0000011'];

/**
 * Request-level codes that only summarise the records' own results (Batuz "Validaciones y
 * errores" v1.0.13: B4_1000002 "todos los registros incluidos en la petición son
 * incorrectos"): the verdict of each record is in the body, never in this code.
 */
export const LROE_PER_RECORD_CODES: readonly string[] = ['B4_1000002'];

const header = (headers: Record<string, string>, name: string): string | null => {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return v === undefined || v.trim() === '' ? null : fixLatin1(v.trim());
};

/**
 * HTTP header bytes reach us as Latin-1 characters. Batuz's messages carry Spanish text
 * (gobl.ticketbai converts them, as "certain strings returned by eBizkaia aren't in
 * UTF-8"): when the bytes form valid UTF-8, read them as UTF-8; otherwise they already are
 * Latin-1 text.
 */
function fixLatin1(v: string): string {
  if (!/[\u0080-\u00ff]/.test(v) || /[^\u0000-\u00ff]/.test(v)) return v;
  const utf8 = Buffer.from(v, 'latin1').toString('utf8');
  return utf8.includes('\ufffd') ? v : utf8;
}

function tipoRespuesta(v: string | null): LroeTipoRespuesta | null {
  // OCA writes "ParcialmenteCorrecto"; FORMATS.md §1.6 "Parcialmente correcto": compare loosely.
  switch (v?.replace(/\s+/g, '').toLowerCase()) {
    case 'correcto':
      return 'Correcto';
    case 'parcialmentecorrecto':
      return 'Parcialmente correcto';
    case 'incorrecto':
      return 'Incorrecto';
    default:
      return null;
  }
}

export function readLroeHeaders(headers: Record<string, string>): LroeAnswerHeaders {
  const lower: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) lower[k.toLowerCase()] = v;
  return {
    tipoRespuesta: tipoRespuesta(header(lower, 'eus-bizkaia-n3-tipo-respuesta')),
    codigo: header(lower, 'eus-bizkaia-n3-codigo-respuesta'),
    mensaje: header(lower, 'eus-bizkaia-n3-mensaje-respuesta'),
    identificativo: header(lower, 'eus-bizkaia-n3-identificativo'),
    numeroRegistro: header(lower, 'eus-bizkaia-n3-numero-registro'),
  };
}

/** The answer body as text: gunzipped when it is gzip (by header or by its magic bytes). */
export function decodeLroeBody(body: Buffer, headers: Record<string, string>): string | null {
  if (body.length === 0) return null;
  const encoding = Object.entries(headers).find(([k]) => k.toLowerCase() === 'content-encoding')?.[1] ?? '';
  const gzip = /gzip/i.test(encoding) || (body[0] === 0x1f && body[1] === 0x8b);
  try {
    return (gzip ? zlib.gunzipSync(body) : body).toString('utf8');
  } catch {
    return null;
  }
}

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name === 'Registro',
});

type Node = Record<string, unknown>;
const node = (v: unknown): Node | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : undefined);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);

function keyOf(identificador: Node | undefined): InvoiceKey | null {
  if (!identificador) return null;
  const id = node(identificador.IDFactura);
  if (id) {
    const number = str(id.NumFactura);
    const date = str(id.FechaExpedicionFactura);
    return number && date ? { series: str(id.SerieFactura) ?? '', number, date } : null;
  }
  // The other choice: the file itself, base64 (IdentificadorFacturaConSGType,
  // AnulacionIdentificadorFacturaConSGType).
  const b64 = str(identificador.TicketBai) ?? str(identificador.AnulacionTicketBai);
  if (!b64) return null;
  const identity = ticketBaiIdentity(Buffer.from(b64.replace(/\s+/g, ''), 'base64'));
  return identity ? { series: identity.series, number: identity.number, date: identity.date } : null;
}

/** Reads an AltaRespuesta / AnulacionRespuesta document; null when the text is not one. */
export function parseLroeAnswerBody(xml: string): LroeAnswerBody | null {
  const text = xml.trim();
  if (!text.startsWith('<') || XMLValidator.validate(text) !== true) return null;
  let doc: Node;
  try {
    doc = parser.parse(text) as Node;
  } catch {
    return null;
  }
  const rootName = Object.keys(doc).find((k) => /Respuesta$/.test(k));
  const root = rootName ? node(doc[rootName]) : undefined;
  if (!root) return null;
  const datos = node(root.DatosPresentacion);
  const registros = ((node(root.Registros)?.Registro as unknown[] | undefined) ?? []).map((r) => {
    const reg = node(r) ?? {};
    const situacion = node(reg.SituacionRegistro) ?? {};
    return {
      key: keyOf(node(reg.Identificador)),
      estado: str(situacion.EstadoRegistro) ?? '',
      codigo: str(situacion.CodigoErrorRegistro),
      descripcionEs: str(situacion.DescripcionErrorRegistroES),
      descripcionEu: str(situacion.DescripcionErrorRegistroEU),
    };
  });
  return { fechaPresentacion: str(datos?.FechaPresentacion), nifPresentador: str(datos?.NIFPresentador), registros };
}

/**
 * Pairs answer records with sent records: by invoice key first (in order, should a key
 * repeat); when the leftovers on both sides are equally many, by position among them.
 */
function match(sent: readonly LroeSentRecord[], registros: readonly LroeRegistro[]): (LroeRegistro | undefined)[] {
  const byKey = new Map<string, LroeRegistro[]>();
  const unkeyed: LroeRegistro[] = [];
  for (const r of registros) {
    if (!r.key) {
      unkeyed.push(r);
      continue;
    }
    const k = invoiceKeyString(r.key);
    byKey.set(k, [...(byKey.get(k) ?? []), r]);
  }
  const result = sent.map((s) => byKey.get(invoiceKeyString(s.key))?.shift());
  const leftovers = [...[...byKey.values()].flat(), ...unkeyed];
  const missing = result.flatMap((r, i) => (r ? [] : [i]));
  if (leftovers.length > 0 && leftovers.length === missing.length) {
    // Registros keep the request's order; leftovers are taken in answer order.
    const ordered = registros.filter((r) => leftovers.includes(r));
    missing.forEach((i, n) => (result[i] = ordered[n]));
  }
  return result;
}

const describe = (r: LroeRegistro): string => r.descripcionEs ?? r.descripcionEu ?? `Batuz answered ${r.estado}${r.codigo ? ` ${r.codigo}` : ''}`;

function recordOutcome(
  registro: LroeRegistro | undefined,
  sent: LroeSentRecord,
  kind: LroeKind,
  h: LroeAnswerHeaders,
  base: Record<string, unknown>,
): AuthorityOutcome {
  const fiscalId = sent.fiscalId ?? undefined;
  if (!registro) {
    // The request as a whole was Correcto: every record is in, whether listed or not.
    if (h.tipoRespuesta === 'Correcto') return { kind: 'accepted', fiscalId, response: { ...base, estado_registro: null } };
    // Otherwise we cannot tell; resending is safe (a record already in comes back B4_2000003).
    return { kind: 'retry_later', code: 'lroe_record_missing', message: 'the LROE answer has no result for this record', response: base };
  }
  const response = {
    ...base,
    estado_registro: registro.estado,
    codigo_error: registro.codigo,
    descripcion_es: registro.descripcionEs,
    descripcion_eu: registro.descripcionEu,
  };
  switch (registro.estado) {
    case 'Correcto':
      return { kind: 'accepted', fiscalId, response };
    case 'AceptadoConErrores':
      // Registered, with remarks to fix later: the record is in the LROE.
      return { kind: 'accepted', fiscalId, response, warnings: [`${registro.codigo ?? 'AceptadoConErrores'}: ${describe(registro)}`] };
    case 'Anulado':
      // An anulación asked for exactly this; an alta reported as annulled is in the books, cancelled.
      return kind === 'anulacion'
        ? { kind: 'accepted', fiscalId, response }
        : { kind: 'accepted', fiscalId, response, warnings: ['Batuz reports this record as annulled'] };
    default: {
      const code = registro.codigo ?? 'lroe_incorrecto';
      if (LROE_DUPLICATE_CODES[kind].includes(code)) return { kind: 'duplicate', fiscalId, response };
      if (LROE_RETRIABLE_CODES.includes(code)) return { kind: 'retry_later', code, message: describe(registro), response };
      return { kind: 'rejected', code, message: describe(registro), response };
    }
  }
}

/**
 * The outcome of one LROE HTTP exchange for the records it carried.
 * - An answer with the n3 headers (any status) is Batuz's answer: per-record results from
 *   the body; an Incorrecto without records applies its code to every record (retry later
 *   when the code is server-side, rejected otherwise).
 * - 5xx / 408 / an unreadable 2xx without them is a transport fault: `TransportError`.
 * - 429: every record retries later; other statuses (403 for a missing or refused client
 *   certificate, 404…) reject every record with `http_<status>`.
 */
export function interpretLroeAnswer(
  res: { status: number; headers: Record<string, string>; body: Buffer },
  sent: readonly LroeSentRecord[],
  kind: LroeKind,
  host = 'Batuz',
): LroeAnswer {
  const h = readLroeHeaders(res.headers);
  const text = decodeLroeBody(res.body, res.headers);
  const body = text === null ? null : parseLroeAnswerBody(text);
  const base = {
    http_status: res.status,
    lroe_tipo_respuesta: h.tipoRespuesta,
    lroe_codigo_respuesta: h.codigo,
    lroe_mensaje_respuesta: h.mensaje,
    lroe_identificativo: h.identificativo,
    lroe_numero_registro: h.numeroRegistro,
  };
  const answer = (outcomes: AuthorityOutcome[]): LroeAnswer => ({ ...h, httpStatus: res.status, body, outcomes });

  if (h.tipoRespuesta === null) {
    if (res.status >= 500 || res.status === 408 || (res.status >= 200 && res.status < 300)) {
      const code = res.status === 408 ? 'timeout' : res.status < 300 ? 'unreadable_answer' : 'server_error';
      throw new TransportError(code, `${host} answered HTTP ${res.status} without an LROE answer`);
    }
    const response = { ...base, body: (text ?? '').slice(0, 500) };
    if (res.status === 429) {
      const ra = res.headers['retry-after'];
      const retryAfterSeconds = ra && /^\d+$/.test(ra.trim()) ? Number(ra.trim()) : undefined;
      return answer(sent.map(() => ({ kind: 'retry_later', code: 'http_429', message: `${host} is rate limiting (HTTP 429)`, response, retryAfterSeconds })));
    }
    const message =
      res.status === 401 || res.status === 403
        ? `${host} refused the request (HTTP ${res.status}): the TLS client certificate is missing or not accepted`
        : `${host} answered HTTP ${res.status} without an LROE answer`;
    return answer(sent.map(() => ({ kind: 'rejected', code: `http_${res.status}`, message, response })));
  }

  const registros = body?.registros ?? [];
  if (h.tipoRespuesta === 'Incorrecto' && registros.length === 0) {
    const code = h.codigo ?? 'lroe_incorrecto';
    // "Every record is incorrect: see each record's error", and the records' errors could
    // not be read (a body missing or unreadable): each may be a duplicate (B4_2000003, a
    // resend after a lost answer) as well as a refusal. Nothing says which, so each record
    // is sent again, as when a record is missing from a partial answer.
    if (LROE_PER_RECORD_CODES.includes(code)) {
      return answer(sent.map(() => ({ kind: 'retry_later', code: 'lroe_record_missing', message: `the LROE answer (${code}) has no readable result for this record`, response: base })));
    }
    const message = h.mensaje ?? 'Batuz refused the LROE request';
    const outcome: AuthorityOutcome = LROE_RETRIABLE_CODES.includes(code)
      ? { kind: 'retry_later', code, message, response: base }
      : { kind: 'rejected', code, message, response: base };
    return answer(sent.map(() => ({ ...outcome })));
  }
  const matched = match(sent, registros);
  return answer(sent.map((s, i) => recordOutcome(matched[i], s, kind, h, base)));
}
