import type { ReceiptFacts, ReceiptTaxSummary, TransactionDraft } from '../types.ts';
import { taxedGroupsOf } from './xml.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { OPERATION_DATE_LABELS } from '../es/operation-date.ts';
import { SPANISH_NUMBER_LABEL, SPANISH_QR, spanishCorrection, spanishTaxSummary, spanishTitle, SPANISH_DUPLICATE, spanishIssuerName, linesRows } from '../es/receipt.ts';

/**
 * TicketBAI on the receipt (FORMATS.md §1.3): the TBAI identifier alone on one line with
 * the QR below it, both at the bottom (the `tbai_id` and `qr` hints, in that order).
 */
// SerieFactura and NumFactura (the stored metadata carries the series, metadata.ts `seriesOf`).
const numberOf = ({ documentNumber, tx }: { documentNumber: string | null; tx: TransactionDraft }): string | null =>
  (documentNumber === null ? null : `${metaString(tx, 'series') ?? ''}${metaString(tx, 'series') ? '-' : ''}${documentNumber}`);

export const TICKETBAI_RECEIPT: ReceiptFacts = {
  language: 'es',
  title: spanishTitle,
  duplicate: SPANISH_DUPLICATE,
  labels: OPERATION_DATE_LABELS,
  number: { label: SPANISH_NUMBER_LABEL, value: numberOf },
  singleLine: ['tbai_id'],
  qr: { qr: SPANISH_QR },
  // The annulled invoice as its receipt printed it (AnulaTicketBai names its series and number).
  correction: spanishCorrection(numberOf),
  // Recargo de equivalencia on lines of its own (../es/receipt.ts); the record's own
  // breakdown where it split the lines' amounts again (recordTaxSummary).
  taxSummary: (input) => recordTaxSummary(input.tx, linesSummary(input)),
  // Sujetos/Emisor (an annulment's IDFactura/Emisor) as the record signed it.
  issuerLegalName: spanishIssuerName('Emisor', 'ApellidosNombreRazonSocial'),
};

const linesSummary = spanishTaxSummary();

/**
 * The breakdown the record states, where it is not the lines' sums: a DetalleIVA whose lines'
 * own rounding drifted past a cent is written as what they charged split again into base and
 * quotas (./quota.ts `detalleAmounts`), and the receipt (the invoice the customer holds)
 * states the same base, quota and surcharge as the record, and the subtotal those bases add
 * up to (RD 1619/2012 arts. 6.1.g-h and 7.1: the invoice states the base and quota it
 * declares). The lines still print what each charged. `fallback`: the summary of the lines'
 * sums (../es/receipt.ts), used as it is when no group was split again.
 */
export function recordTaxSummary(tx: TransactionDraft, fallback: ReceiptTaxSummary | undefined): ReceiptTaxSummary | undefined {
  let groups;
  try {
    groups = taxedGroupsOf(tx);
  } catch {
    return fallback;
  }
  const moved = groups.filter((g) => g.written.base !== g.lines.base || g.written.quota !== g.lines.tax || g.written.surcharge !== g.lines.surcharge);
  if (moved.length === 0) return fallback;
  // The lines' sums per rate (and surcharge rate), then each split group's difference.
  const summary: ReceiptTaxSummary = fallback ?? { rows: linesRows(tx) };
  const rows = summary.rows.map((r) => ({ ...r }));
  const surcharges = summary.surcharges?.map((c) => ({ ...c }));
  let subtotal = tx.pretax_amount;
  for (const g of moved) {
    const dBase = g.written.base - g.lines.base;
    subtotal += dBase;
    const row = rows.find((r) => r.rate === g.rate && r.code === undefined);
    if (row) {
      row.base += dBase;
      row.tax += g.written.quota - g.lines.tax;
    }
    const levy = g.surchargeRate === undefined ? undefined : surcharges?.find((c) => c.rate === g.surchargeRate);
    if (levy) {
      levy.base += dBase;
      levy.amount += g.written.surcharge - g.lines.surcharge;
    }
  }
  return { ...summary, rows, ...(surcharges === undefined ? {} : { surcharges }), subtotal };
}
