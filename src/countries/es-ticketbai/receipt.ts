import type { ReceiptFacts, ReceiptTaxSummary, TransactionDraft } from '../types.ts';
import { taxedGroupsOf } from './xml.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { OPERATION_DATE_LABELS } from '../es/operation-date.ts';
import {
  SPANISH_NUMBER_LABEL, SPANISH_QR, spanishCorrection, spanishTaxSummary, spanishTitle, SPANISH_DUPLICATE, spanishIssuerName, linesRows, spanishRecipientLines, type SpanishRecipient,
} from '../es/receipt.ts';
import { textWithin } from '../shared/xml-text.ts';

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
  // Sujetos/Destinatarios and DatosFactura/DescripcionFactura as the record signed them
  // (RD 1619/2012 art. 6.1.d-f): whatever the invoice type, a record that names a
  // recipient prints it (a simplified invoice may: art. 7.2), one that names none prints none.
  lines: spanishRecipientLines(({ record }) => (record ? recipientsOf(record) : []), ({ tx, record }) => descriptionOf(tx, record)),
};

/** Each IDDestinatario of the signed record (xml.ts `destinatarioXml`): NIF or IDOtro, name, postal code, address. */
export function recipientsOf(record: string): SpanishRecipient[] {
  const destinatarios = textBlock(record, 'Destinatarios');
  if (destinatarios === undefined) return [];
  const out: SpanishRecipient[] = [];
  for (const m of destinatarios.matchAll(/<(?:[\w.-]+:)?IDDestinatario>[\s\S]*?<\/(?:[\w.-]+:)?IDDestinatario>/g)) {
    const block = m[0];
    const name = textWithin(block, 'IDDestinatario', 'ApellidosNombreRazonSocial');
    if (name === undefined) continue;
    const nif = textWithin(block, 'IDDestinatario', 'NIF');
    const id = textWithin(block, 'IDOtro', 'ID');
    const address = textWithin(block, 'IDDestinatario', 'Direccion') ?? null;
    const postalCode = textWithin(block, 'IDDestinatario', 'CodigoPostal') ?? null;
    out.push({
      name,
      ...(nif !== undefined ? { nif } : id !== undefined ? { other: { country: textWithin(block, 'IDOtro', 'CodigoPais'), id } } : {}),
      address: { address, postalCode },
    });
  }
  return out;
}

/** The inside of the first element named `name` (any prefix); undefined when absent. */
const textBlock = (xml: string, name: string): string | undefined =>
  new RegExp(`<(?:[\\w.-]+:)?${name}(?:\\s[^>]*)?>([\\s\\S]*?)</(?:[\\w.-]+:)?${name}>`).exec(xml)?.[1];

/**
 * DescripcionFactura as the record signed it, where the request gave it (metadata.description);
 * not the one xml.ts makes from the lines, which print already.
 */
function descriptionOf(tx: TransactionDraft, record: string | null | undefined): string | undefined {
  if (!record || !metaString(tx, 'description')?.trim()) return undefined;
  return textWithin(record, 'DatosFactura', 'DescripcionFactura');
}

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
