/**
 * Real-time TicketBAI submission to Gipuzkoa and Araba (Bizkaia receives through LROE
 * batches instead: `lroe/client.ts`). One signed file per POST: a `TicketBai` (alta) or an
 * `AnulaTicketBai` (baja), over mutual TLS with the issuer's certificate.
 *
 * Endpoints (FORMATS.md §1.6 [secondary]: gobl.ticketbai `internal/gateways/gipuzkoa.go`
 * and `araba.go`, Odoo):
 * - Gipuzkoa: `https://tbai-z.egoitza.gipuzkoa.eus` (production) or
 *   `https://tbai-z.prep.gipuzkoa.eus` (test), paths `/sarrerak/alta` and `/sarrerak/baja`;
 * - Araba: `https://ticketbai.araba.eus` or `https://pruebas-ticketbai.araba.eus`, paths
 *   `/TicketBAI/v1/facturas/` and `/TicketBAI/v1/anulaciones/`.
 */
import type { AuthorityOutcome, StoredRecord, SubmitContext } from '../types.ts';
import { authorityPost } from '../shared/authority-http.ts';
import { interpretTicketBaiHttp, type TicketBaiKind } from './response.ts';

export type RealtimeTerritory = 'gipuzkoa' | 'araba';

const HOSTS: Readonly<Record<RealtimeTerritory, { live: string; test: string }>> = {
  gipuzkoa: { live: 'https://tbai-z.egoitza.gipuzkoa.eus', test: 'https://tbai-z.prep.gipuzkoa.eus' },
  araba: { live: 'https://ticketbai.araba.eus', test: 'https://pruebas-ticketbai.araba.eus' },
};

const PATHS: Readonly<Record<RealtimeTerritory, Record<TicketBaiKind, string>>> = {
  gipuzkoa: { alta: '/sarrerak/alta', anulacion: '/sarrerak/baja' },
  araba: { alta: '/TicketBAI/v1/facturas/', anulacion: '/TicketBAI/v1/anulaciones/' },
};

/**
 * The URL a record goes to. An `authorityBaseUrl` (a fake authority, a proxy) replaces
 * scheme and host; the territory's path is kept and appended to whatever path the base
 * carries.
 */
export function ticketBaiEndpoint(
  territory: RealtimeTerritory,
  kind: TicketBaiKind,
  environment: 'test' | 'live',
  authorityBaseUrl?: string,
): string {
  const base = (authorityBaseUrl ?? HOSTS[territory][environment]).replace(/\/+$/, '');
  return `${base}${PATHS[territory][kind]}`;
}

export const ticketBaiKindOf = (record: Pick<StoredRecord, 'kind'>): TicketBaiKind =>
  record.kind === 'cancellation' ? 'anulacion' : 'alta';

/**
 * POSTs the stored signed XML and reads the answer. Authority answers (accepted,
 * rejected, duplicate, retry later) are values; no answer at all (timeout, refused
 * connection, TLS failure, 5xx without a TicketBaiResponse) throws `TransportError`.
 */
export async function submitTicketBaiRealtime(
  record: StoredRecord,
  ctx: SubmitContext,
  territory: RealtimeTerritory,
): Promise<AuthorityOutcome> {
  const kind = ticketBaiKindOf(record);
  const url = ticketBaiEndpoint(territory, kind, ctx.environment, ctx.authorityBaseUrl);
  const res = await authorityPost({
    url,
    headers: {
      'content-type': 'application/xml; charset=utf-8',
      accept: 'application/xml',
    },
    body: Buffer.from(record.body, 'utf8'),
    clientKey: ctx.clientKey,
    ca: ctx.authorityCa,
    timeoutMs: ctx.timeoutMs,
  });
  return interpretTicketBaiHttp(res, kind, { fiscalId: record.fiscalId, host: new URL(url).host });
}
