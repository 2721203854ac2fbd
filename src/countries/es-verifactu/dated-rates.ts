/**
 * The temporary IVA rates AEAT takes only for operations of their own months.
 *
 * AEAT's VERI*FACTU validation ("Validaciones y errores", errores.properties of the service)
 * dates three of the IVA rates of its TipoImpositivo list by FechaOperacion, or by
 * FechaExpedicionFactura when the record gives no FechaOperacion:
 * - 1194: 5 % "solo es permitido para FechaOperacion o FechaExpedicionFactura posterior o
 *   igual a 1 de julio de 2022 e inferior o igual a 30 de septiembre de 2024" (the energy and
 *   food rate of RDL 11/2022 and RDL 20/2022);
 * - 1235 / 1236 (the same text twice): 2 % and 7.5 % only from 1 October 2024 to 31
 *   December 2024 (RDL 4/2024);
 * - 1165 / 1170: a recargo de equivalencia on a 0 % line only from 1 January 2023 to
 *   30 September 2024 (the 0 % food rate of RDL 20/2022, whose surcharge was 0 %); from
 *   October 2024 AEAT takes 0.26 alone, which no 0 % line of ours pairs (../es/surcharge.ts).
 * (As marcchacon/verifactu-rb encodes them, "version 1.0.9 del documento de validación", and
 * the codes' texts as listed with AEAT's file by the VERI*FACTU libraries.) These checks are
 * made on IVA (Impuesto 01) only.
 *
 * A record is dated its issue date, the Madrid day it is created (build.ts), and
 * FechaExpedicionFactura cannot be before 28-10-2024 (1152). Without `metadata.operation_date`
 * (FechaOperacion, ../es/operation-date.ts) a line at 5 % is refused by AEAT on every record
 * this service can write, and 2 % / 7.5 % on any written after 2024; with it, they are taken
 * for an operation of their months (e.g. the refund, in 2026, of a sale of August 2024 at 5 %).
 * Session 21 kept these rates in the Spanish list (../es/tax.ts, shared with TicketBAI and the
 * SII, which date their records otherwise) on the belief that AEAT still takes them; for
 * VERI*FACTU it does so only by the operation's date, so the sale is refused at creation
 * instead of after it was acknowledged, chained and numbered.
 */
import { RateListError } from '../../core/transaction-request.ts';
import type { TransactionDraft } from '../types.ts';
import { surchargeOf } from '../es/surcharge.ts';
import type { SpanishTax } from '../es/tax.ts';

/** A window of operation dates, ISO (YYYY-MM-DD), both ends included; `code`: AEAT's error. */
interface Window {
  from: string;
  to: string;
  code: string;
}

/** The IVA rates AEAT dates, in percent. */
export const DATED_IVA_RATES: ReadonlyMap<number, Window> = new Map([
  [5, { from: '2022-07-01', to: '2024-09-30', code: '1194' }],
  // 1235 and 1236 have the same text; which is which rate AEAT does not say.
  [2, { from: '2024-10-01', to: '2024-12-31', code: '1235/1236' }],
  [7.5, { from: '2024-10-01', to: '2024-12-31', code: '1235/1236' }],
]);

/** A recargo de equivalencia on a 0 % line. */
export const ZERO_RATE_SURCHARGE: Window = { from: '2023-01-01', to: '2024-09-30', code: '1165' };

/** YYYY-MM-DD → DD-MM-YYYY, as VERI*FACTU writes dates. */
const dmy = (iso: string): string => iso.split('-').reverse().join('-');

/**
 * Validation, at creation and preview: every IVA line's rate (and a 0 % line's surcharge)
 * is one AEAT takes for the record's FechaOperacion (`operation`, ISO) when it has one, else
 * for its issue date (`issued`, ISO). A RateListError, so a guide-form caller reads the rate
 * in its own unit.
 */
export function checkDatedRates(tx: TransactionDraft, tax: SpanishTax, issued: string, operation?: string): void {
  if (tax !== 'iva') return;
  const day = operation ?? issued;
  const when = operation === undefined ? `on an invoice issued on ${dmy(day)}` : `for an operation of ${dmy(day)} (metadata.operation_date)`;
  const within = (w: Window) => day >= w.from && day <= w.to;
  tx.items.forEach((l, i) => {
    const window = DATED_IVA_RATES.get(l.tax_rate);
    if (window !== undefined && !within(window)) {
      throw new RateListError((rate) =>
        `items[${i}].tax_rate ${rate(l.tax_rate)} is refused by AEAT ${when}: ` +
        `VERI*FACTU takes that IVA rate only for operations from ${dmy(window.from)} to ${dmy(window.to)} (AEAT error ${window.code})`);
    }
    if (l.tax_rate === 0 && surchargeOf(l) !== undefined && !within(ZERO_RATE_SURCHARGE)) {
      throw new RateListError((rate) =>
        `items[${i}].surcharge_rate is refused by AEAT with tax_rate ${rate(0)} ${when}: ` +
        `VERI*FACTU takes a recargo de equivalencia on a 0 % line only for operations from ${dmy(ZERO_RATE_SURCHARGE.from)} to ${dmy(ZERO_RATE_SURCHARGE.to)} (AEAT error ${ZERO_RATE_SURCHARGE.code})`);
    }
  });
}
