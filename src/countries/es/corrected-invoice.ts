/**
 * The invoice a corrective one corrects, as a refund names it in `metadata.original_issue_date`
 * (DD-MM-YYYY): checks shared by Spain's systems.
 */
import { badRequest } from '../../core/errors.ts';
import { isLaterDay, madridDay } from './operation-date.ts';

export const ORIGINAL_DATE_FUTURE =
  'metadata.original_issue_date must not be later than today: the corrected invoice was issued before its correction';

/**
 * A corrective invoice corrects an invoice already issued (RD 1619/2012 art. 15: it is issued
 * when the original "no cumpla alguno de los requisitos" or its amounts change), so the
 * original's issue date cannot be later than the correction's own. The correction is dated
 * the day it is created, in Madrid (its FechaExpedicionFactura), which is "today" here.
 * `originalDate` is a valid DD-MM-YYYY (checked before); undefined: nothing named.
 */
export function checkOriginalNotLater(originalDate: string | undefined, now: Date): void {
  if (originalDate !== undefined && isLaterDay(originalDate, madridDay(now))) throw badRequest(ORIGINAL_DATE_FUTURE);
}
