/**
 * The month's SAF-T (PT) file of one location, read from the store (DECISIONS "Files an
 * inspector asks for": `GET /v1/locations/{id}/saft?period=YYYY-MM`; "Batch":
 * `portugal/saft` monthly).
 * - A month the monthly run produced: the stored file, byte for byte (what was produced at
 *   closing), `X-Saft-Status: produced`.
 * - Not produced yet: built now from the stored records (`buildSaftFile`), not kept:
 *   `X-Saft-Status: open` for the current month (its documents so far), `not_produced`
 *   for a closed month the run has not reached.
 * - No document that month (or a month not begun): 404. AT has no file for a month without
 *   sales (the taxpayer declares the absence of invoicing in e-fatura instead).
 * Months are Lisbon calendar months (the documents' InvoiceDate). The caller's environment
 * only: test keys see the file of their test documents, live keys of their live ones.
 */
import { notFound } from '../../core/errors.ts';
import type { Queryable } from '../../store/db.ts';
import { saftFilesRepo } from '../../store/repos/saft-files-repo.ts';
import { isoDate, localDate, localDateTimeWithOffset } from '../shared/dates.ts';
import type { LocationFile, LocationForFiscal, SoftwareIdentity, TransactionDraft } from '../types.ts';
import { buildSaftFile, type SaftFile } from './saft-file.ts';

export const SAFT_SYSTEM = 'pt-saft';
export const SAFT_CONTENT_TYPE = 'application/xml; charset=windows-1252';
const DAY_MS = 86_400_000;

/** `YYYY-MM` of the month after. */
export function nextPeriod(period: string): string {
  const [y, m] = period.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
}

/** The instant the month begins in Lisbon (UTC+0 in winter, UTC+1 in summer; never a change on the 1st). */
export function lisbonMonthStart(period: string): Date {
  const [y, m] = period.split('-').map(Number) as [number, number];
  const midnightUtc = Date.UTC(y, m - 1, 1);
  for (const offsetHours of [0, 1, -1, 2]) {
    const at = new Date(midnightUtc - offsetHours * 3_600_000);
    if (localDateTimeWithOffset(at, 'PT').startsWith(`${period}-01T00:00:00`)) return at;
  }
  throw new Error(`pt-saft: no Lisbon midnight on ${period}-01`);
}

/** The Lisbon calendar month of an instant, `YYYY-MM`. */
export const lisbonMonthOf = (at: Date): string => isoDate(localDate(at, 'PT')).slice(0, 7);

/** NIF check before building: the file's CompanyID (saft-file.ts throws a plain error without one). */
export const hasNif = (location: LocationForFiscal): boolean => /^[1-9][0-9]{8}$/.test(location.tax_id?.trim() ?? '');
export const NO_NIF_MESSAGE = "no SAF-T file: the location has no Portuguese NIF (tax_id), the file's CompanyID";

/**
 * Builds the month's file from the location's stored records of one environment;
 * undefined when it issued no document that month. Documents are read from a day either
 * side of the month (a document takes its predecessor's time when that one was stamped
 * later: ledger) and kept by their InvoiceDate; cancellations up to now apply.
 */
export async function buildMonth(q: Queryable, input: {
  location: LocationForFiscal; environment: 'test' | 'live'; period: string; software: SoftwareIdentity; createdAt: Date;
}): Promise<SaftFile | undefined> {
  const from = new Date(lisbonMonthStart(input.period).getTime() - DAY_MS);
  const to = new Date(lisbonMonthStart(nextPeriod(input.period)).getTime() + DAY_MS);
  const rows = await saftFilesRepo.records(q, { locationId: input.location.id, environment: input.environment, system: SAFT_SYSTEM, from, to });
  if (!rows.some((r) => r.kind === 'record')) return undefined;
  const file = buildSaftFile({
    location: input.location,
    period: input.period,
    records: rows.map((r) => ({ kind: r.kind, body: r.body, tx: r.normalized as TransactionDraft })),
    software: input.software,
    createdAt: input.createdAt,
  });
  return file.numberOfEntries > 0 ? file : undefined;
}

const disposition = (fileName: string): string => `attachment; filename="${fileName}"`;

export const SAFT_LOCATION_FILE: LocationFile = {
  path: 'saft',
  param: { name: 'period', kind: 'month' },
  contentType: SAFT_CONTENT_TYPE,
  summary: "Portugal SAF-T (PT) 1.04_01: the month's file of the location (Windows-1252); the file produced at the month's closing, else built on demand",
  async produce(deps, { location, value: period, environment }) {
    const stored = await saftFilesRepo.get(deps.db, { locationId: location.id, environment, period });
    if (stored) return { body: stored.content, headers: { 'x-saft-status': 'produced', 'content-disposition': disposition(stored.file_name) } };
    const now = deps.clock.now();
    const current = lisbonMonthOf(now);
    if (period > current) throw notFound(`no SAF-T file for ${period}: the month has not begun`);
    if (!hasNif(location)) throw notFound(NO_NIF_MESSAGE);
    const file = await buildMonth(deps.db, { location, environment, period, software: deps.software, createdAt: now });
    if (file === undefined) throw notFound(`no SAF-T file for ${period}: the location issued no documents that month`);
    return {
      body: file.bytes,
      headers: { 'x-saft-status': period === current ? 'open' : 'not_produced', 'content-disposition': disposition(file.fileName) },
    };
  },
};
