/**
 * SII transaction rules: the spec's "Spain SII" metadata table, with its defaults.
 *
 * SII reports invoices that the merchant issues (it numbers nothing itself), so the
 * invoice number defaults to the transaction id (applied by the core) and the invoice
 * type follows the transaction: F1 standard (names the customer), F2 simplified, R1 for
 * a refund, R5 for one that corrects a simplified invoice (RD 1619/2012 art. 15;
 * `TipoFactura` of SuministroInformacion.xsd).
 *
 * A `void` is not an invoice: it withdraws one already reported. The spec: "Spain SII
 * voiding submits a cancellation record to the authority" — the baja
 * (`RegistroLRBajaExpedidas`), naming the voided invoice by `original_invoice_number` and
 * `original_issue_date` (both required), in the period of that invoice.
 *
 * `operation_date` (DD-MM-YYYY): the day of the operation when it is not the invoice's issue
 * date (`issue_date`, else today), written as `FacturaExpedida/FechaOperacion`
 * (../es/operation-date.ts). A void's baja carries none, so a void takes none.
 */
import { badRequest } from '../../core/errors.ts';
import type { TransactionContext, TransactionDraft } from '../types.ts';
import { dmyDate, isDmyDate, localDate, parseDmy } from '../shared/dates.ts';
import {
  baseMetadata,
  optionalBoolean,
  optionalChoice,
  optionalText,
  withoutUndefined,
  type Metadata,
} from '../shared/metadata-fields.ts';
import { isValidSpanishNif } from '../es/nif.ts';
import { requireLiveTaxId } from '../es/common.ts';
import { readExemptionCode } from '../es/exemption.ts';
import { TAX_NAMES, checkTaxRates, taxOf, type SpanishTax } from '../es/tax.ts';
import { breakdownCount, checkSurcharges } from '../es/surcharge.ts';
import { regimeNotInSii, vatRegimeOf } from '../es/regime.ts';
import { checkSimplifiedLimit } from '../es/invoice.ts';
import { readReplacedIds } from '../es/replacement.ts';
import { readOperationDate } from '../es/operation-date.ts';

/** Issued-invoice keys offered by the spec (ClaveRegimenEspecialOTrascendencia, FORMATS §3). */
export const REGIME_KEYS = ['01', '02', '03', '05', '07', '09'] as const;

/**
 * IDOtro/IDType (AEAT L4 list): 02 NIF-IVA (EU VAT number), 03 passport, 04 official id
 * document of the country of residence, 05 residence certificate, 06 other document,
 * 07 not registered. The spec names 02 and "04 passport"; 04 is in fact the official id
 * document and passports are 03, so the whole list is accepted.
 */
export const ID_TYPES = ['02', '03', '04', '05', '06', '07'] as const;

const DMY_MESSAGE = (field: string) => `metadata.${field} must be a date in the form DD-MM-YYYY`;
const F1_MESSAGE =
  'counterparty_nif and counterparty_name are required in metadata for SII standard invoices (F1); set simplified: true for an F2';
const R1_PARTY_MESSAGE =
  'counterparty_nif and counterparty_name are required in metadata for SII credit notes (R1); set simplified: true for an R5';
export const F3_PARTY_MESSAGE =
  'counterparty_nif and counterparty_name are required in metadata for an SII invoice replacing simplified ones (F3, metadata.replaces_simplified)';
export const F3_NOT_SIMPLIFIED = 'metadata.simplified cannot be true with metadata.replaces_simplified: the invoice replacing simplified ones is a full one (F3)';
export const SII_SIMPLIFIED_TOO_LARGE =
  'an SII simplified invoice (F2) cannot exceed 3,000.00 EUR (RD 1619/2012 art. 4): leave simplified out and give counterparty_nif and counterparty_name for a full invoice (F1)';
const R1_ORIGINAL_MESSAGE = 'original_invoice_number and original_issue_date are required in metadata for SII credit notes (R1)';
const VOID_ORIGINAL_MESSAGE = 'original_invoice_number and original_issue_date are required in metadata for an SII void (the baja names the invoice it withdraws)';

export const OPERATION_DATE_LATER =
  "metadata.operation_date must not be later than the invoice's issue date (metadata.issue_date, else today): the invoice is issued on or after the day of its operation (RD 1619/2012 art. 6.1.f)";
export const OPERATION_DATE_ON_VOID =
  'metadata.operation_date is not taken on an SII void: its baja (RegistroLRBajaExpedidas) names the invoice it withdraws and carries no FechaOperacion';

/** `NumSerieFacturaEmisor` is at most 60 characters. */
const NUMBER = /^[\x20-\x7E]{1,60}$/;
const SERIES = /^[\x21-\x7E]{1,20}$/;

function readDmy(meta: Metadata, field: string): string | undefined {
  return optionalText(meta, field, DMY_MESSAGE(field), undefined);
}

export function validateSiiTransaction(tx: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  // A live record names the holder of the books by the location's NIF, never the placeholder.
  requireLiveTaxId(ctx, 'sii');
  const meta = baseMetadata(tx, 'ES');

  const invoice_number = optionalText(meta, 'invoice_number', 'metadata.invoice_number must be 1-60 printable characters', NUMBER, true);
  const series = optionalText(meta, 'series', 'metadata.series must be 1-20 printable characters without spaces', SERIES);
  // Both are written together in `NumSerieFacturaEmisor` (sii:TextoIDFacturaType, max 60).
  if (series !== undefined && invoice_number !== undefined && series.length + invoice_number.length > 60) {
    throw badRequest('metadata.series and metadata.invoice_number together must be at most 60 characters');
  }
  checkRates(tx);
  // The location's tax (../es/tax.ts): an IGIC or IPSI sale is reported as not subject to
  // IVA (xml.ts), but its lines are still that tax's, at its rates.
  const tax = taxOf(ctx.location);
  // The issuer's regime (../es/regime.ts): the SII keys have none for either special one;
  // refused at registration, this guards a hand-edited config.
  const vatRegime = vatRegimeOf(ctx.location);
  if (vatRegime !== 'general') throw badRequest(regimeNotInSii(vatRegime));
  // A void withdraws an invoice already reported (the baja carries no lines), so its
  // lines' rates do not reach the record; every invoice's must be its tax's (AEAT 1124).
  if (tx.type !== 'void') checkTaxRates(tx, tax);

  const issue_date = readDmy(meta, 'issue_date') ?? dmyDate(localDate(ctx.now, 'ES'));
  if (!isDmyDate(issue_date)) throw badRequest(DMY_MESSAGE('issue_date'));

  const original_invoice_number = optionalText(
    meta,
    'original_invoice_number',
    'metadata.original_invoice_number must be 1-60 printable characters',
    NUMBER,
    true,
  );
  const original_issue_date = readDmy(meta, 'original_issue_date');
  if (original_issue_date !== undefined && !isDmyDate(original_issue_date)) throw badRequest(DMY_MESSAGE('original_issue_date'));
  const voiding = tx.type === 'void';
  if (voiding && (original_invoice_number === undefined || original_issue_date === undefined)) throw badRequest(VOID_ORIGINAL_MESSAGE);
  // FechaOperacion is FacturaExpedida's: a baja would silently lose it.
  if (voiding && meta.operation_date !== undefined && meta.operation_date !== null) throw badRequest(OPERATION_DATE_ON_VOID);
  // The operation's own day, not after the invoice's FechaExpedicionFacturaEmisor (../es/operation-date.ts).
  const operation_date = voiding ? undefined : readOperationDate(meta, issue_date, OPERATION_DATE_LATER);

  // Exercise and period are those of the invoice: today's unless an issue date was given
  // (a void's: those of the invoice it withdraws).
  const issued = parseDmy(voiding ? original_issue_date! : issue_date);

  const description =
    optionalText(meta, 'description', 'metadata.description must be a string of at most 500 characters', /^[\s\S]{1,500}$/) ??
    autoDescription(tx);
  const regime_key = tax === 'iva'
    ? optionalChoice(meta, 'regime_key', REGIME_KEYS, 'metadata.regime_key must be one of 01, 02, 03, 05, 07, 09') ?? '01'
    : readOtherTaxRegimeKey(meta, tax);
  const exercise = readExercise(meta) ?? issued.year;
  const period = readPeriod(meta) ?? issued.month;
  const simplified = optionalBoolean(meta, 'simplified') ?? false;
  const book_type = optionalChoice(meta, 'book_type', ['issued', 'received'] as const, 'metadata.book_type must be issued or received') ?? 'issued';

  // A full invoice in place of simplified ones (F3) names them by transaction id (../es/replacement.ts).
  const replaces_simplified = readReplacedIds(tx, meta);
  if (replaces_simplified !== undefined && simplified) throw badRequest(F3_NOT_SIMPLIFIED);
  const invoice_type = voiding ? undefined : replaces_simplified !== undefined ? 'F3' : tx.type === 'sale' ? (simplified ? 'F2' : 'F1') : simplified ? 'R5' : 'R1';
  // RD 1619/2012 art. 4: no simplified invoice above 3,000 EUR (../es/invoice.ts).
  if (invoice_type === 'F2') checkSimplifiedLimit(tx, SII_SIMPLIFIED_TOO_LARGE);

  const party = readCounterparty(meta);
  if (invoice_type === 'F1' || invoice_type === 'F3' || invoice_type === 'R1') {
    const identified = party.counterparty_nif !== undefined || party.counterparty_id !== undefined;
    if (!identified || party.counterparty_name === undefined) {
      throw badRequest(invoice_type === 'F1' ? F1_MESSAGE : invoice_type === 'F3' ? F3_PARTY_MESSAGE : R1_PARTY_MESSAGE);
    }
  }

  if (invoice_type === 'R1' && (original_invoice_number === undefined || original_issue_date === undefined)) {
    throw badRequest(R1_ORIGINAL_MESSAGE);
  }

  if (tax !== 'iva' && meta.exemption_code !== undefined && meta.exemption_code !== null) throw badRequest(exemptionNotReported(tax));
  const exemptionCode = voiding ? undefined : readExemptionCode(tx, meta);
  // Recargo de equivalencia (../es/surcharge.ts), in DetalleIVA beside the VAT.
  if (!voiding) checkSurcharges(tx, tax, exemptionCode);

  return withoutUndefined({
    ...meta,
    invoice_number,
    series,
    issue_date,
    description,
    regime_key,
    exercise,
    period,
    simplified,
    book_type,
    invoice_type,
    ...party,
    original_invoice_number,
    original_issue_date,
    exemption_code: exemptionCode,
    replaces_simplified,
    operation_date,
  });
}

/** ClaveRegimenEspecialOTrascendencia 08: "operaciones sujetas al IPSI/IGIC" (FORMATS §3; xml.ts). */
export const OTHER_TAX_REGIME_KEY = '08';

export const otherTaxRegimeKeyInvalid = (tax: SpanishTax): string =>
  `metadata.regime_key must be 08 at this location: it charges ${TAX_NAMES[tax]} (country_config.tax), and the SII book reports its sales as operations subject to IPSI/IGIC (key 08), not subject to IVA`;

/** An IGIC or IPSI location's key: 08, the only one its sales take (given or not). */
function readOtherTaxRegimeKey(meta: Metadata, tax: SpanishTax): string {
  const given = meta.regime_key;
  if (given === undefined || given === null) return OTHER_TAX_REGIME_KEY;
  if (given !== OTHER_TAX_REGIME_KEY) throw badRequest(otherTaxRegimeKeyInvalid(tax));
  return given;
}

/**
 * The SII book reports an IGIC or IPSI sale whole as not subject to IVA (xml.ts): it has no
 * exempt breakdown, and the IVA causes (E1-E6, LIVA arts. 20-25) are not the sale's.
 */
export const exemptionNotReported = (tax: SpanishTax): string =>
  `metadata.exemption_code is not taken at this location: it charges ${TAX_NAMES[tax]} (country_config.tax), and the SII book reports the whole sale as not subject to IVA (key 08), with no exemption cause`;

/**
 * `DesgloseIVA` holds at most 6 `DetalleIVA` (one per rate and surcharge) and `TipoImpositivo` has two
 * decimals (sii:Tipo2.2Type); a rate that cannot be written so is refused here rather
 * than rounded in the record.
 */
function checkRates(tx: TransactionDraft): void {
  tx.items.forEach((l, i) => {
    if (Math.abs(l.tax_rate * 100 - Math.round(l.tax_rate * 100)) > 1e-9) {
      throw badRequest(`items[${i}].tax_rate must have at most 2 decimals for SII`);
    }
  });
  if (breakdownCount(tx.items) > 6) {
    throw badRequest('SII records take at most 6 different tax rates per invoice');
  }
}

/** `DescripcionOperacion` is mandatory (max 500): the line descriptions, when not given (the receipt prints those already: receipt.ts). */
export function autoDescription(tx: TransactionDraft): string {
  const text = tx.items.map((l) => l.description.trim()).filter((d) => d !== '').join(', ');
  return (text === '' ? 'Sale' : text).slice(0, 500);
}

function readExercise(meta: Metadata): string | undefined {
  return optionalText(meta, 'exercise', 'metadata.exercise must be a 4-digit year', /^\d{4}$/, true);
}

/** `Periodo`: the month 01-12, or 0A for annual filers. */
function readPeriod(meta: Metadata): string | undefined {
  const raw = meta.period;
  const value = typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 1 && raw <= 12 ? String(raw).padStart(2, '0') : raw;
  return optionalText({ period: value }, 'period', 'metadata.period must be 01-12 or 0A', /^(0[1-9]|1[0-2]|0A)$/);
}

function readCounterparty(meta: Metadata) {
  const counterparty_nif = optionalText(meta, 'counterparty_nif', 'metadata.counterparty_nif must be a valid Spanish NIF');
  if (counterparty_nif !== undefined && !isValidSpanishNif(counterparty_nif)) {
    throw badRequest('metadata.counterparty_nif must be a valid Spanish NIF');
  }
  // `NombreRazon`: at most 120 characters.
  const counterparty_name = optionalText(
    meta,
    'counterparty_name',
    'metadata.counterparty_name must be a string of at most 120 characters',
    /^[\s\S]{1,120}$/,
  );
  const counterparty_id_type = optionalChoice(
    meta,
    'counterparty_id_type',
    ID_TYPES,
    'metadata.counterparty_id_type must be one of 02, 03, 04, 05, 06, 07',
  );
  const counterparty_country = optionalText(
    meta,
    'counterparty_country',
    'metadata.counterparty_country must be an ISO 3166-1 alpha-2 code',
    /^[A-Z]{2}$/,
  );
  const counterparty_id = optionalText(meta, 'counterparty_id', 'metadata.counterparty_id must be 1-20 characters', /^[\x21-\x7E]{1,20}$/);
  // A foreign party is named by IDOtro: the three fields together, or none of them.
  const foreign = [counterparty_id_type, counterparty_country, counterparty_id];
  if (foreign.some((f) => f !== undefined) && foreign.some((f) => f === undefined)) {
    throw badRequest('metadata.counterparty_id_type, counterparty_country and counterparty_id must be given together for a foreign party');
  }
  return { counterparty_nif, counterparty_name, counterparty_id_type, counterparty_country, counterparty_id };
}
