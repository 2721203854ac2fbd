/**
 * What a SAF-T (PT) sales document says about a transaction, computed the same way by the
 * document builder (build.ts) and the monthly file (saft-file.ts): the customer, the
 * products, the tax of each line, the payment. Pure.
 */
import type { PaymentMethod, TransactionDraft, TxLine } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { customerTaxId } from '../shared/metadata-fields.ts';
import { taxCodeOf, taxDescriptionOf, type TaxCode, type TaxRegion } from './tax.ts';
import { EU_VAT_PREFIXES } from '../shared/vat-prefixes.ts';
import { SAFT_COUNTRIES } from './countries.ts';

/** A final consumer's NIF on SAF-T PT documents and QR codes. */
export const FINAL_CONSUMER_NIF = '999999990';
/** SAF-T's word for "not known" in addresses and countries of customers. */
export const UNKNOWN = 'Desconhecido';

/** The SAF-T namespace of version 1.04_01. */
export const NS_SAFT = 'urn:OECD:StandardAuditFile-Tax:PT_1.04_01';

export interface SaftCustomer {
  /** CustomerID: the NIF for an identified customer; `999999990` for the final consumer. */
  id: string;
  taxId: string;
  name: string;
  addressDetail: string;
  city: string;
  postalCode: string;
  /** ISO 3166 alpha-2, or `Desconhecido`. */
  country: string;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
const clip = (s: string, max: number): string => (s.length > max ? s.slice(0, max) : s);

/** The prefixes a customer's tax id may start with: the EU's (shared/vat-prefixes.ts) and the UK's `GB`. */
const PREFIX_COUNTRY: Readonly<Record<string, string>> = { ...EU_VAT_PREFIXES, GB: 'GB' };

/**
 * A customer's tax id split from its VAT country prefix (`PT503504564` → `503504564`, PT;
 * `DE123456789` → `123456789`, DE): SAF-T (PT) CustomerTaxID "deve ser indicado sem o
 * prefixo do país" (Portaria 302/2016, SAF-T (PT) structure, field 2.2.4), and QR field B
 * repeats it. Only a known prefix followed by a code holding a digit is taken as one.
 */
export function splitVatPrefix(raw: string): { taxId: string; prefixCountry: string | undefined } {
  const compact = raw.replace(/[\s.-]/g, '').toUpperCase();
  const m = /^([A-Z]{2})([0-9A-Z]+)$/.exec(compact);
  const country = m ? PREFIX_COUNTRY[m[1]!] : undefined;
  if (!m || country === undefined || !/[0-9]/.test(m[2]!)) return { taxId: raw, prefixCountry: undefined };
  return { taxId: m[2]!, prefixCountry: country };
}

/**
 * The customer of a document, from `customer_context`: `nif` or `tax_id` (with or without
 * its VAT country prefix, which CustomerTaxID leaves out), `name` or `legal_name`, the
 * address as flat fields (`address` text, `city`, `postal_code`, `country`, 2 letters) or
 * as an object `address` {`street`, `city`, `postal_code`, `country`} (the form the other
 * countries read). The country: the one given, else the tax id's prefix, else PT for a
 * 9-digit NIF. Without a tax id: the final consumer (`Consumidor final`, address
 * unknown), as AT asks.
 */
export function customerOf(tx: TransactionDraft): SaftCustomer {
  const nif = customerTaxId(tx);
  const { taxId: bare, prefixCountry } = splitVatPrefix(nif ?? '');
  // No tax id, or the final consumer's own (999999990, given as a NIF): the generic
  // customer, always with the same details. Written with a name or an address of its own,
  // the Customer table of the month's file took whichever document came first.
  if (nif === undefined || (bare === FINAL_CONSUMER_NIF && (prefixCountry ?? 'PT') === 'PT')) {
    return { id: FINAL_CONSUMER_NIF, taxId: FINAL_CONSUMER_NIF, name: 'Consumidor final', addressDetail: UNKNOWN, city: UNKNOWN, postalCode: UNKNOWN, country: UNKNOWN };
  }
  const ctx = tx.customer_context ?? {};
  const address = addressObjectOf(tx);
  const given = givenCountryOf(tx);
  const taxId = clip(bare, 30);
  // A country outside SAF-T's list (refused at the request, metadata.ts) is not written:
  // it would make the month's file invalid.
  const country =
    given !== undefined && SAFT_COUNTRIES.has(given) ? given : prefixCountry ?? (/^[0-9]{9}$/.test(taxId) ? 'PT' : UNKNOWN);
  return {
    // CustomerID stays the id as given for a foreign customer (two countries may share a
    // bare number); a Portuguese customer is its NIF, prefixed or not.
    id: country === 'PT' && /^[0-9]{9}$/.test(taxId) ? taxId : clip(nif, 30),
    taxId,
    name: clip(text(ctx.name) ?? text(ctx.legal_name) ?? UNKNOWN, 100),
    addressDetail: clip(text(ctx.address) ?? text(address.street) ?? text(address.address_detail) ?? UNKNOWN, 210),
    city: clip(text(ctx.city) ?? text(address.city) ?? UNKNOWN, 50),
    postalCode: clip(text(ctx.postal_code) ?? text(address.postal_code) ?? UNKNOWN, 20),
    country,
  };
}

/** `customer_context.address` when it is an object (the form the other countries read). */
const addressObjectOf = (tx: TransactionDraft): Record<string, unknown> => {
  const a = tx.customer_context?.address;
  return a !== null && typeof a === 'object' && !Array.isArray(a) ? (a as Record<string, unknown>) : {};
};

/** The customer's country as the request gives it (`country`, or `address.country`), upper case. */
export function givenCountryOf(tx: TransactionDraft): string | undefined {
  const ctx = tx.customer_context ?? {};
  return (text(ctx.country) ?? text(addressObjectOf(tx).country))?.toUpperCase();
}

/**
 * The customer's country as QR field C writes it: the SAF-T Country of the customer (AT QR
 * spec v1.0, field C, at most 12 characters: room for `Desconhecido`), `PT` for the final
 * consumer as AT's example 2 writes it. A foreign customer whose country is not known is
 * `Desconhecido`, as in the SAF-T: writing PT said the buyer was Portuguese.
 */
export const qrCountryOf = (c: SaftCustomer): string => (c.id === FINAL_CONSUMER_NIF ? 'PT' : c.country);

/**
 * Whether the buyer is a taxable person (sujeito passivo) as far as its tax id tells: a
 * Portuguese NIF of an entity (companies 5, public bodies 6, 7x, 8, 9x: every first digit
 * but the natural persons' 1, 2, 3 and 45) or a tax id with an EU VAT prefix (VIES form:
 * a VAT registration). A natural person's NIF, a foreign id without a prefix and no tax id
 * at all are not taken as one: the buyer may be a final consumer. Used for the simplified
 * invoice limit (CIVA art. 40 n.º 1: 1,000 EUR only "a adquirentes que não sejam sujeitos
 * passivos", 100 EUR otherwise) and the buyer's name on invoices (CIVA art. 36 n.º 5 a).
 */
export function buyerIsTaxablePerson(tx: TransactionDraft): boolean {
  const raw = customerTaxId(tx);
  if (raw === undefined) return false;
  const { taxId, prefixCountry } = splitVatPrefix(raw);
  if (taxId === FINAL_CONSUMER_NIF) return false;
  if (prefixCountry !== undefined && prefixCountry !== 'PT') return true;
  const c = customerOf(tx);
  return c.country === 'PT' && /^[0-9]{9}$/.test(c.taxId) && !/^(?:[123]|45)/.test(c.taxId);
}

export interface SaftProduct {
  /** ProductCode (at most 60): the line's description, which is all a transaction says of it. */
  code: string;
  /** ProductDescription (2 to 200 characters). */
  description: string;
}

export function productOf(line: TxLine): SaftProduct {
  const d = line.description.trim().replace(/\s+/g, ' ');
  const description = d.length >= 2 ? d : `Artigo ${d}`.trim();
  return { code: clip(description, 60), description: clip(description, 200) };
}

export interface SaftTax {
  /** TaxCode in the line's fiscal space (tax.ts): RED, INT, NOR, ISE exempt; OUT for any other rate. */
  code: TaxCode;
  /** TaxPercentage as written (`23`, `5.5`). */
  percentage: string;
  /** The TaxTable description. */
  description: string;
  /** TaxCountryRegion: the fiscal space. */
  region: TaxRegion;
}

/** The line's VAT in its fiscal space (mainland PT, Azores PT-AC, Madeira PT-MA: tax.ts). */
export function taxOf(rate: number, region: TaxRegion = 'PT'): SaftTax {
  const percentage = percentText(rate);
  const code = taxCodeOf(rate, region);
  return { code, percentage, description: taxDescriptionOf(code, percentage), region };
}

/** A percentage without exponent or trailing zeros: 23 → `23`, 5.5 → `5.5`. */
function percentText(rate: number): string {
  const s = rate.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
  return s === '-0' ? '0' : s;
}

/**
 * Money in minor units as SAF-T writes it. Integers (cents) give 2 decimals; a fractional
 * number of cents (a unit price of 0.125 €) keeps its digits, up to 6.
 */
export function money(minor: number): string {
  if (Number.isSafeInteger(minor)) return decimal(minor);
  const s = (minor / 100).toFixed(8).replace(/0+$/, '');
  const [units = '0', frac = ''] = s.split('.');
  return `${units}.${frac.padEnd(2, '0').slice(0, 8)}`;
}

/** A quantity as written (no exponent, no trailing zeros). */
export const quantityText = (q: number): string => percentText(q);

/** SAF-T PaymentMechanism for the payment method: CC card, NU cash, TB transfer, OU other. */
export const PAYMENT_MECHANISM: Readonly<Record<PaymentMethod, string>> = { card: 'CC', cash: 'NU', transfer: 'TB', other: 'OU' };
