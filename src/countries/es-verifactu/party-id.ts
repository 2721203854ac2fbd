/**
 * How a VERI*FACTU record identifies a party (PersonaFisicaJuridicaType: `NIF`, or `IDOtro`
 * with CodigoPais, IDType, ID), and what AEAT refuses of the customer's (IDDestinatario).
 */
import { badRequest } from '../../core/errors.ts';
import type { TransactionDraft } from '../types.ts';
import { customerTaxId } from '../shared/metadata-fields.ts';
import { isValidSpanishNif } from '../es/nif.ts';
import { foreignPartyId, givenCountry } from '../es/party.ts';
import { EU_MEMBER_STATES, EU_VAT_PREFIXES } from '../shared/vat-prefixes.ts';
import type { Party } from './xml.ts';

/** Truncates to `max` characters (code points, as XSD maxLength counts them). */
const clip = (text: string, max: number): string => {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
};

/**
 * A party's identification: a Spanish NIF goes in `NIF` (NIFType, 9 characters);
 * anything else (a foreign VAT number) in `IDOtro` with IDType 02, NIF-IVA (IDOtroType;
 * AEAT 1111: CodigoPais may be left out only for 02, the country being the prefix).
 */
export function partyId(taxId: string): Party['id'] {
  const id = taxId.trim().toUpperCase();
  if (isValidSpanishNif(id)) return { nif: id };
  if (/^ES/.test(id) && isValidSpanishNif(id.slice(2))) return { nif: id.slice(2) };
  return { idOtro: { idType: '02', id: clip(id, 20) } };
}

/**
 * The customer's identification: a Spanish NIF as `partyId` does (unless another country is
 * given); a foreign id by IDOtro with the type its country calls for (../es/party.ts): 02
 * NIF-IVA for an EU VAT number, in its VIES form (`euVatNumber`: CodigoPais left out, the
 * prefix says it: AEAT 1111), 04 with
 * CodigoPais for a tax id of a country outside the EU. A stored transaction from before the
 * country was asked for keeps the old 02.
 */
export function customerId(taxId: string, country: string | null): Party['id'] {
  const id = taxId.trim().toUpperCase();
  if (country === null || country === 'ES') {
    // Written as the NIF it is (NIFType, 9 characters): without the separators a request may
    // carry (`B-12345674`), which ../es/party.ts already reads as Spanish; they went out in
    // IDOtro 02 before, which AEAT refuses.
    const spanish = partyId(id.replace(/[\s.-]/g, ''));
    if ('nif' in spanish) return spanish;
  }
  const foreign = foreignPartyId(id, country);
  if (foreign?.idType === '04') return { idOtro: { codigoPais: foreign.country, idType: '04', id: clip(id, 20) } };
  if (foreign === undefined) return { idOtro: { idType: '02', id: clip(id, 20) } };
  const vies = euVatNumber(id, foreign.country);
  return { idOtro: { idType: '02', id: clip('id' in vies ? vies.id : id, 20) } };
}

/** The VIES prefix of an EU member state (Greece's is EL); none for GB (only XI numbers are 02). */
function viesPrefixOf(country: string): string | undefined {
  if (!EU_MEMBER_STATES.has(country)) return undefined;
  return Object.keys(EU_VAT_PREFIXES).find((prefix) => EU_VAT_PREFIXES[prefix] === country);
}

/**
 * An EU VAT number as AEAT reads an IDOtro 02 (NIF-IVA) without CodigoPais: the VIES form,
 * the issuing member state's prefix followed by the national number, without separators.
 * Every VAT number carries that prefix (Directive 2006/112/EC art. 215: "Each individual VAT
 * identification number shall have a prefix in accordance with ISO code 3166 — alpha 2 — by
 * which the Member State of issue may be identified"; Greece uses EL), and AEAT takes the
 * country of an 02 from it (1111: CodigoPais may be left out only for 02; 1122: CodigoPais
 * must match the identifier's first two characters) to check the number against VIES. A
 * number given without it (customer_context.country FR, tax_id 12345678901) went out as
 * `12345678901`, which names no country: it gets the prefix of the country given. Greece's
 * number written with GR gets EL. Two leading letters that are another member state's prefix
 * are not guessed at: `foreignPrefix` (checkRecipient refuses it).
 */
export function euVatNumber(taxId: string, country: string): { id: string } | { foreignPrefix: string } {
  const compact = taxId.toUpperCase().replace(/[\s.-]/g, '');
  const own = viesPrefixOf(country);
  if (own === undefined || compact.startsWith(own)) return { id: compact };
  const lead = compact.slice(0, 2);
  if (own === 'EL' && lead === 'GR') return { id: `EL${compact.slice(2)}` };
  if (Object.hasOwn(EU_VAT_PREFIXES, lead)) return { foreignPrefix: lead };
  return { id: `${own}${compact}` };
}

export const vatPrefixMismatch = (country: string, prefix: string): string =>
  `customer_context.country ${country} does not match the VAT prefix ${prefix} of the customer's tax id: an EU VAT number starts with the prefix of the member state that issued it (${viesPrefixOf(country) ?? country} for ${country}); give that country, or the number with its own prefix`;

/**
 * The shapes of a Spanish NIF (../es/nif.ts): DNI, NIE, K/L/M, and a legal entity's; with or
 * without the `ES` VAT prefix. An id of this shape whose control character is wrong is a
 * mistyped Spanish NIF, not a foreign id.
 */
const SPANISH_SHAPE = /^(?:ES)?(?:[0-9]{8}[A-Z]|[XYZKLM][0-9]{7}[A-Z]|[ABCDEFGHJNPQRSUVW][0-9]{7}[0-9A-J])$/;

export const CUSTOMER_NIF_INVALID =
  "the customer's tax id (customer_context nif or tax_id) is not a valid Spanish NIF: its control character does not match (AEAT refuses a recipient NIF it cannot identify, error 1193); give customer_context.country for a foreign tax id";
export const CUSTOMER_IS_ISSUER =
  "the customer's tax id is the issuer's own NIF (the location tax_id): AEAT refuses an invoice whose recipient is its issuer (error 1193)";
export const r3NeedsNif = (type: string): string =>
  `metadata.invoice_type ${type} needs a customer identified by a Spanish NIF: AEAT takes no foreign identification on an ${type} (error 1191)`;
export const R2_NEEDS_NIF_OR_VAT =
  'metadata.invoice_type R2 needs a customer identified by a Spanish NIF or an EU VAT number: AEAT takes no other identification on an R2 (error 1192)';

/**
 * Validation, at creation and preview, of the recipient the record will name (F1, F3, R1-R4):
 * - a Spanish NIF must be one (AEAT 1193, "el NIF debe estar identificado"): an id of a
 *   Spanish NIF's shape with a wrong control character, or any id the customer's country `ES`
 *   says is Spanish, that is not a valid NIF would go out as IDOtro 02 without a country,
 *   which AEAT refuses (and IDOtro with CodigoPais ES takes only a passport, 03, or "no
 *   censado", 07: AEAT 1232-1234, which the request cannot tell us);
 * - it is not the issuer's own NIF (1193: "y ser distinto del NIF ObligadoEmision");
 * - an R3 (art. 80.4 LIVA, bad debts) names its customer by NIF only (1191: "Si TipoFactura
 *   es R3 sólo se admitirá NIF o IDType = No Censado (07)"), an R2 (art. 80.3, insolvency) by
 *   NIF or NIF-IVA (1192: "… NIF o IDType = No Censado (07) o NIF-IVA (02)").
 * A foreign id without a country is ../es/party.ts' `checkForeignCustomer`, run after this.
 */
export function checkRecipient(tx: TransactionDraft, invoiceType: string, issuerNif: string | null): void {
  const taxId = customerTaxId(tx);
  if (taxId === undefined) return;
  const country = givenCountry(tx.customer_context);
  const compact = taxId.toUpperCase().replace(/[\s.-]/g, '');
  const id = customerId(taxId, country);
  const spanish = 'nif' in partyId(compact);
  if (!spanish && (country === 'ES' || (country === null && SPANISH_SHAPE.test(compact)))) throw badRequest(CUSTOMER_NIF_INVALID);
  const issuer = issuerNif?.trim().toUpperCase().replace(/^ES/, '');
  if ('nif' in id && issuer !== undefined && id.nif === issuer) throw badRequest(CUSTOMER_IS_ISSUER);
  // An EU VAT number whose leading letters name another member state than the country given:
  // which one issued it cannot be told (euVatNumber).
  const foreign = 'nif' in id ? undefined : foreignPartyId(taxId, country);
  if (foreign?.idType === '02' && country !== null) {
    const vies = euVatNumber(taxId, foreign.country);
    if ('foreignPrefix' in vies) throw badRequest(vatPrefixMismatch(country, vies.foreignPrefix));
  }
  if (invoiceType === 'R3' && !('nif' in id)) throw badRequest(r3NeedsNif('R3'));
  if (invoiceType === 'R2' && !('nif' in id) && id.idOtro.idType !== '02') throw badRequest(R2_NEEDS_NIF_OR_VAT);
}
