import { badRequest } from '../../core/errors.ts';
import type { TransactionDraft } from '../types.ts';
import { customerTaxId } from '../shared/metadata-fields.ts';
import { EU_MEMBER_STATES, EU_VAT_PREFIXES } from '../shared/vat-prefixes.ts';

/**
 * A foreign customer's identification in the Spanish records (VERI*FACTU and TicketBAI
 * `IDDestinatario/IDOtro`): which `IDType` and `CodigoPais` a tax id that is not a Spanish
 * NIF takes.
 *
 * The id types (AEAT list L7, the same in ticketbaiv1-2-2.xsd `IDTypeType` and
 * SuministroInformacion.xsd `PersonaFisicaJuridicaIDTypeType`): 02 NIF-IVA, the VAT number
 * of another EU member state (checked by AEAT against VIES); 04 "documento oficial de
 * identificación expedido por el país o territorio de residencia" (IDEnPaisResidencia), a
 * tax id of a country outside the EU. Until session 18 every foreign id was written 02, so
 * a US or Swiss customer's tax id was declared an EU VAT number (found by the session-18
 * document audit).
 */

export interface ForeignPartyId {
  /** ISO 3166-1 alpha-2: the given country or the one the VIES prefix names. */
  country: string;
  idType: '02' | '04';
}

/**
 * The two letters `customer_context.country` (or `country_code`, or `address.country` when
 * the address is an object, as other countries' guides send it) gives, upper case; null when
 * absent or not two letters.
 */
export function givenCountry(ctx: Record<string, unknown> | null | undefined): string | null {
  const address = ctx?.address;
  const nested = typeof address === 'object' && address !== null ? (address as Record<string, unknown>).country : undefined;
  for (const v of [ctx?.country_code, ctx?.country, nested]) {
    if (typeof v === 'string' && /^[A-Za-z]{2}$/.test(v.trim())) return v.trim().toUpperCase();
  }
  return null;
}

/**
 * The IDOtro identification of a foreign tax id: the given country, else the EU member state
 * its VIES prefix names; 02 (NIF-IVA) for an EU member state (and a Northern Ireland `XI`
 * number), 04 for any other country. `undefined` when nothing tells the country: the caller
 * asks for it (metadata validation) rather than declare a number of unknown origin.
 */
export function foreignPartyId(taxId: string, country: string | null): ForeignPartyId | undefined {
  const compact = taxId.toUpperCase().replace(/[\s.-]/g, '');
  const prefix = compact.slice(0, 2);
  const fromPrefix = Object.hasOwn(EU_VAT_PREFIXES, prefix) && prefix !== 'ES' ? EU_VAT_PREFIXES[prefix]! : null;
  const resolved = country ?? fromPrefix;
  if (resolved === null) return undefined;
  const vies = EU_MEMBER_STATES.has(resolved) || (resolved === 'GB' && prefix === 'XI');
  return { country: resolved, idType: vies ? '02' : '04' };
}

/** The 400 of a customer tax id that is neither a Spanish NIF nor an EU VAT number, without a country. */
export const CUSTOMER_COUNTRY_REQUIRED =
  'customer_context.country (ISO 3166-1 alpha-2) is required when the customer tax id is neither a Spanish NIF nor an EU VAT number with its country prefix';

/**
 * Validation (VERI*FACTU, TicketBAI): a customer tax id that the system does not take as a
 * Spanish NIF (`isSpanish`, with or without the `ES` prefix) needs a country, given or read
 * from an EU VAT prefix, so the record can say which kind of id it is.
 */
export function checkForeignCustomer(tx: TransactionDraft, isSpanish: (id: string) => boolean): void {
  const taxId = customerTaxId(tx);
  if (taxId === undefined) return;
  const country = givenCountry(tx.customer_context);
  const compact = taxId.toUpperCase().replace(/[\s.-]/g, '');
  const spanish = isSpanish(compact) || (compact.startsWith('ES') && isSpanish(compact.slice(2)));
  if ((country === null || country === 'ES') && spanish) return;
  if (foreignPartyId(taxId, country) === undefined) throw badRequest(CUSTOMER_COUNTRY_REQUIRED);
}
