/**
 * SII's consultation of the issued-invoice book (operation `ConsultaLRFacturasEmitidas` of
 * SuministroFactEmitidas.wsdl, the same port and endpoint as the submissions), used for one
 * thing: the CSV of an invoice AEAT says it already holds when its duplicate answer gives
 * none (3000 on an alta, 3001 on a baja: `RespuestaExpedidaType/CSV` and
 * `RespuestaExpedidaBajaType/CSV` are optional).
 *
 * - Request (ConsultaLR.xsd, `siiLRC:LRConsultaEmitidasType`): `sii:Cabecera`
 *   (sii:CabeceraConsultaSii: IDVersionSii, Titular) + `siiLRC:FiltroConsulta`
 *   (siiLRC:LRFiltroEmitidasType: `sii:PeriodoLiquidacion` Ejercicio/Periodo, required,
 *   then `siiLRC:IDFactura` of type sii:IDFacturaConsulta2Type: NumSerieFacturaEmisor and
 *   FechaExpedicionFacturaEmisor). The filter names no issuer NIF: the book consulted is
 *   the Titular's, and the issuer of an issued invoice is the holder of that book.
 * - Answer (RespuestaConsultaLR.xsd, `siiLRRC:RespuestaConsultaLRFacturasEmitidas`):
 *   `ResultadoConsulta` ConDatos/SinDatos and 0..10000
 *   `RegistroRespuestaConsultaLRFacturasEmitidas`, each with `IDFactura`,
 *   `DatosPresentacion` (sii:DatosPresentacion2Type: NIFPresentador,
 *   TimestampPresentacion, `CSV` "CSV asociado al registro", optional) and
 *   `EstadoFactura` (TimestampUltimaModificacion, EstadoRegistro Correcta /
 *   AceptadaConErrores / Anulada, CodigoErrorRegistro…).
 *
 * What the CSV names: the record holds ONE DatosPresentacion, so for an invoice that was
 * registered and later annulled the schema does not say whether it is the alta's or the
 * baja's presentation. The timestamps tell: a presentation as recent as the record's last
 * modification (TimestampPresentacion ≥ TimestampUltimaModificacion) is the one that made
 * the record what it is now (for an Anulada record, the annulment); an older one is not.
 * `csvFromConsulta` only takes a CSV the timestamps show to be the one asked for, and
 * otherwise says why not (docs: .scratch/decisions-sii-csv.md).
 */
import { XMLValidator } from 'fast-xml-parser';
import { NS, SII_NS_BASE, SII_VERSION, renderXml } from './xml.ts';
import type { SiiTitular } from './soap.ts';
import { SiiResponseError, isObj, readSoapBody, soapParser, text, type Obj, type SoapFault } from './response.ts';

export const NS_CONSULTA = {
  siiLRC: `${SII_NS_BASE}/ConsultaLR.xsd`,
  siiLRRC: `${SII_NS_BASE}/RespuestaConsultaLR.xsd`,
} as const;

/** The invoice a stored record is about, and the period it was reported in. */
export interface SiiRecordInvoice {
  exercise: string;
  period: string;
  issuerNif: string;
  numSerie: string;
  issueDate: string;
}


const parser = soapParser('RegistroRespuestaConsultaLRFacturasEmitidas');

/**
 * The invoice of a stored alta (`RegistroLRFacturasEmitidas`) or baja
 * (`RegistroLRBajaExpedidas`): both carry `sii:PeriodoLiquidacion` and `siiLR:IDFactura`
 * (IDEmisorFactura/NIF, NumSerieFacturaEmisor, FechaExpedicionFacturaEmisor). Undefined
 * when the record does not have them (nothing to ask for).
 */
export function invoiceOfRecord(recordXml: string): SiiRecordInvoice | undefined {
  if (XMLValidator.validate(recordXml) !== true) return undefined;
  const doc = parser.parse(recordXml) as Obj;
  const root = isObj(doc.RegistroLRFacturasEmitidas) ? doc.RegistroLRFacturasEmitidas : isObj(doc.RegistroLRBajaExpedidas) ? doc.RegistroLRBajaExpedidas : undefined;
  if (root === undefined) return undefined;
  const period = isObj(root.PeriodoLiquidacion) ? root.PeriodoLiquidacion : {};
  const id = isObj(root.IDFactura) ? root.IDFactura : {};
  const issuer = isObj(id.IDEmisorFactura) ? id.IDEmisorFactura : {};
  const found = {
    exercise: text(period.Ejercicio), period: text(period.Periodo),
    issuerNif: text(issuer.NIF), numSerie: text(id.NumSerieFacturaEmisor), issueDate: text(id.FechaExpedicionFacturaEmisor),
  };
  const { exercise, period: p, issuerNif, numSerie, issueDate } = found;
  if (exercise === undefined || p === undefined || issuerNif === undefined || numSerie === undefined || issueDate === undefined) return undefined;
  return { exercise, period: p, issuerNif, numSerie, issueDate };
}

/** The SOAP body content of ConsultaLRFacturasEmitidas for one invoice (what ConsultaLR.xsd validates). */
export function consultaBody(titular: SiiTitular, invoice: SiiRecordInvoice): string {
  return renderXml({
    'siiLRC:ConsultaLRFacturasEmitidas': {
      '@_xmlns:siiLRC': NS_CONSULTA.siiLRC,
      '@_xmlns:sii': NS.sii,
      'sii:Cabecera': {
        'sii:IDVersionSii': SII_VERSION,
        'sii:Titular': { 'sii:NombreRazon': titular.name, 'sii:NIF': titular.nif },
      },
      'siiLRC:FiltroConsulta': {
        'sii:PeriodoLiquidacion': { 'sii:Ejercicio': invoice.exercise, 'sii:Periodo': invoice.period },
        'siiLRC:IDFactura': {
          'sii:NumSerieFacturaEmisor': invoice.numSerie,
          'sii:FechaExpedicionFacturaEmisor': invoice.issueDate,
        },
      },
    },
  });
}

/** One invoice of the consultation's answer. */
export interface ConsultaRecord {
  nif: string | undefined;
  numSerie: string | undefined;
  issueDate: string | undefined;
  /** DatosPresentacion. */
  csv: string | undefined;
  presentedAt: string | undefined;
  /** EstadoFactura. */
  state: string | undefined;
  lastModifiedAt: string | undefined;
}

export type ConsultaAnswer =
  | { kind: 'answer'; resultado: string | undefined; records: ConsultaRecord[] }
  | SoapFault;

/** Parses the consultation's SOAP answer; throws SiiResponseError when it is not one. */
export function parseConsultaResponse(body: string | Buffer): ConsultaAnswer {
  const read = readSoapBody(body, parser);
  if (read.kind === 'fault') return read;
  const soapBody = read.body;
  const r = soapBody.RespuestaConsultaLRFacturasEmitidas;
  if (!isObj(r)) throw new SiiResponseError('the SOAP body holds no RespuestaConsultaLRFacturasEmitidas');
  const list = Array.isArray(r.RegistroRespuestaConsultaLRFacturasEmitidas) ? r.RegistroRespuestaConsultaLRFacturasEmitidas : [];
  const records = list.filter(isObj).map((e): ConsultaRecord => {
    const id = isObj(e.IDFactura) ? e.IDFactura : {};
    const issuer = isObj(id.IDEmisorFactura) ? id.IDEmisorFactura : {};
    const pres = isObj(e.DatosPresentacion) ? e.DatosPresentacion : {};
    const estado = isObj(e.EstadoFactura) ? e.EstadoFactura : {};
    return {
      nif: text(issuer.NIF), numSerie: text(id.NumSerieFacturaEmisor), issueDate: text(id.FechaExpedicionFacturaEmisor),
      csv: text(pres.CSV), presentedAt: text(pres.TimestampPresentacion),
      state: text(estado.EstadoRegistro), lastModifiedAt: text(estado.TimestampUltimaModificacion),
    };
  });
  return { kind: 'answer', resultado: text(r.ResultadoConsulta), records };
}

/** `dd-mm-yyyy hh:mm:ss` (sii:Timestamp) as a sortable `yyyy-mm-dd hh:mm:ss`; undefined when it is not one. */
export function sortableTimestamp(ts: string | undefined): string | undefined {
  const m = ts === undefined ? null : /^(\d{2})-(\d{2})-(\d{4}) (\d{2}:\d{2}:\d{2})$/.exec(ts);
  return m ? `${m[3]}-${m[2]}-${m[1]} ${m[4]}` : undefined;
}

/** What the consultation gives for the duplicate: the CSV to keep, or why there is none. */
export type ConsultaResult =
  | { kind: 'csv'; csv: string; record: ConsultaRecord }
  | { kind: 'none'; reason: string; record?: ConsultaRecord | undefined };

/**
 * The CSV the duplicate stands for, read from the consultation's answer:
 * - alta (3000): the CSV of the submission that registered the invoice. A record AEAT holds
 *   as Correcta or AceptadaConErrores: its DatosPresentacion CSV. An Anulada one: its
 *   CSV only when the presentation predates the last modification (then it is not the
 *   annulment's); otherwise it may be the annulment's, so none.
 * - baja (3001): the CSV of the annulment. The record must be Anulada, and its presentation
 *   as recent as its last modification (the annulment); an older presentation is the
 *   alta's, which is not this baja's CSV.
 */
export function csvFromConsulta(operation: 'alta' | 'baja', answer: Extract<ConsultaAnswer, { kind: 'answer' }>, invoice: SiiRecordInvoice): ConsultaResult {
  const record = answer.records.find((r) => r.numSerie === invoice.numSerie && r.issueDate === invoice.issueDate && (r.nif === undefined || r.nif === invoice.issuerNif));
  const which = `invoice ${invoice.numSerie} of ${invoice.issueDate} (period ${invoice.exercise}/${invoice.period})`;
  if (record === undefined) return { kind: 'none', reason: `AEAT's consultation found no ${which}` };
  if (record.csv === undefined) return { kind: 'none', reason: `AEAT's consultation gives no CSV for ${which}`, record };
  const presented = sortableTimestamp(record.presentedAt);
  const modified = sortableTimestamp(record.lastModifiedAt);
  const latest = presented !== undefined && modified !== undefined && presented >= modified;
  const older = presented !== undefined && modified !== undefined && presented < modified;
  const stamps = `presented ${record.presentedAt ?? '?'}, last modified ${record.lastModifiedAt ?? '?'}`;
  if (operation === 'alta') {
    if (record.state !== 'Anulada' || older) return { kind: 'csv', csv: record.csv, record };
    return { kind: 'none', reason: `AEAT's consultation shows ${which} annulled and gives the CSV ${record.csv} of its latest submission (${stamps}), which may be the annulment's rather than the one that registered it`, record };
  }
  if (record.state !== 'Anulada') {
    return { kind: 'none', reason: `AEAT answered that ${which} is already annulled, but its consultation shows it ${record.state ?? 'in an unknown state'}`, record };
  }
  if (latest) return { kind: 'csv', csv: record.csv, record };
  return {
    kind: 'none',
    reason: `AEAT's consultation shows ${which} annulled but gives the CSV ${record.csv} of a submission older than the annulment (${stamps}): the annulment's own CSV is not in the answer`,
    record,
  };
}
