/**
 * VERI*FACTU transaction rules: as TicketBAI (../es/invoice.ts), with series `A` by
 * default (the VERI*FACTU config has no series field), plus the optional fields the
 * `RegistroAlta` can carry (SuministroInformacion.xsd):
 * - `description`: `DescripcionOperacion` (mandatory in the record, max 500 characters;
 *   the line descriptions when not given);
 * - `original_invoice_number` / `original_issue_date` (DD-MM-YYYY): the invoice a refund
 *   corrects, written as `FacturasRectificadas` (both or neither);
 * - `replaces_simplified`: the transaction ids of the simplified invoices (F2) a full one
 *   replaces: TipoFactura F3 with `FacturasSustituidas` (../es/replacement.ts);
 * - `exemption_code` (E1–E6; E1–E8 at an IGIC location, AEAT list L10B): the 0 % lines are
 *   an exempt operation (../es/exemption.ts);
 * - the lines' rates: those of the location's tax (../es/tax.ts: IVA, or IGIC/IPSI when
 *   `country_config.tax` says so), and their recargo de equivalencia (../es/surcharge.ts);
 * - `operation_date` (DD-MM-YYYY): the day of the operation when it is not the issue date,
 *   written as `FechaOperacion` (../es/operation-date.ts; not in the huella, FORMATS.md §2.1).
 * With a live key the location must have a tax_id (es/common.ts `requireLiveTaxId`).
 */
import { badRequest } from '../../core/errors.ts';
import type { TransactionContext, TransactionDraft } from '../types.ts';
import { isDmyDate } from '../shared/dates.ts';
import { baseMetadata, optionalText, withoutUndefined, metaString } from '../shared/metadata-fields.ts';
import { readInvoiceNumber, readSpanishInvoiceType, seriesFor } from '../es/invoice.ts';
import { requireLiveTaxId } from '../es/common.ts';
import { readReplacedIds } from '../es/replacement.ts';
import { checkOriginalNotLater } from '../es/corrected-invoice.ts';
import { dmyToIso, madridDay, readOperationDate } from '../es/operation-date.ts';
import { readTaxExemptionCode } from '../es/exemption.ts';
import { checkTaxRates, taxOf } from '../es/tax.ts';
import { breakdownCount, checkSurcharges } from '../es/surcharge.ts';
import { checkIssuerRegime, vatRegimeOf } from '../es/regime.ts';
import { checkForeignCustomer } from '../es/party.ts';
import { configString } from '../shared/config-fields.ts';
import { SOFTWARE_NIF_INVALID, isProducerTaxId } from './config.ts';
import { isValidSpanishNif } from '../es/nif.ts';
import { checkRecordAmounts } from './amount-limits.ts';
import { checkDatedRates } from './dated-rates.ts';
import { checkRecipient } from './party-id.ts';

/** The invoice types whose record names the customer (Destinatarios: AEAT 1189 / 1190). */
export const NAMES_CUSTOMER: ReadonlySet<string> = new Set(['F1', 'F3', 'R1', 'R2', 'R3', 'R4']);

export const DEFAULT_SERIES = 'A';

export const seriesOf = (tx: TransactionDraft): string => metaString(tx, 'series') ?? DEFAULT_SERIES;

export const DESCRIPTION_INVALID = 'metadata.description must be a string of at most 500 characters';
/*
 * `NumSerieFactura` (TextoIDFacturaType) is 1-60 characters; AEAT refuses < > " ' = in it
 * (error 1130 "caracteres no permitidos"), and control characters cannot be sent at all.
 */
const ORIGINAL_NUMBER = /^[^<>"'=\u0000-\u001F\u007F]{1,60}$/;
export const ORIGINAL_NUMBER_INVALID = 'metadata.original_invoice_number must be 1-60 characters, without < > " \' =';
export const ORIGINAL_DATE_INVALID = 'metadata.original_issue_date must be a date in the form DD-MM-YYYY';
export const ORIGINAL_PAIR = 'metadata.original_invoice_number and metadata.original_issue_date go together: give both or neither';
export const ORIGINAL_ON_SALE = 'metadata.original_invoice_number is only allowed on refund and void transactions';
/*
 * AEAT's VERI*FACTU validation, §7 FechaOperacion ("Validaciones y errores", as open-source
 * validators quote it): "no debe ser inferior a la fecha actual menos veinte años" (1134), and
 * with IVA or IGIC "solo podrá ser superior a la fecha actual, si ClaveRegimen = 14 o 15"
 * (1125: "tiene una fecha superior a la permitida"), keys this service never writes. IPSI
 * (Impuesto 02) is not named there, but RD 1619/2012 art. 6.1.f dates the operation on or
 * before its invoice, so every tax takes the same rule.
 */
export const OPERATION_DATE_FUTURE =
  'metadata.operation_date must not be later than today: the invoice is issued on or after the day of its operation (AEAT refuses a later FechaOperacion, error 1125)';
export const OPERATION_DATE_TOO_OLD = 'metadata.operation_date must not be more than twenty years before today (AEAT error 1134)';
/** `Desglose` holds at most 12 `DetalleDesglose`: one per VAT rate and surcharge (DesgloseType). */
export const TOO_MANY_RATES = 'a VERI*FACTU invoice carries at most 12 different tax rates';

export function validateVerifactuTransaction(tx: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  // A live record names its issuer by the location's NIF, never the sandbox placeholder.
  requireLiveTaxId(ctx, 'verifactu');
  // A location stored before config.ts checked it may name its producer by something AEAT
  // cannot identify: every record would be refused, so it issues nothing until PATCHed.
  const producer = configString(ctx.location.config, 'software_nif');
  if (producer !== undefined && !isProducerTaxId(producer)) throw badRequest(SOFTWARE_NIF_INVALID);
  const meta = baseMetadata(tx, 'ES');
  const invoice_number = readInvoiceNumber(meta);
  // A full invoice in place of simplified ones (F3) names them by transaction id (../es/replacement.ts).
  const replaces_simplified = readReplacedIds(tx, meta);
  const invoice_type = readSpanishInvoiceType(tx, meta);
  const series = seriesFor(meta, invoice_type, DEFAULT_SERIES);
  const description = optionalText(meta, 'description', DESCRIPTION_INVALID, /^[\s\S]{1,500}$/);
  const original_invoice_number = optionalText(meta, 'original_invoice_number', ORIGINAL_NUMBER_INVALID, ORIGINAL_NUMBER, true);
  const original_issue_date = optionalText(meta, 'original_issue_date', ORIGINAL_DATE_INVALID);
  if (original_issue_date !== undefined && !isDmyDate(original_issue_date)) throw badRequest(ORIGINAL_DATE_INVALID);
  if ((original_invoice_number === undefined) !== (original_issue_date === undefined)) throw badRequest(ORIGINAL_PAIR);
  // The corrected invoice was issued before its correction (../es/corrected-invoice.ts):
  // FacturasRectificadas naming a later day would declare an invoice that does not exist yet.
  checkOriginalNotLater(original_issue_date, ctx.now);
  // The operation's own day (../es/operation-date.ts): not after the issue date, the Madrid
  // day of `now` (build.ts), nor twenty years before it (AEAT 1134).
  const issued = madridDay(ctx.now);
  const operation_date = readOperationDate(meta, issued, OPERATION_DATE_FUTURE);
  if (operation_date !== undefined && dmyToIso(operation_date) < twentyYearsBefore(issued)) throw badRequest(OPERATION_DATE_TOO_OLD);
  // AEAT error 1117: FacturasRectificadas only on a corrective invoice.
  if (original_invoice_number !== undefined && tx.type === 'sale') throw badRequest(ORIGINAL_ON_SALE);
  if (breakdownCount(tx.items) > 12) throw badRequest(TOO_MANY_RATES);
  // AEAT refuses a rate its tax does not have (1124): refused here, before anything is stored.
  const tax = taxOf(ctx.location);
  // The exemption cause among the tax's (IGIC: L10B), read first: an IPSI sale's exempt
  // lines are at 0 %, a rate IPSI does not have otherwise (../es/tax.ts).
  const exemption_code = readTaxExemptionCode(tx, meta, tax);
  checkTaxRates(tx, tax, exemption_code !== undefined);
  checkSurcharges(tx, tax, exemption_code);
  // The temporary IVA rates of 2022-2024, which AEAT dates by FechaOperacion, else the issue date (dated-rates.ts).
  checkDatedRates(tx, tax, dmyToIso(issued), operation_date === undefined ? undefined : dmyToIso(operation_date));
  // Amounts beyond the schema's 12 integer digits (amount-limits.ts).
  checkRecordAmounts(tx);
  // An issuer in recargo de equivalencia or the simplified regime (../es/regime.ts): no exempt sale.
  checkIssuerRegime(vatRegimeOf(ctx.location), exemption_code);
  // A foreign customer's IDOtro needs its country (../es/party.ts): 02 for the EU, 04 elsewhere.
  // The recipient AEAT must identify (party-id.ts: 1191-1193), for the types that name one.
  if (NAMES_CUSTOMER.has(invoice_type)) checkRecipient(tx, invoice_type, ctx.location.tax_id);
  checkForeignCustomer(tx, isValidSpanishNif);
  return withoutUndefined({ ...meta, series, invoice_number, invoice_type, description, original_invoice_number, original_issue_date, exemption_code, replaces_simplified, operation_date });
}

/** The same day twenty years before `dmy` (DD-MM-YYYY), ISO: 29-02-2024 → 2004-02-29. */
function twentyYearsBefore(dmy: string): string {
  const iso = dmyToIso(dmy);
  return `${String(Number(iso.slice(0, 4)) - 20).padStart(4, '0')}${iso.slice(4)}`;
}
