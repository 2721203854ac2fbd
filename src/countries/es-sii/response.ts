/**
 * AEAT's answers to the issued-invoice service, per RespuestaSuministro.xsd (SII 1.1),
 * parsed with fast-xml-parser, and their mapping to an AuthorityOutcome.
 *
 * - `RespuestaLRFacturasEmitidas` / `RespuestaLRBajaFacturasEmitidas`: `CSV` of the
 *   submission (only when it was not refused as a whole), `EstadoEnvio` (Correcto,
 *   ParcialmenteCorrecto, Incorrecto), and per record a `RespuestaLinea` with
 *   `EstadoRegistro` (Correcto, AceptadoConErrores, Incorrecto), `CodigoErrorRegistro`,
 *   `DescripcionErrorRegistro`, and, when the record is refused as a duplicate (alta) or
 *   as already cancelled (baja), the `CSV` of what AEAT already holds.
 * - A SOAP 1.1 `Fault` for errors of the message or its header: AEAT writes the code
 *   into the faultstring, "Codigo[4102].El XML no cumple el esquema…".
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { AuthorityCode, AuthorityOutcome } from '../types.ts';

export type EstadoEnvio = 'Correcto' | 'ParcialmenteCorrecto' | 'Incorrecto';
export type EstadoRegistro = 'Correcto' | 'AceptadoConErrores' | 'Incorrecto';

export interface SiiLine {
  numSerie: string | undefined;
  issueDate: string | undefined;
  estado: EstadoRegistro;
  code: string | undefined;
  description: string | undefined;
  /** The CSV of the record AEAT already holds (duplicate alta, baja of a cancelled one). */
  previousCsv: string | undefined;
  /** `RegistroDuplicado/EstadoRegistro` (Correcta, AceptadaConErrores, Anulada). */
  duplicateState: string | undefined;
}

export type SiiAnswer =
  | {
      kind: 'answer';
      operation: 'alta' | 'baja';
      estadoEnvio: EstadoEnvio;
      csv: string | undefined;
      timestamp: string | undefined;
      lines: SiiLine[];
    }
  | { kind: 'fault'; faultcode: string; faultstring: string; code: string | undefined };

/** The body is not a SOAP answer of this service. */
export class SiiResponseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SiiResponseError';
  }
}

/** A reader of AEAT SOAP answers; `list`: the element that repeats (always read as an array). */
export const soapParser = (list: string): XMLParser => new XMLParser({
  removeNSPrefix: true,
  ignoreAttributes: true,
  // Codes and amounts stay text: "0012" must not become 12.
  parseTagValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false,
  isArray: (name) => name === list,
});

const parser = soapParser('RespuestaLinea');

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

const ESTADOS_ENVIO: readonly EstadoEnvio[] = ['Correcto', 'ParcialmenteCorrecto', 'Incorrecto'];
const ESTADOS_REGISTRO: readonly EstadoRegistro[] = ['Correcto', 'AceptadoConErrores', 'Incorrecto'];

/** A SOAP fault of an AEAT service: AEAT puts its code in the faultstring as `Codigo[…]`. */
export interface SoapFault { kind: 'fault'; faultcode: string; faultstring: string; code: string | undefined }

/**
 * The SOAP Body of an AEAT answer (submission or consultation), or its fault; throws
 * SiiResponseError when the text is not a well-formed SOAP envelope. `reader`: the
 * service's parser (which elements are lists differs by service).
 */
export function readSoapBody(body: string | Buffer, reader: XMLParser): { kind: 'body'; body: Obj } | SoapFault {
  const xml = typeof body === 'string' ? body : body.toString('utf8');
  if (xml.trim() === '' || XMLValidator.validate(xml) !== true) throw new SiiResponseError('the answer is not well-formed XML');
  const doc = reader.parse(xml) as Obj;
  const soapBody = isObj(doc.Envelope) && isObj(doc.Envelope.Body) ? doc.Envelope.Body : undefined;
  if (soapBody === undefined) throw new SiiResponseError('the answer is not a SOAP envelope');
  if (isObj(soapBody.Fault)) {
    const faultcode = text(soapBody.Fault.faultcode) ?? '';
    const faultstring = text(soapBody.Fault.faultstring) ?? '';
    return { kind: 'fault', faultcode, faultstring, code: /Codigo\[(\w+)\]/.exec(faultstring)?.[1] };
  }
  return { kind: 'body', body: soapBody };
}

/** Parses a SOAP answer; throws SiiResponseError when it is not one. */
export function parseSiiResponse(body: string | Buffer): SiiAnswer {
  const read = readSoapBody(body, parser);
  if (read.kind === 'fault') return read;
  const soapBody = read.body;
  const alta = soapBody.RespuestaLRFacturasEmitidas;
  const baja = soapBody.RespuestaLRBajaFacturasEmitidas;
  const r = isObj(alta) ? alta : isObj(baja) ? baja : undefined;
  if (r === undefined) throw new SiiResponseError('the SOAP body holds no SII answer');
  const estadoEnvio = ESTADOS_ENVIO.find((e) => e === text(r.EstadoEnvio));
  if (estadoEnvio === undefined) throw new SiiResponseError(`unknown EstadoEnvio ${String(text(r.EstadoEnvio))}`);
  const lines = (Array.isArray(r.RespuestaLinea) ? r.RespuestaLinea : []).filter(isObj).map(lineOf);
  return {
    kind: 'answer',
    operation: isObj(alta) ? 'alta' : 'baja',
    estadoEnvio,
    csv: text(r.CSV),
    timestamp: isObj(r.DatosPresentacion) ? text(r.DatosPresentacion.TimestampPresentacion) : undefined,
    lines,
  };
}

function lineOf(l: Obj): SiiLine {
  const estado = ESTADOS_REGISTRO.find((e) => e === text(l.EstadoRegistro));
  if (estado === undefined) throw new SiiResponseError(`unknown EstadoRegistro ${String(text(l.EstadoRegistro))}`);
  const id = isObj(l.IDFactura) ? l.IDFactura : {};
  const dup = isObj(l.RegistroDuplicado) ? l.RegistroDuplicado : undefined;
  return {
    numSerie: text(id.NumSerieFacturaEmisor),
    issueDate: text(id.FechaExpedicionFacturaEmisor),
    estado,
    code: text(l.CodigoErrorRegistro) ?? (dup ? text(dup.CodigoErrorRegistro) : undefined),
    description: text(l.DescripcionErrorRegistro),
    previousCsv: text(l.CSV),
    duplicateState: dup ? text(dup.EstadoRegistro) : undefined,
  };
}

/**
 * The outcome of one submitted record (the first answer line, or the line naming
 * `numSerie` when the submission held several).
 */
export function outcomeOf(answer: SiiAnswer, codes: Readonly<Record<string, AuthorityCode>>, numSerie?: string): AuthorityOutcome {
  if (answer.kind === 'fault') return faultOutcome(answer, codes);
  const line = answer.lines.find((l) => numSerie !== undefined && l.numSerie === numSerie) ?? answer.lines[0];
  const response: Record<string, unknown> = {
    operation: answer.operation,
    EstadoEnvio: answer.estadoEnvio,
    CSV: answer.csv ?? null,
    TimestampPresentacion: answer.timestamp ?? null,
    EstadoRegistro: line?.estado ?? null,
    CodigoErrorRegistro: line?.code ?? null,
    DescripcionErrorRegistro: line?.description ?? null,
  };
  if (line === undefined) {
    // Refused as a whole without per-record detail: nothing was registered.
    if (answer.estadoEnvio === 'Incorrecto') return rejected('INCORRECTO', undefined, codes, response);
    return { kind: 'accepted', fiscalId: answer.csv, response };
  }
  switch (line.estado) {
    case 'Correcto':
      return { kind: 'accepted', fiscalId: answer.csv, response };
    case 'AceptadoConErrores': {
      // Registered (the CSV is the proof), but AEAT asks for a correction.
      const warning = line.code ? `${line.code}: ${codes[line.code]?.message ?? line.description ?? 'accepted with errors'}` : (line.description ?? 'accepted with errors');
      return { kind: 'accepted', fiscalId: answer.csv, response, warnings: [warning] };
    }
    case 'Incorrecto': {
      const known = line.code ? codes[line.code] : undefined;
      // A duplicate alta (3000) comes with the CSV of the invoice AEAT already holds; a
      // baja refused because the invoice is already off the book also carries one
      // (RespuestaSuministro.xsd, RespuestaExpedidaBajaType/CSV). Either way AEAT holds
      // what this record asks for.
      // 3001 "ya ha sido dado de baja" on a baja says the same, CSV or not (the CSV is
      // optional there): a baja sent again after its answer was lost meets it.
      if (known?.duplicate === true || line.duplicateState !== undefined
        || (answer.operation === 'baja' && (line.previousCsv !== undefined || line.code === BAJA_HELD_CODE))) {
        return { kind: 'duplicate', fiscalId: line.previousCsv, response: { ...response, CSVRegistrado: line.previousCsv ?? null, EstadoRegistroDuplicado: line.duplicateState ?? null } };
      }
      return rejected(line.code ?? 'INCORRECTO', line.description, codes, response);
    }
  }
}

/** A baja refused because the invoice is already off the book (AEAT errores: 3001). */
export const BAJA_HELD_CODE = '3001';

function rejected(code: string, description: string | undefined, codes: Readonly<Record<string, AuthorityCode>>, response: Record<string, unknown>): AuthorityOutcome {
  const known = codes[code];
  const message = messageOf(code, description, known);
  if (known?.retriable === true) return { kind: 'retry_later', code, message, response };
  return { kind: 'rejected', code, message, response };
}

/** Our English text, with AEAT's own wording after it (it names the field or NIF at fault). */
function messageOf(code: string, description: string | undefined, known: AuthorityCode | undefined): string {
  if (known && description) return `${known.message} (AEAT: ${description})`;
  return known?.message ?? description ?? `AEAT rejected the record with code ${code} (no description is known for this code)`;
}

function faultOutcome(fault: Extract<SiiAnswer, { kind: 'fault' }>, codes: Readonly<Record<string, AuthorityCode>>): AuthorityOutcome {
  const response = { operation: 'fault', faultcode: fault.faultcode, faultstring: fault.faultstring };
  // SOAP 1.1 §4.4.1: Server faults are the receiver's problem (retry), Client faults the message's.
  const server = /(^|:)Server\b/.test(fault.faultcode);
  const code = fault.code ?? (server ? 'SOAP_SERVER_FAULT' : 'SOAP_CLIENT_FAULT');
  const known = codes[code];
  const message = messageOf(code, fault.faultstring || undefined, known);
  if (known?.retriable === true || (fault.code !== undefined && known === undefined && server)) {
    return { kind: 'retry_later', code, message, response };
  }
  return { kind: 'rejected', code, message, response };
}
