/**
 * Which indirect tax a Spanish location charges, and the rates of each.
 *
 * Spain has three: IVA (Ley 37/1992) in the peninsula and the Balearic Islands (and, under
 * the Basque and Navarre Normas Forales, at the same rates); IGIC (Ley 20/1991) in the
 * Canary Islands; IPSI (Ley 8/1991) in Ceuta and Melilla, neither of which is IVA
 * territory (LIVA art. 3). A shop charges the tax of where it sells, on every sale, so the
 * tax is the location's: `country_config.tax`, `iva` (the default: every location stored
 * before the field existed), `igic` or `ipsi`.
 *
 * VERI*FACTU carries the other two (DetalleDesglose `Impuesto`: 01 IVA, 02 IPSI, 03
 * IGIC; SuministroInformacion.xsd `ImpuestoType`). The SII books are IVA books, where an
 * IGIC or IPSI sale is an operation not subject to IVA (regime key 08, the NoSujeta
 * breakdown: ../es-sii/xml.ts). TicketBAI is Basque and IVA only: it refuses a location of
 * another tax.
 */
import { badRequest, type ValidationError } from '../../core/errors.ts';
import { RateListError } from '../../core/transaction-request.ts';
import type { LocationForFiscal, TransactionDraft } from '../types.ts';
import { configString, type ConfigObject } from '../shared/config-fields.ts';
import type { SpainSystem } from './common.ts';

export const SPANISH_TAXES = ['iva', 'igic', 'ipsi'] as const;
export type SpanishTax = (typeof SPANISH_TAXES)[number];

export const TAX_INVALID = 'country_config.tax must be "iva", "igic" or "ipsi"';

/** What TicketBAI answers a location of a tax its records do not carry. */
const NOT_CARRIED: Record<'ticketbai', string> = {
  ticketbai: 'TicketBAI records are Basque and carry IVA only; a Canary Islands (IGIC) or Ceuta and Melilla (IPSI) location uses verifactu',
};
export const taxNotCarried = (system: 'ticketbai', tax: SpanishTax): string =>
  `country_config.tax ${tax} is not available for ${system}: ${NOT_CARRIED[system]}`;

/**
 * `country_config.tax` as a location is registered: optional (undefined: IVA, nothing
 * stored, so an IVA location's config is as it was before the field existed); a value
 * another system's records cannot carry is refused for it.
 */
export function readSpanishTax(config: ConfigObject, system: SpainSystem): SpanishTax | undefined {
  const raw = config.tax;
  if (raw === undefined || raw === null) return undefined;
  const tax = typeof raw === 'string' ? SPANISH_TAXES.find((t) => t === raw.trim()) : undefined;
  if (tax === undefined) throw badRequest(TAX_INVALID);
  if (tax !== 'iva' && system === 'ticketbai') throw badRequest(taxNotCarried(system, tax));
  return tax;
}

/** The tax a (validated) location charges. */
export function taxOf(location: Pick<LocationForFiscal, 'config'>): SpanishTax {
  const stored = configString(location.config, 'tax');
  return SPANISH_TAXES.find((t) => t === stored) ?? 'iva';
}

/** The tax's name, as the records and receipts write it. */
export const TAX_NAMES: Readonly<Record<SpanishTax, string>> = { iva: 'IVA', igic: 'IGIC', ipsi: 'IPSI' };

/**
 * The rates a line may carry, per tax.
 *
 * IVA: the values AEAT accepts in `TipoImpositivo` (AEAT's VERI*FACTU validation document,
 * "Validaciones y errores", list of TipoImpositivo for Impuesto 01, as implemented by
 * marcchacon/verifactu-rb `TIPO_IMPOSITIVO`; AEAT error 1124 refuses any other, and the SII
 * and the Haciendas Forales take the same rates): the rates of LIVA arts. 90-91 (21, 10, 4),
 * 0, and the temporary ones of the 2022-2024 anti-inflation decrees (5 for energy and some
 * food, 2 and 7.5 for food in the last months of 2024). The temporary ones are accepted
 * although none is in force for a sale made today: AEAT still takes them, and a corrective
 * invoice repeats the rate of the sale it corrects (a refund of a sale of 2024), which the
 * request does not date. Nothing older (16, 18, 7, 8 of before September 2012) is accepted:
 * AEAT's VERI*FACTU list does not have them, and VERI*FACTU records start in 2024.
 *
 * IGIC: the six rates of Ley 4/2012 arts. 51-57 (0 tipo cero, 3 reducido, 7 general, 9.5 and
 * 15 incrementados, 20 especial), as summarised by supercontable.com's "Tipo IGIC Canarias"
 * ("Actualmente existen seis tipos de IGIC"). No source found gives a 5 % IGIC rate in force
 * (5 % was the general rate before 2012, RD 2538/1994 art. 54), so it is not accepted.
 *
 * IPSI: each city sets its rates by ordinance within Ley 8/1991's bounds (0.5 to 10 %). The
 * ones found applied: 0.5 (officially protected housing), 1 (electricity), 2 (lettings,
 * taxis), 3 (Ceuta's general rate for services), 4 (professional services, construction),
 * 8 and 10 (goods of the ordinances' annexes, public works): El Pueblo de Ceuta, 14-03-2010,
 * on Ceuta's IPSI. There is no IPSI tipo cero: a 0 % line is refused.
 */
export const RATES: Readonly<Record<SpanishTax, readonly number[]>> = {
  iva: [0, 2, 4, 5, 7.5, 10, 21],
  igic: [0, 3, 7, 9.5, 15, 20],
  ipsi: [0.5, 1, 2, 3, 4, 8, 10],
};

/** The list in a message: `0, 2, 4, 5, 7.5, 10 or 21`, each written by `rate` (the caller's unit). */
export const ratesText = (rates: readonly number[], rate: (percent: number) => string = String): string =>
  rates.length === 1 ? rate(rates[0]!) : `${rates.slice(0, -1).map(rate).join(', ')} or ${rate(rates.at(-1)!)}`;

/** The 400 of a line whose rate is not one of its tax's. */
export const rateNotAllowed = (i: number, tax: SpanishTax): ValidationError =>
  new RateListError((rate) => `items[${i}].tax_rate must be one of the ${TAX_NAMES[tax]} rates ${ratesText(RATES[tax], rate)}${tax === 'iva' ? '' : ` (country_config.tax is ${tax})`}`);

/**
 * Every line's rate is one of its tax's, checked at creation and preview, before anything
 * is stored or signed: a record with another rate is refused by the authority later (AEAT
 * 1124), after the sale was acknowledged, chained and numbered. An exempt line
 * (metadata.exemption_code) is at 0, which IVA and IGIC have; IPSI has no tipo cero, so
 * `exempt` (the transaction names a cause) lets its 0 % lines through: they are the exempt
 * ones, written with no rate (OperacionExenta).
 */
export function checkTaxRates(tx: TransactionDraft, tax: SpanishTax, exempt = false): void {
  tx.items.forEach((l, i) => {
    if (exempt && l.tax_rate === 0) return;
    if (!RATES[tax].includes(l.tax_rate)) throw rateNotAllowed(i, tax);
  });
}
