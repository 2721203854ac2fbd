/**
 * Greece myDATA transaction rules (the spec has no Greek metadata table: the fields are
 * ours, docs/decisions.md "Greece: the InvoicesDoc"):
 * - `invoice_type`: a sale 11.1 retail receipt (ΑΛΠ), 11.2 service receipt (ΑΠΥ), 11.3
 *   simplified invoice, 1.1 / 1.2 / 1.3 sales invoice (Greek / EU / third-country buyer),
 *   2.1 / 2.2 / 2.3 services invoice (likewise); a refund or void 11.4 retail credit note,
 *   5.1 credit note correlated to a MARK, 5.2 not correlated.
 *   Default: 11.1 / 11.4, or 1.1 (1.2, 1.3 by the counterpart's country) / 5.1 / 5.2 when a
 *   business counterpart is given.
 * - `series`: else the location's default_series.
 * - the counterpart (`counterpart_vat_number`, `_country` (GR), `_branch` (0), `_name`,
 *   `_street`, `_number`, `_postal_code`, `_city`): required for 1.x, 2.x, 5.x, refused
 *   on retail documents (they have no counterpart); its country must suit the invoice type
 *   and it is not the issuer (checkCounterpart).
 * - `correlated_mark`: the MARK a credit note corrects: required for 5.1, optional for a
 *   retail 11.4, refused on 5.2 (the non-correlated credit note) and on sales.
 * - `payment_type` (1-8), `vat_exemption_category` (1-31, required with a 0 % line),
 *   `income_classification_type` / `_category`: override the defaults of classification.ts;
 *   the pair must be one AADE accepts on the invoice type (INCOME_COMBINATIONS).
 * Line rates must be Greek VAT rates: myDATA has no category for any other.
 */
import { badRequest } from '../../core/errors.ts';
import { RateListError } from '../../core/transaction-request.ts';
import type { LocationForFiscal, TransactionContext, TransactionDraft } from '../types.ts';
import { baseMetadata, optionalChoice, optionalText, metaString, type Metadata } from '../shared/metadata-fields.ts';
import { configString } from '../shared/config-fields.ts';
import { keyPartAllowed } from '../shared/chain-key.ts';
import { isValidAfm } from './afm.ts';
import { SERIES_SEPARATOR_INVALID } from './config.ts';
import {
  CORRELATABLE_TYPES,
  CREDIT_TYPES,
  greekRatesText,
  INCOME_CATEGORIES,
  INCOME_TYPES,
  PAYMENT_TYPE_MAX,
  SALE_TYPES,
  VAT_EXEMPTION_MAX,
  VAT_EXEMPTION_MIN,
  counterpartZoneOf,
  defaultIncomeClassification,
  defaultInvoiceType,
  incomeCombinationError,
  isRetail,
  needsCounterpart,
  vatCategoryOf,
  zoneOfCountry,
} from './classification.ts';

/** The series: metadata's, else the location's default_series (unique per AFM, year and branch). */
export const seriesOf = (tx: TransactionDraft, location: LocationForFiscal): string =>
  metaString(tx, 'series') ?? configString(location.config, 'default_series') ?? 'A';

/**
 * Whose numbering a series is: the account's issuer (AFM) at one establishment (branch),
 * `<account id>:<afm>:<branch>` (the key migration 0042 builds in SQL alike).
 */
export const issuerBranchOf = (location: LocationForFiscal): string =>
  `${location.account_id}:${configString(location.config, 'afm') ?? location.tax_id ?? location.id}:${String(location.config.branch ?? 0)}`;

const COUNTERPART_FIELDS = [
  'counterpart_vat_number', 'counterpart_country', 'counterpart_branch', 'counterpart_name',
  'counterpart_street', 'counterpart_number', 'counterpart_postal_code', 'counterpart_city',
] as const;

const given = (v: unknown): boolean => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');

/** An optional integer within [min, max], as a number or its decimal text. */
function optionalCode(meta: Metadata, field: string, min: number, max: number, message: string): number | undefined {
  const raw = meta[field];
  if (!given(raw)) return undefined;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{1,3}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw badRequest(message);
  return n;
}

function readCounterpart(meta: Metadata): Metadata | undefined {
  if (!COUNTERPART_FIELDS.some((f) => given(meta[f]))) return undefined;
  const country = optionalText(meta, 'counterpart_country', 'metadata.counterpart_country must be a 2-letter ISO 3166-1 code', /^[A-Z]{2}$/) ?? 'GR';
  const vat = optionalText(meta, 'counterpart_vat_number', 'metadata.counterpart_vat_number must be a string of at most 30 characters', /^\S{1,30}$/);
  if (vat === undefined) throw badRequest('metadata.counterpart_vat_number is required when a counterpart is given');
  if (country === 'GR' && !isValidAfm(vat)) throw badRequest('metadata.counterpart_vat_number must be a valid 9-digit AFM for a Greek counterpart');
  const rawBranch = meta.counterpart_branch;
  let branch = 0;
  if (given(rawBranch)) {
    if (typeof rawBranch !== 'number' || !Number.isSafeInteger(rawBranch) || rawBranch < 0) throw badRequest('metadata.counterpart_branch must be an integer >= 0');
    // myDATA's counterpart branch is an xs:int: a larger number makes the document schema-invalid.
    if (rawBranch > 2_147_483_647) throw badRequest("metadata.counterpart_branch must be at most 2147483647 (myDATA's branch is a 32-bit integer)");
    branch = rawBranch;
  }
  const name = optionalText(meta, 'counterpart_name', 'metadata.counterpart_name must be a string of at most 200 characters', /^[\s\S]{1,200}$/u);
  const street = optionalText(meta, 'counterpart_street', 'metadata.counterpart_street must be a string of at most 150 characters', /^[\s\S]{1,150}$/u);
  const number = optionalText(meta, 'counterpart_number', 'metadata.counterpart_number must be a string');
  const postal = optionalText(meta, 'counterpart_postal_code', 'metadata.counterpart_postal_code must be a string of at most 20 characters', /^[\s\S]{1,20}$/u);
  const city = optionalText(meta, 'counterpart_city', 'metadata.counterpart_city must be a string of at most 150 characters', /^[\s\S]{1,150}$/u);
  // AddressType: postalCode and city are its required parts.
  if ((street !== undefined || number !== undefined || postal !== undefined || city !== undefined) && (postal === undefined || city === undefined)) {
    throw badRequest('metadata.counterpart_postal_code and metadata.counterpart_city are required for a counterpart address');
  }
  // AADE knows a Greek counterpart by its AFM; a foreign one must be named, with its address.
  if (country !== 'GR' && (name === undefined || postal === undefined)) {
    throw badRequest('metadata.counterpart_name, counterpart_postal_code and counterpart_city are required for a foreign counterpart');
  }
  return {
    counterpart_vat_number: vat, counterpart_country: country, counterpart_branch: branch,
    ...(name !== undefined && { counterpart_name: name }),
    ...(street !== undefined && { counterpart_street: street }),
    ...(number !== undefined && { counterpart_number: number }),
    ...(postal !== undefined && { counterpart_postal_code: postal }),
    ...(city !== undefined && { counterpart_city: city }),
  };
}

const ZONE_TEXT = { GR: 'in Greece (country GR)', EU: 'in another EU member state', 'non-EU': 'outside the EU' } as const;
const TYPES_BY_ZONE = { GR: '1.1 or 2.1', EU: '1.2 or 2.2', 'non-EU': '1.3 or 2.3' } as const;

/**
 * AADE's counterpart rules a document is refused for after the sale, checked here:
 * - the invoice type fixes where the counterpart is (classification.ts counterpartZoneOf;
 *   errors 242, 243, 244);
 * - the counterpart is not the issuer (error 235 "Issuer must be different from counterpart").
 */
function checkCounterpart(invoiceType: string, counterpart: Metadata, ctx: TransactionContext): void {
  const country = String(counterpart.counterpart_country);
  const zone = counterpartZoneOf(invoiceType);
  if (zone !== undefined && zoneOfCountry(country) !== zone) {
    const actual = zoneOfCountry(country);
    throw badRequest(
      `invoice type ${invoiceType} needs a counterpart ${ZONE_TEXT[zone]} (AADE refuses it otherwise, myDATA error ${zone === 'GR' ? 242 : zone === 'EU' ? 243 : 244}); ` +
      `metadata.counterpart_country ${country} takes invoice type ${TYPES_BY_ZONE[actual]}`,
    );
  }
  const afm = configString(ctx.location.config, 'afm');
  if (country === 'GR' && afm !== undefined && counterpart.counterpart_vat_number === afm) {
    throw badRequest('metadata.counterpart_vat_number is the AFM of this location: a document cannot be addressed to its issuer (myDATA error 235)');
  }
}

/** A MARK: xs:long, positive. */
function readMark(meta: Metadata): string | undefined {
  const msg = 'metadata.correlated_mark must be a MARK (a positive integer of up to 19 digits)';
  const v = optionalText(meta, 'correlated_mark', msg, /^[1-9][0-9]{0,18}$/, true);
  if (v !== undefined && BigInt(v) > 9223372036854775807n) throw badRequest(msg);
  return v;
}

/**
 * myDATA's AmountType (SimpleTypes-v1.0.12.xsd: xs:decimal, totalDigits 15, fractionDigits
 * 2) holds at most 13 integer digits: 9,999,999,999,999.99 EUR. Every amount of the
 * document is at most the total, so a larger total would give an InvoicesDoc the schema
 * refuses; it is refused at creation.
 */
export const MYDATA_MAX_AMOUNT = 999_999_999_999_999;
export const MYDATA_AMOUNT_TOO_LARGE =
  'total_amount must be at most 9999999999999.99 EUR (999999999999999 minor units): myDATA amounts have at most 15 digits';

export function validateMyDataTransaction(tx: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  const meta = baseMetadata(tx, 'GR');
  if (tx.total_amount > MYDATA_MAX_AMOUNT) throw badRequest(MYDATA_AMOUNT_TOO_LARGE);
  const sale = tx.type === 'sale';

  let zeroRated = false;
  tx.items.forEach((line, i) => {
    if (vatCategoryOf(line.tax_rate) === undefined) throw new RateListError((rate) => `items[${i}].tax_rate must be a Greek VAT rate (${greekRatesText(rate)})`);
    if (line.tax_rate === 0) zeroRated = true;
  });

  const counterpart = readCounterpart(meta);
  const correlated_mark = readMark(meta);
  const invoice_type =
    optionalChoice(
      meta,
      'invoice_type',
      sale ? SALE_TYPES : CREDIT_TYPES,
      sale ? `metadata.invoice_type must be one of ${SALE_TYPES.join(', ')} for a sale` : `metadata.invoice_type must be one of ${CREDIT_TYPES.join(', ')} for refund and void transactions`,
    ) ?? defaultInvoiceType(sale, counterpart === undefined ? undefined : String(counterpart.counterpart_country), correlated_mark !== undefined);
  if (needsCounterpart(invoice_type) && counterpart === undefined) {
    throw badRequest(`metadata.counterpart_vat_number is required for invoice type ${invoice_type}`);
  }
  if (isRetail(invoice_type) && counterpart !== undefined) {
    throw badRequest('metadata.counterpart_* fields are not accepted on retail documents (invoice types 11.x)');
  }
  if (counterpart !== undefined) checkCounterpart(invoice_type, counterpart, ctx);
  // A credit note that corrects an invoice AADE holds names its MARK (5.1: AADE refuses it
  // without one, error 204); one whose original is not known, or has no MARK yet, is a
  // non-correlated 5.2 (or a retail 11.4, marked "correlation difficulty" by build.ts).
  if (invoice_type === '5.1' && correlated_mark === undefined) {
    throw badRequest('metadata.correlated_mark (the MARK of the corrected invoice) is required for invoice type 5.1; a credit note whose invoice has no MARK is a 5.2');
  }
  if (correlated_mark !== undefined && !(CORRELATABLE_TYPES as readonly string[]).includes(invoice_type)) {
    throw badRequest(sale
      ? 'metadata.correlated_mark is only for credit notes (refund or void, invoice type 5.1 or 11.4)'
      : 'metadata.correlated_mark is not accepted on a non-correlated credit note (invoice type 5.2): use 5.1');
  }

  const payment_type = optionalCode(meta, 'payment_type', 1, PAYMENT_TYPE_MAX, `metadata.payment_type must be a myDATA payment method code (1-${PAYMENT_TYPE_MAX})`);
  const vat_exemption_category = optionalCode(
    meta, 'vat_exemption_category', VAT_EXEMPTION_MIN, VAT_EXEMPTION_MAX,
    `metadata.vat_exemption_category must be a myDATA VAT exemption cause (${VAT_EXEMPTION_MIN}-${VAT_EXEMPTION_MAX})`,
  );
  if (zeroRated && vat_exemption_category === undefined) {
    throw badRequest('metadata.vat_exemption_category is required for a 0 % line (myDATA exemption cause 1-31)');
  }
  const income_classification_type = optionalChoice(meta, 'income_classification_type', INCOME_TYPES, 'metadata.income_classification_type must be a myDATA E3 income classification type (e.g. E3_561_003)');
  const income_classification_category = optionalChoice(meta, 'income_classification_category', INCOME_CATEGORIES, 'metadata.income_classification_category must be a myDATA income classification category (e.g. category1_1)');
  if (income_classification_type !== undefined || income_classification_category !== undefined) {
    // What build.ts writes: the named parts, the invoice type's defaults for the others.
    const d = defaultIncomeClassification(invoice_type);
    const wrong = incomeCombinationError(invoice_type, { type: income_classification_type ?? d.type, category: income_classification_category ?? d.category });
    if (wrong !== undefined) throw badRequest(`metadata.income_classification_type / _category: ${wrong}`);
  }

  // myDATA `series`: a string of at most 50 characters (Greek letters allowed).
  const given = optionalText(meta, 'series', 'metadata.series must be 1-50 characters without spaces', /^\S{1,50}$/u);
  const defaultSeries = configString(ctx.location.config, 'default_series');
  // Nor a chain key's separator (config.ts SERIES_SEPARATOR_INVALID), but for the location's
  // stored default_series, which may hold one from before the rule.
  if (given !== undefined && !keyPartAllowed(given, defaultSeries)) throw badRequest(SERIES_SEPARATOR_INVALID('metadata.series'));
  const series = given ?? defaultSeries;
  if (series === undefined) throw badRequest('metadata.series is required (the location has no default_series)');

  const out: Record<string, unknown> = { ...meta };
  for (const f of COUNTERPART_FIELDS) delete out[f];
  return {
    ...out,
    invoice_type,
    series,
    ...counterpart,
    ...(correlated_mark !== undefined && { correlated_mark }),
    ...(payment_type !== undefined && { payment_type }),
    ...(vat_exemption_category !== undefined && { vat_exemption_category }),
    ...(income_classification_type !== undefined && { income_classification_type }),
    ...(income_classification_category !== undefined && { income_classification_category }),
  };
}
