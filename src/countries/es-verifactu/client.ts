/**
 * The VERI*FACTU protocol client (`submit` in `authority` mode): one stored record, in a
 * RegFactuSistemaFacturacion request (soap.ts), POSTed over mutual TLS to AEAT's
 * `VerifactuSOAP` endpoint (SistemaFacturacion.wsdl; FORMATS.md §2.7), the answer read
 * by response.ts.
 *
 * Flow control (FORMATS.md §2.5, RespuestaSuministro.xsd `TiempoEsperaEnvio`): after each
 * answer AEAT says how many seconds to wait before the next submission. The client keeps
 * that per issuer NIF (and environment) in this process and, until it has elapsed, does
 * not send: it answers `retry_later` with the time left, so the queue comes back then.
 */
import { TransportError, type AuthorityCode, type AuthorityOutcome, type StoredRecord, type SubmitContext } from '../types.ts';
import { authorityPost } from '../shared/authority-http.ts';
import { MISSING_TAX_ID } from '../shared/placeholder.ts';
import { issuerName } from './build.ts';
import { VERIFACTU_CODES } from './codes.ts';
import { answerToOutcome, parseVerifactuAnswer } from './response.ts';
import { submissionEnvelope } from './soap.ts';

/** SistemaFacturacion.wsdl, service sfVerifactu: ports SistemaVerifactu / SistemaVerifactuPruebas. */
export const VERIFACTU_ENDPOINTS = {
  live: 'https://www1.agenciatributaria.gob.es/wlpl/TIKE-CONT/ws/SistemaFacturacion/VerifactuSOAP',
  test: 'https://prewww1.aeat.es/wlpl/TIKE-CONT/ws/SistemaFacturacion/VerifactuSOAP',
} as const;

/** The endpoint for the context: the WSDL's, or its path on `authorityBaseUrl` (fake servers). */
export function verifactuEndpoint(ctx: Pick<SubmitContext, 'environment' | 'authorityBaseUrl'>): string {
  const official = VERIFACTU_ENDPOINTS[ctx.environment];
  if (!ctx.authorityBaseUrl) return official;
  return ctx.authorityBaseUrl.replace(/\/+$/, '') + new URL(official).pathname;
}

export interface VerifactuClient {
  submit(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome>;
}

/** A client with its own flow-control memory (one per process in index.ts; one per test). */
export function createVerifactuClient(codes: Readonly<Record<string, AuthorityCode>> = VERIFACTU_CODES): VerifactuClient {
  /** Issuer key → epoch ms before which AEAT asked us not to send. */
  const sendNotBefore = new Map<string, number>();

  return {
    async submit(record, ctx) {
      const nif = ctx.location.tax_id?.trim() || MISSING_TAX_ID;
      const issuerKey = `${ctx.environment}:${nif}`;
      const now = ctx.now.getTime();
      const notBefore = sendNotBefore.get(issuerKey);
      if (notBefore !== undefined && now < notBefore) {
        const seconds = Math.ceil((notBefore - now) / 1000);
        return {
          kind: 'retry_later',
          code: 'WAIT_TIME',
          message: `AEAT asked to wait before the next submission for this issuer (TiempoEsperaEnvio): ${seconds} s left`,
          retryAfterSeconds: seconds,
          flowControl: true,
          response: { flow_control: true, send_not_before: new Date(notBefore).toISOString() },
        };
      }

      let envelope: string;
      try {
        envelope = submissionEnvelope({ nif, nombreRazon: issuerName(ctx) }, [record.body]);
      } catch (err) {
        // A stored placeholder (JSON) cannot be sent: no retry will change that.
        return { kind: 'rejected', code: 'INVALID_RECORD', message: `the stored record is not a VERI*FACTU record: ${(err as Error).message}`, response: {} };
      }

      const res = await authorityPost({
        url: verifactuEndpoint(ctx),
        // SOAP 1.1 over HTTP: text/xml and a SOAPAction header (the WSDL's soapAction="").
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
        body: envelope,
        clientKey: ctx.clientKey,
        ca: ctx.authorityCa,
        timeoutMs: ctx.timeoutMs,
      });
      const answer = parseVerifactuAnswer(res.body.toString('utf8'));

      if (answer === null) {
        const snippet = res.body.toString('utf8').slice(0, 200);
        if (res.status >= 500) throw new TransportError('http_5xx', `AEAT answered HTTP ${res.status} without a SOAP answer`);
        if (res.status === 401 || res.status === 403) {
          // AEAT refuses the TLS client before any SOAP (no certificate, or not accepted).
          const code = `HTTP_${res.status}`;
          return { kind: 'rejected', code, message: codes[code]?.message ?? 'AEAT refused the client certificate', response: { http_status: res.status, body: snippet } };
        }
        if (res.status === 429) {
          const after = Number(res.headers['retry-after']);
          return {
            kind: 'retry_later', code: 'HTTP_429', message: 'AEAT is limiting the request rate',
            retryAfterSeconds: Number.isFinite(after) && after > 0 ? after : undefined, response: { http_status: res.status },
          };
        }
        throw new TransportError('bad_response', `AEAT answered HTTP ${res.status} with a body that is not a SOAP answer`);
      }

      if (answer.kind === 'respuesta') {
        if (answer.TiempoEsperaEnvio !== undefined && answer.TiempoEsperaEnvio > 0) {
          sendNotBefore.set(issuerKey, now + answer.TiempoEsperaEnvio * 1000);
        } else {
          sendNotBefore.delete(issuerKey);
        }
      }
      const numSerie = /<sf:(?:NumSerieFactura|NumSerieFacturaAnulada)>([^<]*)</.exec(record.body)?.[1];
      return answerToOutcome(answer, codes, { NumSerieFactura: numSerie });
    },
  };
}
