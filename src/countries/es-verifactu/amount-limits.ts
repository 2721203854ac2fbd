/**
 * How large an invoice a VERI*FACTU record can carry, and what a very large one must say.
 *
 * - Every amount of a RegistroAlta (BaseImponibleOimporteNoSujeto, CuotaRepercutida,
 *   CuotaTotal, ImporteTotal…) is `ImporteSgn12.2Type` (SuministroInformacion.xsd): at most
 *   12 integer digits. A larger amount makes the record invalid against the schema, and AEAT
 *   then refuses the whole request (SOAP Fault 4102) with every other record of the chain
 *   sent with it; so such a sale is refused at creation. The core takes any safe integer of
 *   minor units (up to 9·10^15, 16 digits), so the bound is this system's.
 * - An invoice of 100,000,000.00 EUR or more (absolute ImporteTotal) must carry `Macrodato`
 *   S, else AEAT refuses it (error 1139: OCA l10n-spain PRs 5117/5191/5236, "invoices with
 *   ImporteTotal >= 100.000.000 were rejected with error 1139"; OCA's VERIFACTU_MACRODATA_LIMIT
 *   compared with `>=`; the SII's Macrodato threshold since 2018 is the same 100,000,000).
 */
import { badRequest } from '../../core/errors.ts';
import type { TransactionDraft } from '../types.ts';

/** 100,000,000.00 EUR in minor units: from here on the record says `Macrodato` S. */
export const MACRODATO_FROM_MINOR = 10_000_000_000;

/** The largest amount ImporteSgn12.2Type can write: 999,999,999,999.99 EUR, in minor units. */
export const MAX_RECORD_AMOUNT_MINOR = 99_999_999_999_999;

export const AMOUNT_TOO_LARGE =
  'total_amount must be at most 999,999,999,999.99 EUR: VERI*FACTU records carry amounts of at most 12 integer digits (SuministroInformacion.xsd ImporteSgn12.2Type)';

/** Whether an invoice of this ImporteTotal (minor units, signed) must say `Macrodato` S. */
export const isMacrodato = (importeTotalMinor: number): boolean => Math.abs(importeTotalMinor) >= MACRODATO_FROM_MINOR;

/**
 * Validation, at creation and preview. The request's total bounds every amount of the record:
 * each line's base, quota and surcharge are non-negative parts of it, and the breakdown's
 * sums are at most the total.
 */
export function checkRecordAmounts(tx: TransactionDraft): void {
  if (tx.total_amount > MAX_RECORD_AMOUNT_MINOR) throw badRequest(AMOUNT_TOO_LARGE);
}
