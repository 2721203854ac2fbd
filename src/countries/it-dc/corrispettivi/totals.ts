/**
 * The day's takings of one register (pem_matricola) as DatiCorrispettivi carries them
 * (CorrispettiviTypes_v1.0.xsd `DatiRT`): pure aggregation of the day's transaction rows,
 * never of the per-document records (their bodies are another module's format).
 *
 * Documents: every transaction created on the register that day (the Italian calendar day,
 * Europe/Rome), whatever its per-document status: the document was issued (and the money
 * taken) when the transaction was created. Three kinds:
 * - annullo (cancellation): a `cancellation` transaction (POST /cancel), or a refund/void
 *   with `metadata.is_cancellation`;
 * - reso (return): `metadata.is_return`;
 * - vendita (sale): the rest.
 *
 * One `Riepilogo` per VAT rate (`IVA`: AliquotaIVA, Imposta) and per Natura (exempt lines,
 * tax_rate 0). The schema's NaturaType lists N1-N6 only: a subcode (N2.1, N3.5, N6.9…)
 * counts under its parent code. Per Riepilogo (docs/decisions.md "Italy: daily
 * corrispettivi"):
 * - Ammontare: the sales' amount net of VAT (quantity x unit_price summed: line
 *   total_amount - tax_amount); Imposta: the sales' VAT;
 * - TotaleAmmontareResi / TotaleAmmontareAnnulli: the returns' / cancellations' line
 *   totals, VAT included (what the customer got back), positive; written only when not 0.
 * Totali: NumeroDocCommerciali = every document of the day (sales, returns, cancellations);
 * PagatoContanti / PagatoElettronico = what the sales collected (metadata cash_amount /
 * electronic_amount); Ticket = vouchers (ticket_amount, ticket_count).
 *
 * Amounts are integer cents throughout (exact); rates are kept in hundredths of a percent.
 */
import type { TransactionDraft } from '../../types.ts';
import { isoDate, localDate } from '../../shared/dates.ts';

export type DocumentKind = 'vendita' | 'reso' | 'annullo';

/** What the aggregation reads of a transaction row. */
export interface DayTransaction {
  type: 'sale' | 'refund' | 'void' | 'cancellation';
  normalized: TransactionDraft;
  created_at: Date;
}

export interface Riepilogo {
  /** Set for a taxed row: the rate in hundredths of a percent (2200 = 22.00 %). */
  rateBp?: number | undefined;
  /** Set for an exempt row: N1-N6. */
  natura?: string | undefined;
  /** Cents, sales net of VAT. */
  ammontare: number;
  /** Cents, sales' VAT (IVA rows only). */
  imposta: number;
  /** Cents, returns VAT included. */
  resi: number;
  /** Cents, cancellations VAT included. */
  annulli: number;
}

export interface DayTotals {
  /** YYYY-MM-DD, Europe/Rome. */
  day: string;
  riepiloghi: Riepilogo[];
  documents: number;
  sales: number;
  returns: number;
  cancellations: number;
  /** Cents. */
  cash: number;
  electronic: number;
  ticketAmount: number;
  ticketCount: number;
}

/** The schema's maxOccurs for Riepilogo. */
export const MAX_RIEPILOGHI = 40;

export const romeDay = (at: Date): string => isoDate(localDate(at, 'IT'));

export function documentKind(t: Pick<DayTransaction, 'type' | 'normalized'>): DocumentKind {
  const m = t.normalized.metadata ?? {};
  if (t.type === 'cancellation' || m.is_cancellation === true) return 'annullo';
  if (m.is_return === true) return 'reso';
  return 'vendita';
}

/** N2.1 → N2: the DatiCorrispettivi NaturaType has the six parent codes only. */
export function parentNatura(code: string): string {
  const parent = code.slice(0, 2).toUpperCase();
  if (!/^N[1-6]$/.test(parent)) throw new Error(`corrispettivi: ${code} is not a Natura code N1-N6`);
  return parent;
}

const cents = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.round(v) : 0);
const count = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 0);

/**
 * Aggregates the transactions of one day. Rows of another day are refused (the caller
 * selects by day; a mismatch is a bug, not data to drop silently).
 */
export function aggregateDay(day: string, rows: readonly DayTransaction[]): DayTotals {
  const byKey = new Map<string, Riepilogo>();
  const totals: DayTotals = {
    day, riepiloghi: [], documents: 0, sales: 0, returns: 0, cancellations: 0, cash: 0, electronic: 0, ticketAmount: 0, ticketCount: 0,
  };
  for (const row of rows) {
    if (romeDay(row.created_at) !== day) throw new Error(`corrispettivi: a transaction of ${romeDay(row.created_at)} in the totals of ${day}`);
    const kind = documentKind(row);
    const draft = row.normalized;
    totals.documents += 1;
    if (kind === 'vendita') totals.sales += 1;
    else if (kind === 'reso') totals.returns += 1;
    else totals.cancellations += 1;

    for (const line of draft.items) {
      const natura = typeof line.natura === 'string' && line.natura !== '' ? parentNatura(line.natura) : undefined;
      const rateBp = Math.round(line.tax_rate * 100);
      if (natura === undefined && rateBp === 0) throw new Error('corrispettivi: a line at 0 % without a Natura code');
      const key = natura !== undefined ? `N:${natura}` : `R:${rateBp}`;
      let r = byKey.get(key);
      if (r === undefined) {
        r = natura !== undefined ? { natura, ammontare: 0, imposta: 0, resi: 0, annulli: 0 } : { rateBp, ammontare: 0, imposta: 0, resi: 0, annulli: 0 };
        byKey.set(key, r);
      }
      const total = cents(line.total_amount);
      const tax = cents(line.tax_amount);
      if (kind === 'vendita') {
        r.ammontare += total - tax;
        r.imposta += tax;
      } else if (kind === 'reso') {
        r.resi += total;
      } else {
        r.annulli += total;
      }
    }

    if (kind === 'vendita') {
      const m = draft.metadata ?? {};
      totals.cash += cents(m.cash_amount);
      totals.electronic += cents(m.electronic_amount);
      const ticket = cents(m.ticket_amount);
      if (ticket > 0) {
        totals.ticketAmount += ticket;
        // A voucher payment without a count is at least one voucher.
        totals.ticketCount += Math.max(1, count(m.ticket_count));
      }
    }
  }
  // Taxed rows by rate, highest first, then the exempt ones by code.
  totals.riepiloghi = [...byKey.values()].sort((a, b) => {
    if (a.natura === undefined && b.natura === undefined) return b.rateBp! - a.rateBp!;
    if (a.natura === undefined) return -1;
    if (b.natura === undefined) return 1;
    return a.natura < b.natura ? -1 : a.natura > b.natura ? 1 : 0;
  });
  if (totals.riepiloghi.length > MAX_RIEPILOGHI) {
    throw new Error(`corrispettivi: ${totals.riepiloghi.length} VAT rates and natures in one day, the schema allows ${MAX_RIEPILOGHI}`);
  }
  return totals;
}

/** Cents → `12.34` / `-0.50` (Amount2DecimalType). */
export function amount2(cents: number): string {
  if (!Number.isSafeInteger(cents)) throw new Error(`corrispettivi: amount ${cents} is not a whole number of cents`);
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** Hundredths of a percent → `22.00` (RateType). */
export const rate2 = (bp: number): string => amount2(bp);
