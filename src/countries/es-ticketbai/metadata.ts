/**
 * TicketBAI transaction rules: series, optional invoice number and the invoice type
 * (F1/F2, R1-R5; see ../es/invoice.ts), plus what the `TicketBai` record (xml.ts) writes
 * from the request, checked here against ticketbaiv1-2-2.xsd so the record never has to
 * cut or drop it:
 * - `description`: `DescripcionFactura` (TextMax250ObligatorioType: at most 250
 *   characters; the line descriptions when not given);
 * - `original_invoice_number` / `original_issue_date` (DD-MM-YYYY), optional
 *   `original_series`: the invoice a refund corrects, written as
 *   `FacturasRectificadasSustituidas/IDFacturaRectificadaSustituida`
 *   (NumFactura TextMax20ObligatorioType, FechaExpedicionFactura FechaType,
 *   SerieFactura TextMax20Type);
 * - the lines' tax rates: `TipoImpositivo` is Tipo3.2Type (at most 2 decimals) and
 *   `DesgloseIVA` holds at most 12 `DetalleIVA`, one per rate and surcharge
 *   (DesgloseIVAType); each an IVA rate (../es/tax.ts), with its recargo de equivalencia
 *   when the line has one (../es/surcharge.ts);
 * - `exemption_code` (E1–E6): the 0 % lines are an exempt operation, written as
 *   `Sujeta/Exenta/DetalleExenta` (../es/exemption.ts);
 * - the customer's name: `IDDestinatario` requires `ApellidosNombreRazonSocial`
 *   (TextMax120Type) next to the tax id, and a full invoice names its customer
 *   (RD 1619/2012 art. 6.1.d);
 * - `operation_date` (DD-MM-YYYY): the day the operation took place when it is not the
 *   issue date, written as `DatosFactura/FechaOperacion` (FechaType).
 */
import { badRequest } from '../../core/errors.ts';
import type { LocationForFiscal, TransactionContext, TransactionDraft } from '../types.ts';
import { isDmyDate } from '../shared/dates.ts';
import { baseMetadata, customerTaxId, optionalText, withoutUndefined, metaString } from '../shared/metadata-fields.ts';
import { configString } from '../shared/config-fields.ts';
import { readInvoiceNumber, readSpanishInvoiceType, seriesFor, type SpanishInvoiceType } from '../es/invoice.ts';
import { readReplacedIds } from '../es/replacement.ts';
import { readExemptionCode } from '../es/exemption.ts';
import { checkTaxRates, taxNotCarried, taxOf } from '../es/tax.ts';
import { breakdownCount, checkSurcharges } from '../es/surcharge.ts';
import { checkIssuerRegime, vatRegimeOf } from '../es/regime.ts';
import { checkForeignCustomer } from '../es/party.ts';
import { checkOriginalNotLater } from '../es/corrected-invoice.ts';
import { OPERATION_DATE_INVALID, madridDay, readOperationDate } from '../es/operation-date.ts';
import { LICENSE, LICENSE_INVALID, SERIES, SERIES_INVALID as CONFIG_SERIES_INVALID } from './config.ts';
import {
  ARABA_RESERVED_SERIES,
  checkCorrectiveNamesOriginal,
  checkCustomerAddress,
  checkCustomerNif,
  checkIntraEuExemption,
  checkSpecialRegimeIssuer,
  checkSurchargeParties,
  customerKindOf,
  isArabaReservedSeries,
} from './foral-rules.ts';

/** NIFType of ticketbaiv1-2-2.xsd: the shape of a Spanish NIF (the check letter is the authority's to verify). */
export const NIF_SHAPE = /^(?:[A-Z]\d{7}[A-Z]|\d{8}[A-Z]|[A-Z]\d{8})$/;

/** The series when metadata gives none: the location's configured one, else `A`. */
export const defaultSeries = (location: LocationForFiscal): string => configString(location.config, 'series') ?? 'A';

/** The series of a validated transaction (the stored metadata carries the default). */
export const seriesOf = (tx: TransactionDraft, location: LocationForFiscal): string =>
  metaString(tx, 'series') ?? defaultSeries(location);

/**
 * The issuer's chain in one territory: `es-ticketbai:<account>:<NIF>:<territory>` (the
 * territory as stored: gipuzkoa, araba, bizkaia). Migration 0044 builds the same key in SQL.
 */
export const issuerTerritoryOf = (location: LocationForFiscal): string =>
  `es-ticketbai:${location.account_id}:${location.tax_id ?? location.id}:${String(location.config.territory)}`;

/*
 * Characters XML 1.0 cannot carry (../../xml/escape.ts refuses them when the record is
 * written): refused here with a 400 instead of failing the build. Patterns use the `u`
 * flag so lengths count characters (code points), as XSD maxLength does.
 */
const NO_CONTROL = '[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\uFFFE\\uFFFF]';
const DESCRIPTION = new RegExp(`^${NO_CONTROL}{1,250}$`, 'u');
/** IDDestinatario/ApellidosNombreRazonSocial (TextMax120Type). */
const CUSTOMER_NAME = new RegExp(`^${NO_CONTROL}{1,120}$`, 'u');
/** NumFactura / SerieFactura of the corrected invoice: 1-20 characters on one line. */
const REF_TEXT = /^[^\u0000-\u001F\u007F\uFFFE\uFFFF]{1,20}$/u;

export const DESCRIPTION_INVALID = 'metadata.description must be a string of at most 250 characters, without control characters';
export const ORIGINAL_NUMBER_INVALID = 'metadata.original_invoice_number must be 1-20 characters, without control characters';
export const ORIGINAL_SERIES_INVALID = 'metadata.original_series must be 1-20 characters, without control characters';
export const ORIGINAL_DATE_INVALID = 'metadata.original_issue_date must be a date in the form DD-MM-YYYY';
export const ORIGINAL_PAIR = 'metadata.original_invoice_number and metadata.original_issue_date go together: give both or neither';
export const ORIGINAL_SERIES_ALONE = 'metadata.original_series needs metadata.original_invoice_number and metadata.original_issue_date';
export const ORIGINAL_ON_SALE = 'metadata.original_invoice_number is only allowed on refund and void transactions';
// Malformed: Spain's shared message (../es/operation-date.ts).
export { OPERATION_DATE_INVALID };
export const OPERATION_DATE_FUTURE =
  'metadata.operation_date must not be later than today: the invoice is issued on or after the day of its operation (the Haciendas Forales refuse a later FechaOperacion)';
export const TOO_MANY_RATES = 'a TicketBAI invoice carries at most 12 different tax rates';
export const rateDecimalsInvalid = (i: number): string => `items[${i}].tax_rate must have at most 2 decimals for TicketBAI`;
export const customerNameRequired = (type: SpanishInvoiceType): string =>
  `customer_context.name is required for TicketBAI invoice type ${type}: the invoice names its customer by tax id and name`;
export const customerNameInvalid = (field: string): string => `customer_context.${field} must be a string of at most 120 characters`;

/** TicketBAI names the issuer by its NIF in every record (Sujetos/Emisor/NIF), test keys included. */
export const TAX_ID_REQUIRED = 'location tax_id is required for ticketbai transactions: TicketBAI names the issuer by its NIF';

export function validateTicketBaiTransaction(tx: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  // A location may be registered before its NIF is known; it cannot issue a record then
  // (the build would have no issuer: a 500 before this check).
  if (!ctx.location.tax_id?.trim()) throw badRequest(TAX_ID_REQUIRED);
  // A location stored before config.ts checked them may hold a licence or series longer than
  // the record's TextMax20: every record would be schema-invalid, so it issues nothing until
  // PATCHed (as the spec's versioning note has older configs fail at the next transaction).
  const license = configString(ctx.location.config, 'tbai_license');
  if (license !== undefined && !LICENSE.test(license)) throw badRequest(LICENSE_INVALID);
  const configSeries = configString(ctx.location.config, 'series');
  if (configSeries !== undefined && !SERIES.test(configSeries)) throw badRequest(CONFIG_SERIES_INVALID);
  const meta = baseMetadata(tx, 'ES');
  const invoice_number = readInvoiceNumber(meta);
  // A full invoice in place of simplified ones (F3) names them by transaction id (../es/replacement.ts).
  const replaces_simplified = readReplacedIds(tx, meta);
  const invoice_type = readSpanishInvoiceType(tx, meta);
  const series = seriesFor(meta, invoice_type, defaultSeries(ctx.location));
  const description = optionalText(meta, 'description', DESCRIPTION_INVALID, DESCRIPTION);
  // Araba refuses (004) the series its own FakturAraba program uses (./foral-rules.ts).
  if (ctx.location.config.territory === 'araba' && isArabaReservedSeries(series)) throw badRequest(ARABA_RESERVED_SERIES);
  const original = readOriginal(tx, meta);
  // A rectificativa names the invoice it corrects, issued before it (./foral-rules.ts): live
  // and on the way to a Hacienda's test service. The sandbox stub keeps the spec's minimal
  // refund (`type: refund`, nothing named) working, as Italy's keeps its buyer id
  // (docs/decisions.md, session 25 "the buyer id on the way to SdI's test service").
  if (ctx.sandboxMode !== 'stub') checkCorrectiveNamesOriginal(tx, invoice_type, original.original_invoice_number);
  checkOriginalNotLater(original.original_issue_date, ctx.now);
  // Not after the invoice's own day, Madrid's (../es/operation-date.ts): Araba 10-59 / 10-90.
  const operation_date = readOperationDate(meta, madridDay(ctx.now), OPERATION_DATE_FUTURE);
  checkRates(tx);
  checkCustomerName(tx, invoice_type);
  // A foreign customer's IDOtro needs its country (../es/party.ts): 02 for the EU, 04 elsewhere.
  checkForeignCustomer(tx, (id) => NIF_SHAPE.test(id));
  // A customer named by NIF: a correct one, not the issuer's own (./foral-rules.ts).
  checkCustomerNif(tx, NIF_SHAPE, ctx.location.tax_id);
  // Its address and postal code, when given, fit the record (./foral-rules.ts).
  checkCustomerAddress(tx);
  const customer = customerKindOf(tx, NIF_SHAPE);
  const exemption_code = readExemptionCode(tx, meta);
  // E5 is a supply to a customer with another member state's VAT number (./foral-rules.ts).
  checkIntraEuExemption(exemption_code, customer);
  // TicketBAI is IVA only (../es/tax.ts): a location cannot be registered with another tax.
  const tax = taxOf(ctx.location);
  if (tax !== 'iva') throw badRequest(taxNotCarried('ticketbai', tax));
  checkTaxRates(tx, tax);
  checkSurcharges(tx, tax, exemption_code);
  const regime = vatRegimeOf(ctx.location);
  // Keys 51/52 only from a natural person or an E/J entity (./foral-rules.ts): config.ts
  // refuses the pair at registration; a location stored before is held here.
  checkSpecialRegimeIssuer(regime, ctx.location.tax_id);
  // An issuer in recargo de equivalencia or the simplified regime (../es/regime.ts): no exempt sale.
  checkIssuerRegime(regime, exemption_code);
  // A surcharge goes to a Spanish retailer, never from an issuer keyed 51 (./foral-rules.ts).
  checkSurchargeParties(tx, customer, regime);
  return withoutUndefined({ ...meta, series, invoice_number, invoice_type, description, ...original, exemption_code, replaces_simplified, operation_date });
}

/**
 * The corrected invoice. Number and date are both needed to name it (xml.ts writes the
 * block only with both); the series is optional. ISO dates are refused rather than
 * converted: xml.ts and every Spanish system here take DD-MM-YYYY, as the spec's
 * credit-note fields say.
 */
function readOriginal(tx: TransactionDraft, meta: Record<string, unknown>) {
  const original_invoice_number = optionalText(meta, 'original_invoice_number', ORIGINAL_NUMBER_INVALID, REF_TEXT, true);
  const original_issue_date = optionalText(meta, 'original_issue_date', ORIGINAL_DATE_INVALID);
  if (original_issue_date !== undefined && !isDmyDate(original_issue_date)) throw badRequest(ORIGINAL_DATE_INVALID);
  const original_series = optionalText(meta, 'original_series', ORIGINAL_SERIES_INVALID, REF_TEXT, true);
  if ((original_invoice_number === undefined) !== (original_issue_date === undefined)) throw badRequest(ORIGINAL_PAIR);
  if (original_series !== undefined && original_invoice_number === undefined) throw badRequest(ORIGINAL_SERIES_ALONE);
  // FacturasRectificadasSustituidas belongs to a corrective invoice (xml.ts writes it only
  // under FacturaRectificativa); on a sale it would be silently lost.
  if (original_invoice_number !== undefined && tx.type === 'sale') throw badRequest(ORIGINAL_ON_SALE);
  return { original_invoice_number, original_issue_date, original_series };
}

/** Tipo3.2Type and DesgloseIVAType's 12 DetalleIVA: refused here, not rounded or failed in the build. */
function checkRates(tx: TransactionDraft): void {
  tx.items.forEach((l, i) => {
    if (Math.abs(l.tax_rate * 100 - Math.round(l.tax_rate * 100)) > 1e-9) throw badRequest(rateDecimalsInvalid(i));
  });
  if (breakdownCount(tx.items) > 12) throw badRequest(TOO_MANY_RATES);
}

/**
 * Whenever the customer gives a tax id the record carries `IDDestinatario`, whose
 * `ApellidosNombreRazonSocial` is required: always for F1 and R1-R4 (they need the tax
 * id, ../es/invoice.ts), and for an F2/R5 that was given one anyway. The name is
 * `customer_context.name` (`legal_name` is read too, as xml.ts does), at most 120
 * characters (TextMax120Type). Without a tax id nothing of the customer is written.
 */
function checkCustomerName(tx: TransactionDraft, type: SpanishInvoiceType): void {
  if (customerTaxId(tx) === undefined) return;
  const ctx = tx.customer_context ?? {};
  const given = (v: unknown): boolean => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');
  const field = ['name', 'legal_name'].find((k) => given(ctx[k]));
  if (field === undefined) throw badRequest(customerNameRequired(type));
  const value = ctx[field];
  if (typeof value !== 'string' || !CUSTOMER_NAME.test(value.trim())) throw badRequest(customerNameInvalid(field));
}
