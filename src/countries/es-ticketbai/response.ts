/**
 * The answer of the Gipuzkoa and Araba TicketBAI reception services (FORMATS.md §1.6):
 *
 *   <TicketBaiResponse>
 *     <Salida>
 *       <IdentificadorTBAI>…</IdentificadorTBAI> <FechaRecepcion>DD-MM-YYYY HH:MM:SS</FechaRecepcion>
 *       <Estado>00 | 01</Estado> <Descripcion>…</Descripcion> <Azalpena>… (Basque)</Azalpena>
 *       <ResultadosValidacion><Codigo/><Descripcion/><Azalpena/></ResultadosValidacion>*
 *       <CSV>…</CSV>
 *     </Salida>
 *   </TicketBaiResponse>
 *
 * Shape: FORMATS.md §1.6 [secondary], as read by gobl.ticketbai `internal/gateways/gipuzkoa.go`
 * and `araba.go`, Barnetik `Api/{Gipuzkoa,Araba}/Response.php` and the Odoo l10n_es_edi_tbai
 * test answer. Araba answers in the same shape. The parser ignores namespace prefixes, so a
 * namespaced answer reads the same.
 *
 * Everything here is pure: an HTTP status and body in, an `AuthorityOutcome` out (or a
 * `TransportError` thrown when there is no authority answer to read).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { TransportError, type AuthorityOutcome } from '../types.ts';

export type TicketBaiKind = 'alta' | 'anulacion';

export interface TicketBaiValidationResult {
  codigo: string;
  descripcion: string;
  /** The same message in Basque. */
  azalpena: string;
}

export interface TicketBaiAnswer {
  identificadorTbai: string | null;
  fechaRecepcion: string | null;
  /** `00` received, `01` rejected. */
  estado: string;
  descripcion: string | null;
  azalpena: string | null;
  resultados: TicketBaiValidationResult[];
  csv: string | null;
}

/**
 * Codes meaning "the Hacienda already holds this", answered as `duplicate` (the record is
 * there; resending must not fail the transaction). Per operation, because the alta and
 * the cancellation services number their codes differently:
 * - alta 005 "factura ya registrada" (OCA l10n_es_ticketbai_api `TicketBaiInvoiceResponseCode`
 *   INVOICE_ALREADY_REGISTERED); 019 is also read as "already received" by Odoo
 *   l10n_es_edi_tbai (`_process_post_response_xml_ar_gi`), as codes.ts notes;
 * - anulación 019 "factura ya anulada" (OCA `TicketBaiCancellationResponseCode`
 *   INVOICE_ALREADY_CANCELLED). 005 is NOT a duplicate there: an older numbering of the
 *   cancellation codes used 005 for an invalid signer certificate.
 */
export const DUPLICATE_CODES: Readonly<Record<TicketBaiKind, readonly string[]>> = {
  alta: ['005', '019'],
  anulacion: ['019'],
};

/**
 * Server-side codes worth retrying unchanged: 006 "servicio no disponible" in both lists
 * (OCA `TicketBaiInvoiceResponseCode` / `TicketBaiCancellationResponseCode`
 * SERVICE_NOT_AVAILABLE).
 */
export const RETRIABLE_CODES: readonly string[] = ['006'];

const ESTADO_RECEIVED = '00';

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  // Codes are strings with leading zeros (`005`, `00`): never turn them into numbers.
  parseTagValue: false,
  trimValues: true,
  isArray: (name) => name === 'ResultadosValidacion',
});

type Node = Record<string, unknown>;

const text = (v: unknown): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return v === '' ? null : v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
};

const asNode = (v: unknown): Node | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : null);

/**
 * Reads a TicketBaiResponse. Returns null when the body is not one (an HTML error page,
 * an empty body, another XML document): the caller then has no authority answer.
 */
export function parseTicketBaiResponse(body: string | Buffer): TicketBaiAnswer | null {
  const xml = (typeof body === 'string' ? body : body.toString('utf8')).trim();
  if (!xml.startsWith('<') || XMLValidator.validate(xml) !== true) return null;
  let doc: Node;
  try {
    doc = parser.parse(xml) as Node;
  } catch {
    return null;
  }
  const root = asNode(doc.TicketBaiResponse);
  const salida = asNode(root?.Salida);
  if (!salida) return null;
  const estado = text(salida.Estado);
  if (estado === null) return null;
  const resultados = ((salida.ResultadosValidacion as unknown[] | undefined) ?? [])
    .map(asNode)
    .filter((n): n is Node => n !== null)
    .map((n) => ({
      codigo: text(n.Codigo) ?? '',
      descripcion: text(n.Descripcion) ?? '',
      azalpena: text(n.Azalpena) ?? '',
    }));
  return {
    identificadorTbai: text(salida.IdentificadorTBAI),
    fechaRecepcion: text(salida.FechaRecepcion),
    estado,
    descripcion: text(salida.Descripcion),
    azalpena: text(salida.Azalpena),
    resultados,
    csv: text(salida.CSV),
  };
}

/** What we keep of the answer in the record (snake_case like the other systems' responses). */
function responseOf(a: TicketBaiAnswer, httpStatus: number): Record<string, unknown> {
  return {
    http_status: httpStatus,
    estado: a.estado,
    identificador_tbai: a.identificadorTbai,
    fecha_recepcion: a.fechaRecepcion,
    csv: a.csv,
    descripcion: a.descripcion,
    azalpena: a.azalpena,
    resultados_validacion: a.resultados.map((r) => ({ codigo: r.codigo, descripcion: r.descripcion, azalpena: r.azalpena })),
  };
}

const messageOf = (r: TicketBaiValidationResult | undefined, a: TicketBaiAnswer): string =>
  r?.descripcion || r?.azalpena || a.descripcion || a.azalpena || `the Hacienda Foral answered Estado ${a.estado}`;

/**
 * The outcome of a parsed answer. `Estado` 00 is accepted (validation results that come
 * with it are warnings); otherwise a duplicate code anywhere in the list wins (the
 * invoice is already there), then a retriable first code, then a rejection with the
 * first code.
 */
export function ticketBaiOutcome(
  answer: TicketBaiAnswer,
  kind: TicketBaiKind,
  opts: { fiscalId: string | null; httpStatus?: number },
): AuthorityOutcome {
  const response = responseOf(answer, opts.httpStatus ?? 200);
  const fiscalId = answer.identificadorTbai ?? opts.fiscalId ?? undefined;
  if (answer.estado === ESTADO_RECEIVED) {
    const warnings = answer.resultados.map((r) => `${r.codigo}: ${messageOf(r, answer)}`);
    return { kind: 'accepted', fiscalId, response, ...(warnings.length > 0 ? { warnings } : {}) };
  }
  if (answer.resultados.some((r) => DUPLICATE_CODES[kind].includes(r.codigo))) {
    return { kind: 'duplicate', fiscalId, response };
  }
  const first = answer.resultados[0];
  if (first && RETRIABLE_CODES.includes(first.codigo)) {
    return { kind: 'retry_later', code: first.codigo, message: messageOf(first, answer), response };
  }
  // Estado 01 without any ResultadosValidacion: nothing more specific to report.
  const code = first?.codigo || `estado_${answer.estado}`;
  return { kind: 'rejected', code, message: messageOf(first, answer), response };
}

/** Seconds from a `Retry-After` header (delta-seconds form only). */
function retryAfterSeconds(value: string | undefined): number | undefined {
  if (!value || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

/**
 * The outcome of one HTTP exchange with a Gipuzkoa/Araba reception service.
 * - A parsable TicketBaiResponse, whatever the status, is the authority's answer.
 * - 5xx (and 408, and a 2xx we cannot read) without one is a transport fault:
 *   `TransportError` (retried by the queue).
 * - 429 without one: retry later, honouring `Retry-After`.
 * - Other statuses without one (403 without or with a refused client certificate, 404…)
 *   are refusals: rejected with `http_<status>`, since resending unchanged cannot help.
 */
export function interpretTicketBaiHttp(
  res: { status: number; headers: Record<string, string>; body: Buffer },
  kind: TicketBaiKind,
  opts: { fiscalId: string | null; host: string },
): AuthorityOutcome {
  const answer = parseTicketBaiResponse(res.body);
  if (answer) return ticketBaiOutcome(answer, kind, { fiscalId: opts.fiscalId, httpStatus: res.status });

  const snippet = res.body.toString('utf8').slice(0, 500);
  const response = { http_status: res.status, body: snippet };
  // A 2xx we cannot read leaves us not knowing whether the invoice arrived: retrying is
  // safe (a second arrival is answered as a duplicate), so it is a transport fault too.
  if (res.status >= 500 || res.status === 408 || (res.status >= 200 && res.status < 300)) {
    throw new TransportError(
      res.status === 408 ? 'timeout' : res.status < 300 ? 'unreadable_answer' : 'server_error',
      `${opts.host} answered HTTP ${res.status} without a TicketBAI answer`,
    );
  }
  if (res.status === 429) {
    return {
      kind: 'retry_later',
      code: 'http_429',
      message: `${opts.host} is rate limiting (HTTP 429)`,
      response,
      retryAfterSeconds: retryAfterSeconds(res.headers['retry-after']),
    };
  }
  const message =
    res.status === 401 || res.status === 403
      ? `${opts.host} refused the request (HTTP ${res.status}): the TLS client certificate is missing or not accepted`
      : `${opts.host} answered HTTP ${res.status} without a TicketBAI answer`;
  return { kind: 'rejected', code: `http_${res.status}`, message, response };
}
