/**
 * Sends one signed DatiCorrispettivi to AdE: HTTPS POST of the XML to
 * `${base}/v1/corrispettivi` with mutual TLS (the location's seal certificate as the client
 * certificate, through ../../shared/authority-http.ts), and reads the answer (response.ts).
 *
 * Base URLs: `deps.authorityBaseUrls['it-dc:<environment>']` when set (tests: the fake
 * AdE), else the constants below. AdE publishes no endpoint for software solutions (PEM/
 * PEL, FORMATS.md §5: the technical annex of Provvedimento 111204/2025 was not collected;
 * the RT devices' endpoints are given to manufacturers only), so these are placeholders
 * to be replaced by the approved Punto di Elaborazione's address: configure the real one.
 */
import { TransportError, type SigningKey } from '../../types.ts';
import { authorityPost } from '../../shared/authority-http.ts';
import { interpretAnswer, type CorrispettiviAnswer } from './response.ts';

export const CORRISPETTIVI_PATH = '/v1/corrispettivi';
/** Placeholders (see the module note): no public AdE endpoint exists for software solutions. */
export const DEFAULT_CORRISPETTIVI_BASE_URLS = {
  test: 'https://corrispettivi-test.invalid',
  live: 'https://corrispettivi.invalid',
} as const;

export interface CorrispettiviSendContext {
  environment: 'test' | 'live';
  baseUrl?: string | undefined;
  clientKey: SigningKey;
  authorityCa?: string | undefined;
  timeoutMs: number;
  now: Date;
}

export const corrispettiviUrl = (environment: 'test' | 'live', baseUrl?: string): string =>
  `${(baseUrl ?? DEFAULT_CORRISPETTIVI_BASE_URLS[environment]).replace(/\/+$/, '')}${CORRISPETTIVI_PATH}`;

export async function sendCorrispettivi(xml: string, ctx: CorrispettiviSendContext): Promise<CorrispettiviAnswer> {
  try {
    const res = await authorityPost({
      url: corrispettiviUrl(ctx.environment, ctx.baseUrl),
      headers: { 'content-type': 'application/xml; charset=utf-8', accept: 'application/xml' },
      body: xml,
      clientKey: ctx.clientKey,
      ca: ctx.authorityCa,
      timeoutMs: ctx.timeoutMs,
    });
    return interpretAnswer(res, ctx.now);
  } catch (err) {
    if (!(err instanceof TransportError)) throw err;
    // A refused handshake is AdE refusing the certificate: not retried.
    const code = err.code === 'tls_error' ? '0403' : '0500';
    return {
      kind: code === '0403' ? 'rejected' : 'retry', code, message: `${code === '0403' ? 'Not authorized (certificate).' : 'Authority server error: retried automatically.'} (${err.message})`,
      authorityCode: err.code, authorityMessage: err.message, httpStatus: null,
    };
  }
}
