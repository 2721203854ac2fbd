/**
 * Sends one signed DatiCorrispettivi to AdE: HTTPS POST of the XML to
 * `{AdE}/v1/dispositivi/corrispettivi/` with mutual TLS (the location's seal certificate as
 * the client certificate, through ../../shared/authority-http.ts), and reads the answer
 * (response.ts).
 *
 * The host and path are those of AdE's REST channel for telematic registers
 * (`apid-ivaservizi…`, test `v-apid-ivaservizi…`; the same hosts the single documents go
 * to, ../client.ts) [secondary: the ISTI-CNR RT test server and RT integrators' scripts].
 * The software-solution annex (Provvedimento 111204/2025, FORMATS.md §5) was not
 * collected: if it names another address, it replaces these constants.
 * `deps.authorityBaseUrls['it-dc:<environment>']` replaces scheme and host (tests: the
 * fake AdE).
 */
import { TransportError, type SigningKey } from '../../types.ts';
import { authorityPost } from '../../shared/authority-http.ts';
import { ADE_HOSTS } from '../client.ts';
import { interpretAnswer, type CorrispettiviAnswer } from './response.ts';

export const CORRISPETTIVI_PATH = '/v1/dispositivi/corrispettivi/';
export const DEFAULT_CORRISPETTIVI_BASE_URLS = ADE_HOSTS;

export interface CorrispettiviSendContext {
  environment: 'test' | 'live';
  baseUrl?: string | undefined;
  clientKey: SigningKey;
  authorityCa?: string | undefined;
  timeoutMs: number;
  now: Date;
}

export const corrispettiviUrl = (environment: 'test' | 'live', baseUrl?: string): string =>
  `${baseUrl ? new URL(baseUrl).origin : DEFAULT_CORRISPETTIVI_BASE_URLS[environment]}${CORRISPETTIVI_PATH}`;

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
