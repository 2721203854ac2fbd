/**
 * Sends a batch of signed TicketBAI files of one Bizkaia issuer to Batuz (LROE chapter
 * 1.1) and returns one outcome per record. The batch processor decides what to send
 * (records in `pending_batch` of one issuer and kind); this module only talks to Batuz.
 *
 * - Requests hold at most `LROE_MAX_RECORDS` (1000, the schemas' maxOccurs) files; a larger
 *   batch is split and the parts sent one after the other.
 * - A request's `Ejercicio` must equal the issue year of every file in it (Batuz checks
 *   it, validation 1000021), so records are grouped by their own issue year.
 * - Records that cannot go (not a TicketBAI file of the batch's kind, another issuer, another
 *   year than the one asked for) are rejected here, without sending.
 * - A transport fault before any part was answered throws `TransportError` (the whole batch
 *   is retried). Once a part has been answered, a later fault turns the unsent records into
 *   `retry_later` instead, so the answered outcomes are not lost; resending a record Batuz
 *   already holds is answered as a duplicate (B4_2000003).
 */
import { authorityPost } from '../../shared/authority-http.ts';
import { TransportError, type AuthorityOutcome, type SubmitContext } from '../../types.ts';
import { ticketBaiIdentity, type LroeKind, type TicketBaiIdentity } from './identity.ts';
import {
  LROE_MAX_RECORDS,
  buildLroeHttpRequest,
  lroeModelFor,
  lroeSubmissionUrl,
  type LroeModel,
  type LroeRenta,
} from './request.ts';
import { interpretLroeAnswer, type LroeTipoRespuesta } from './response.ts';

export interface LroeBatchRecord {
  transactionId: string;
  /** The stored signed TicketBAI (alta) or AnulaTicketBai (anulación) XML. */
  xml: string;
}

export interface LroeBatchInput {
  issuerNif: string;
  issuerName: string;
  /**
   * Optional: the fiscal year the caller means to send. Records issued in another year are
   * then rejected (`lroe_year_mismatch`). Without it, records are grouped by their issue year.
   */
  year?: number | undefined;
  kind: LroeKind;
  records: readonly LroeBatchRecord[];
  /** Defaults from the issuer NIF (`lroeModelFor`). */
  model?: LroeModel | undefined;
  /** Required for a Modelo 140 (individual) alta. */
  renta?: LroeRenta | undefined;
  /** Files per request, at most (and by default) `LROE_MAX_RECORDS`. */
  maxPerRequest?: number | undefined;
}

export type LroeClientContext = Pick<SubmitContext, 'environment' | 'clientKey' | 'authorityCa' | 'authorityBaseUrl' | 'timeoutMs'>;

export interface LroeRecordResult {
  transactionId: string;
  outcome: AuthorityOutcome;
  /** `eus-bizkaia-n3-numero-registro` of the request that carried the record, if answered. */
  registrationNumber: string | null;
  /** What the file says about itself (null when it could not be read). */
  identity: TicketBaiIdentity | null;
}

export interface LroeRequestSummary {
  year: number;
  records: number;
  /** null when the request met a transport fault. */
  httpStatus: number | null;
  tipoRespuesta: LroeTipoRespuesta | null;
  codigo: string | null;
  mensaje: string | null;
  identificativo: string | null;
  numeroRegistro: string | null;
  /** The request XML before compression (audit). */
  xml: string;
}

export interface LroeBatchResult {
  model: LroeModel;
  /** Same order as the input records. */
  records: LroeRecordResult[];
  requests: LroeRequestSummary[];
  /** The registration number of the first answered request (all of them: `requests`). */
  registrationNumber: string | null;
}

const localReject = (code: string, message: string): AuthorityOutcome => ({ kind: 'rejected', code, message, response: { local: true } });

export async function sendLroeBatch(input: LroeBatchInput, ctx: LroeClientContext): Promise<LroeBatchResult> {
  const model = input.model ?? lroeModelFor(input.issuerNif);
  const results: LroeRecordResult[] = input.records.map((r) => ({
    transactionId: r.transactionId,
    identity: ticketBaiIdentity(r.xml),
    registrationNumber: null,
    // Replaced below for every record; a placeholder keeps the array fully typed.
    outcome: localReject('lroe_not_sent', 'not sent'),
  }));

  // Which records can go, grouped by issue year.
  const byYear = new Map<number, number[]>();
  results.forEach((r, i) => {
    const id = r.identity;
    if (!id) {
      r.outcome = localReject('lroe_unreadable_record', 'the record is not a signed TicketBAI file');
    } else if (id.kind !== input.kind) {
      r.outcome = localReject('lroe_wrong_document', `an ${input.kind} batch cannot carry an ${id.kind === 'alta' ? 'invoice (TicketBai)' : 'AnulaTicketBai'} file`);
    } else if (id.nif.toUpperCase() !== input.issuerNif.toUpperCase()) {
      r.outcome = localReject('lroe_issuer_mismatch', `the file's issuer ${id.nif} is not the batch's issuer ${input.issuerNif}`);
    } else if (input.year !== undefined && id.year !== input.year) {
      r.outcome = localReject('lroe_year_mismatch', `the file was issued in ${id.year}, not ${input.year}`);
    } else {
      byYear.set(id.year, [...(byYear.get(id.year) ?? []), i]);
    }
  });

  const perRequest = Math.max(1, Math.min(input.maxPerRequest ?? LROE_MAX_RECORDS, LROE_MAX_RECORDS));
  const parts: { year: number; indexes: number[] }[] = [];
  for (const year of [...byYear.keys()].sort((a, b) => a - b)) {
    const indexes = byYear.get(year)!;
    for (let i = 0; i < indexes.length; i += perRequest) parts.push({ year, indexes: indexes.slice(i, i + perRequest) });
  }

  const url = lroeSubmissionUrl(ctx.environment, ctx.authorityBaseUrl);
  const host = new URL(url).host;
  const requests: LroeRequestSummary[] = [];
  let answered = false;
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!;
    // Throws LroeInputError (bad NIF, missing epigrafe…) before anything is sent.
    const req = buildLroeHttpRequest({
      model,
      kind: input.kind,
      issuerNif: input.issuerNif,
      issuerName: input.issuerName,
      year: part.year,
      files: part.indexes.map((i) => input.records[i]!.xml),
      renta: input.renta,
    });
    const summary: LroeRequestSummary = {
      year: part.year,
      records: part.indexes.length,
      httpStatus: null,
      tipoRespuesta: null,
      codigo: null,
      mensaje: null,
      identificativo: null,
      numeroRegistro: null,
      xml: req.xml,
    };
    requests.push(summary);
    try {
      const res = await authorityPost({
        url,
        headers: req.headers,
        body: req.body,
        clientKey: ctx.clientKey,
        ca: ctx.authorityCa,
        timeoutMs: ctx.timeoutMs,
      });
      const sent = part.indexes.map((i) => {
        const id = results[i]!.identity!;
        return { key: { series: id.series, number: id.number, date: id.date }, fiscalId: id.tbaiId };
      });
      const answer = interpretLroeAnswer(res, sent, input.kind, host);
      Object.assign(summary, {
        httpStatus: answer.httpStatus,
        tipoRespuesta: answer.tipoRespuesta,
        codigo: answer.codigo,
        mensaje: answer.mensaje,
        identificativo: answer.identificativo,
        numeroRegistro: answer.numeroRegistro,
      });
      part.indexes.forEach((i, n) => {
        results[i]!.outcome = answer.outcomes[n]!;
        results[i]!.registrationNumber = answer.numeroRegistro;
      });
      answered = true;
    } catch (err) {
      if (!(err instanceof TransportError) || !answered) throw err;
      for (const rest of parts.slice(p)) {
        for (const i of rest.indexes) {
          results[i]!.outcome = { kind: 'retry_later', code: err.code, message: err.message, response: { transport_error: err.code } };
        }
      }
      break;
    }
  }

  return {
    model,
    records: results,
    requests,
    registrationNumber: requests.find((r) => r.numeroRegistro !== null)?.numeroRegistro ?? null,
  };
}
