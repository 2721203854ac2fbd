/**
 * `metadata.operation_date` (DD-MM-YYYY): the day the goods were delivered or the service
 * rendered, when the invoice is issued on another day. RD 1619/2012 art. 6.1.f: the invoice
 * states "la fecha en que se hayan efectuado las operaciones que se documentan o en la que,
 * en su caso, se haya recibido el pago anticipado, siempre que se trate de una fecha distinta
 * a la de expedición de la factura" (the Basque invoicing regulations repeat it). Every
 * Spanish record writes it as `FechaOperacion` (FechaType / sf:fecha / sii:fecha: DD-MM-YYYY):
 * TicketBAI in DatosFactura, VERI*FACTU in RegistroAlta, SII in FacturaExpedida; AEAT's SII
 * FAQ 2.12 asks for it "cuando la fecha de realización de la operación sea distinta a la
 * fecha de expedición de la factura", so none is written on the issue day.
 *
 * Not later than the invoice's own issue day: an operation after it is accepted only for
 * regime keys 14/15 (VERI*FACTU validation §7 FechaOperacion; Araba 10-59 / 10-90 for
 * TicketBAI), which no plug-in here writes. Each system words the 400 with its authority
 * (`laterMessage`); the comparison is this one.
 *
 * ISO dates are refused rather than converted, as `original_issue_date` is: every Spanish
 * date in the API is DD-MM-YYYY.
 */
import { badRequest } from '../../core/errors.ts';
import type { RenderHint, TransactionDraft } from '../types.ts';
import { dmyDate, isDmyDate, isoDate, localDate, parseDmy } from '../shared/dates.ts';
import { optionalText, metaString, type Metadata } from '../shared/metadata-fields.ts';
import { textHint } from '../shared/render-hints.ts';

export const OPERATION_DATE_INVALID = 'metadata.operation_date must be a date in the form DD-MM-YYYY';

/** The render hint (and receipt label) stating the operation date in the receipt's header. */
export const OPERATION_DATE_HINT = 'operation_date';
export const OPERATION_DATE_LABELS = { [OPERATION_DATE_HINT]: { es: 'Fecha de operación', en: 'Operation date' } } as const;

/** Today's date in Madrid, DD-MM-YYYY: the day a record created `now` is issued. */
export const madridDay = (now: Date): string => dmyDate(localDate(now, 'ES'));

/** DD-MM-YYYY → YYYY-MM-DD (call after isDmyDate): ISO dates order as text, DD-MM-YYYY ones do not. */
export const dmyToIso = (dmy: string): string => isoDate(parseDmy(dmy));

/** Whether day `a` is later than day `b`, both valid DD-MM-YYYY (14-02-2026 is later than 15-01-2026). */
export const isLaterDay = (a: string, b: string): boolean => dmyToIso(a) > dmyToIso(b);

/**
 * Validation, at creation and preview: the given operation date, or undefined when absent or
 * the issue day itself (nothing to state). `issueDate`: the invoice's FechaExpedicionFactura,
 * DD-MM-YYYY. A malformed one → 400 OPERATION_DATE_INVALID; a later one → 400 `laterMessage`.
 */
export function readOperationDate(meta: Metadata, issueDate: string, laterMessage: string): string | undefined {
  const value = optionalText(meta, 'operation_date', OPERATION_DATE_INVALID);
  if (value === undefined) return undefined;
  if (!isDmyDate(value)) throw badRequest(OPERATION_DATE_INVALID);
  if (isLaterDay(value, issueDate)) throw badRequest(laterMessage);
  return value === issueDate ? undefined : value;
}

/**
 * The build's `FechaOperacion`: the stored `operation_date` when it is another day than the
 * issue (DD-MM-YYYY), else null. A stored value that is not a valid date, or falls after the
 * issue date, is left out rather than written out of the schema or against the rule above.
 */
export function operationDateOf(tx: TransactionDraft, issueDate: string): string | null {
  const value = metaString(tx, 'operation_date')?.trim();
  if (value === undefined || !isDmyDate(value) || value === issueDate) return null;
  return isLaterDay(value, issueDate) ? null : value;
}

/**
 * The receipt states the operation's own day in its header when the record does (RD 1619/2012
 * arts. 6.1.f and 7.1.d: full and simplified invoices alike); `operationDate` as
 * `operationDateOf` returns it.
 */
export const operationDateHints = (operationDate: string | null): RenderHint[] =>
  operationDate === null ? [] : [textHint(OPERATION_DATE_HINT, 'header', operationDate)];
