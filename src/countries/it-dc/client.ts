/**
 * The Documento Commerciale transport (`submit` and `poll` in `authority` mode): the
 * sealed document POSTed over mutual TLS (the location's seal certificate, ctx.clientKey,
 * shared/authority-http.ts), its result fetched later by the operation id AdE answered.
 *
 * Endpoints. AdE's REST channel for telematic registers is
 * `https://apid-ivaservizi.agenziaentrate.gov.it/v1/dispositivi/` (test:
 * `https://v-apid-ivaservizi.agenziaentrate.gov.it`), with mutual TLS and XML bodies
 * [secondary: the ISTI-CNR RT test server, imatesiu/TestHWCorrispettivi]. The paths for
 * single commercial documents of a software solution (Provvedimento 111204/2025) are in
 * its technical annex, which we do not have (FORMATS.md §5): `documenti-commerciali` and
 * `documenti-commerciali/esiti/{IdOperazione}` below are ours, kept in one place so the
 * annex's paths replace them. `ctx.authorityBaseUrl` (AUTHORITY_URL_IT_DC_TEST/LIVE)
 * replaces scheme and host, so tests reach a fake AdE on 127.0.0.1.
 */
import { authorityGet, authorityPost } from '../shared/authority-http.ts';
import type { AuthorityOutcome, StoredRecord, SubmitContext } from '../types.ts';
import { DC_CODES } from './codes.ts';
import { dcPollAfterSeconds, resultOutcome, sendOutcome } from './response.ts';

export const ADE_HOSTS = {
  test: 'https://v-apid-ivaservizi.agenziaentrate.gov.it',
  live: 'https://apid-ivaservizi.agenziaentrate.gov.it',
} as const;
export const DC_DOCUMENTS_PATH = '/v1/dispositivi/documenti-commerciali';
export const dcResultPath = (operationId: string) => `${DC_DOCUMENTS_PATH}/esiti/${encodeURIComponent(operationId)}`;

/** The AdE origin for the context: the environment's host, or the configured base URL's origin. */
export function adeOrigin(ctx: Pick<SubmitContext, 'environment' | 'authorityBaseUrl'>): string {
  return ctx.authorityBaseUrl ? new URL(ctx.authorityBaseUrl).origin : ADE_HOSTS[ctx.environment];
}

const XML = 'application/xml';

export async function submitToAde(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  if (record.contentType !== XML || !/^<(\w+:)?DocCommercialiLotteria[\s>]/.test(record.body)) {
    // A record from before the real format (a JSON placeholder) cannot be sent.
    return { kind: 'rejected', code: '0100', message: DC_CODES['0100']!.message, response: { contentType: record.contentType } };
  }
  const res = await authorityPost({
    url: `${adeOrigin(ctx)}${DC_DOCUMENTS_PATH}`,
    headers: { 'content-type': `${XML}; charset=utf-8`, accept: XML },
    body: record.body,
    clientKey: ctx.clientKey,
    ca: ctx.authorityCa,
    timeoutMs: ctx.timeoutMs,
  });
  return sendOutcome({ status: res.status, body: res.body.toString('utf8') });
}

export async function pollAde(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  const operationId = record.upstreamId ?? '';
  if (operationId === '') {
    return { kind: 'rejected', code: '0100', message: `${DC_CODES['0100']!.message} (no operation id to ask about)`, response: {} };
  }
  const res = await authorityGet({
    url: `${adeOrigin(ctx)}${dcResultPath(operationId)}`,
    headers: { accept: XML },
    clientKey: ctx.clientKey,
    ca: ctx.authorityCa,
    timeoutMs: ctx.timeoutMs,
  });
  const outcome = resultOutcome({ status: res.status, body: res.body.toString('utf8') }, operationId);
  // Not ready yet: the next poll after the horizon's wait for this attempt (response.ts).
  return outcome.kind === 'sent' ? { ...outcome, pollAfterSeconds: dcPollAfterSeconds(ctx.attempt) } : outcome;
}
