/**
 * What a Spanish receipt prints beyond its render hints (src/receipts): Spanish, and the
 * QR rules TicketBAI and VERI*FACTU share: ISO/IEC 18004, error correction M, printed
 * between 30 and 40 mm (FORMATS.md §1.3 and §2.6); the title the invoice type gives
 * (RD 1619/2012: art. 6 full invoice, art. 7 simplified, art. 15 corrective).
 */
import type { Localized, ReceiptCorrection, ReceiptCorrectionInput, ReceiptFacts, ReceiptQrSpec, ReceiptTaxSummary, RenderHint, TransactionDraft } from '../types.ts';
import { surchargeOf } from './surcharge.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { readSpanishInvoiceType } from './invoice.ts';
import { textWithin } from '../shared/xml-text.ts';

/** "Factura n.º": the number and series of a Spanish invoice (RD 1619/2012 art. 6.1.a, 7.1.a). */
export const SPANISH_NUMBER_LABEL: Localized = { es: 'Factura n.º', en: 'Invoice no.' };

/** TicketBAI §1.3 and VERI*FACTU §2.6: level M, 30-40 mm; we print the smallest allowed. */
export const SPANISH_QR: ReceiptQrSpec = { errorCorrectionLevel: 'M', sizeMm: 30 };

const SIMPLIFIED: Localized = { es: 'Factura simplificada', en: 'Simplified invoice' };
const FULL: Localized = { es: 'Factura', en: 'Invoice' };
const RECTIFYING: Localized = { es: 'Factura rectificativa', en: 'Corrective invoice' };
const RECTIFYING_SIMPLIFIED: Localized = { es: 'Factura rectificativa simplificada', en: 'Corrective simplified invoice' };

/** The title of the record's invoice type (es/invoice.ts: F1, F2, F3, R1-R4, R5), as the stored metadata says. */
export function spanishTitle(_hints: readonly RenderHint[], tx: TransactionDraft): Localized {
  const type = invoiceTypeOf(tx);
  // F3: a full invoice, issued in place of simplified ones (./replacement.ts).
  if (type === 'F1' || type === 'F3') return FULL;
  if (type === 'F2') return SIMPLIFIED;
  return type === 'R5' ? RECTIFYING_SIMPLIFIED : RECTIFYING;
}

/**
 * A reprint of a Spanish invoice is a duplicate, and says so: RD 1619/2012 art. 14.3 ("Los
 * duplicados deberán hacer constar la expresión «duplicado»"). The number is ours (the
 * copy counter of POST …/receipt/duplicate); nothing is journaled: the invoice record
 * itself is unchanged, and no Spanish system records reprints.
 */
export const SPANISH_DUPLICATE: NonNullable<ReceiptFacts['duplicate']> = {
  label: (copy) => ({ es: `DUPLICADO n.º ${copy}`, en: `DUPLICATE no. ${copy}` }),
};

function invoiceTypeOf(tx: TransactionDraft): string {
  try {
    return readSpanishInvoiceType(tx, tx.metadata);
  } catch {
    // Stored metadata was validated at creation; should a rule have changed since, the family still titles it.
    return tx.type === 'sale' ? 'F2' : 'R5';
  }
}

/** An annulment (RegistroAnulacion, AnulaTicketBai, an SII baja) is no invoice: it withdraws one. */
export const SPANISH_ANNULMENT: Localized = { es: 'Anulación de factura', en: 'Invoice annulment' };

/**
 * Spanish corrections on paper, for a system whose invoice number is `numberOf` (the
 * original's, as its receipt printed it):
 * - a cancellation is titled as the annulment it is and names the annulled invoice;
 * - a corrective invoice (R1-R5) names the invoice it rectifies when the request gave it
 *   (`original_invoice_number`, `original_issue_date`: RD 1619/2012 art. 15 wants the
 *   rectified invoice identified; the record carries it in FacturasRectificadas);
 * - a corrective invoice prints its amounts negative: it is issued "por diferencias"
 *   (TipoRectificativa I) and its record, its QR's importe included, carries them so.
 */
export function spanishCorrection(numberOf: (original: NonNullable<ReceiptCorrectionInput['original']>) => string | null): ReceiptCorrection {
  return {
    title: ({ kind }) => (kind === 'cancellation' ? SPANISH_ANNULMENT : undefined),
    references: ({ kind, tx, original }) => {
      if (kind === 'cancellation') {
        const n = original ? numberOf(original) : null;
        const reason = metaString(tx, 'cancellation_reason');
        return [
          ...(n ? [{ es: `Factura anulada n.º ${n}`, en: `Annulled invoice no. ${n}` }] : []),
          ...(reason ? [{ es: `Motivo: ${reason}`, en: `Reason: ${reason}` }] : []),
        ];
      }
      const n = metaString(tx, 'original_invoice_number');
      if (n === undefined || !invoiceTypeOf(tx).startsWith('R')) return [];
      const date = metaString(tx, 'original_issue_date');
      return [date === undefined
        ? { es: `Rectifica la factura n.º ${n}`, en: `Corrects invoice no. ${n}` }
        : { es: `Rectifica la factura n.º ${n} de ${date}`, en: `Corrects invoice no. ${n} of ${date}` }];
    },
    // A cancellation prints the annulled invoice's amounts as that invoice carried them.
    negative: ({ tx }) => invoiceTypeOf(tx).startsWith('R'),
  };
}

/** An invoice's recipient as its record names it: name, and its tax id (a NIF) or a foreign id, and its address. */
export interface SpanishRecipient {
  name: string;
  nif?: string | undefined;
  /** A foreign id (IDOtro): its country and the id. */
  other?: { country?: string | undefined; id: string } | undefined;
  /** The recipient's domicile (RD 1619/2012 art. 6.1.e) as given: the address, and the postal code apart. */
  address?: { address: string | null; postalCode: string | null } | undefined;
}

/** What a Spanish receipt's own lines are read from: the draft the receipt is drawn from, and the record's body. */
export type SpanishLinesInput = Parameters<NonNullable<ReceiptFacts['lines']>>[0];

/**
 * What a full invoice states beyond its lines and amounts, printed under its number:
 * - its recipients as the record names them (`recipientsOf`): RD 1619/2012 art. 6.1.d (the
 *   recipient's name or company name), 6.1.e (the recipient's NIF, or the foreign tax id,
 *   and domicile; printed whenever given). `recipientsOf` answers for the invoice types
 *   whose record names one: a simplified invoice names none unless its record does (art. 7.2
 *   lets the customer ask for its NIF and domicile on one);
 * - the operation's description (art. 6.1.f, 7.1.e: "descripción de las operaciones"), where
 *   the request gave one for the whole invoice (`descriptionOf`): the lines print their own.
 * Read from the draft the receipt is drawn from (after an accepted correction, POST …/correct,
 * the corrected one, as the authority holds it) or from the record's body, as each system
 * keeps them.
 */
export function spanishRecipientLines(
  recipientsOf: (input: SpanishLinesInput) => readonly SpanishRecipient[],
  descriptionOf?: (input: SpanishLinesInput) => string | undefined,
): NonNullable<ReceiptFacts['lines']> {
  return (input) => {
    const header = (text: Localized) => ({ placement: 'header' as const, text });
    const out = recipientsOf(input).flatMap((r) => {
      const other = r.other && [r.other.country, r.other.id].filter(Boolean).join(' ');
      const id = r.nif !== undefined
        ? { es: `NIF destinatario: ${r.nif}`, en: `Customer tax id: ${r.nif}` }
        : other !== undefined ? { es: `Id. destinatario: ${other}`, en: `Customer id: ${other}` } : undefined;
      // Direccion then CodigoPostal, as TicketBAI's IDDestinatario holds them apart.
      const where = [r.address?.address, r.address?.postalCode].filter((p): p is string => typeof p === 'string' && p !== '').join(', ');
      const address = where === '' ? undefined : { es: `Domicilio destinatario: ${where}`, en: `Customer address: ${where}` };
      return [header({ es: `Destinatario: ${r.name}`, en: `Customer: ${r.name}` }), ...(id ? [header(id)] : []), ...(address ? [header(address)] : [])];
    });
    const description = descriptionOf?.(input);
    if (description !== undefined) out.push(header({ es: `Descripción: ${description}`, en: `Description: ${description}` }));
    return out;
  };
}

const SURCHARGE_LABEL: Localized = { es: 'Recargo de equivalencia', en: 'Equivalence surcharge' };

/** The lines' sums per VAT rate (net = total less tax), in the order rates first appear: the receipt's default breakdown. */
export function linesRows(tx: TransactionDraft): ReceiptTaxSummary['rows'] {
  const rows = new Map<number, { rate: number; base: number; tax: number }>();
  for (const l of tx.items) {
    const r = rows.get(l.tax_rate) ?? { rate: l.tax_rate, base: 0, tax: 0 };
    r.base += l.total_amount - l.tax_amount;
    r.tax += l.tax_amount;
    rows.set(l.tax_rate, r);
  }
  return [...rows.values()];
}

/**
 * The tax summary of a Spanish receipt where it is not the lines' sums per rate under the
 * word IVA: the recargo de equivalencia (./surcharge.ts) the invoice states apart from the
 * IVA (RD 1619/2012 art. 6.1.i: each quota stated separately) and counts in its total, one
 * line per surcharge rate; and the tax's name where the record names another tax
 * (`taxNameOf`, from the stored record: VERI*FACTU's `Impuesto`; a cancellation's, from its
 * original's record). Undefined otherwise: the
 * receipt prints as it always did.
 */
export function spanishTaxSummary(taxNameOf: (record: string) => string | undefined = () => undefined): NonNullable<ReceiptFacts['taxSummary']> {
  return ({ kind, tx, record, original }): ReceiptTaxSummary | undefined => {
    // A cancellation's own record (VERI*FACTU's RegistroAnulacion) carries no tax: the
    // amounts it prints are its original's, under the tax that invoice's record names.
    const taxName = (record ? taxNameOf(record) : undefined)
      ?? (kind === 'cancellation' && original?.record ? taxNameOf(original.record) : undefined);
    const surcharged = tx.items.filter((l) => surchargeOf(l) !== undefined);
    if (taxName === undefined && surcharged.length === 0) return undefined;
    const surcharges = new Map<number, { label: Localized; rate: number; base: number; amount: number }>();
    for (const l of surcharged) {
      const s = surchargeOf(l)!;
      const c = surcharges.get(s.rate) ?? { label: SURCHARGE_LABEL, rate: s.rate, base: 0, amount: 0 };
      c.base += l.total_amount - l.tax_amount;
      c.amount += s.amount;
      surcharges.set(s.rate, c);
    }
    return { rows: linesRows(tx), ...(taxName === undefined ? {} : { taxName }), ...(surcharges.size === 0 ? {} : { surcharges: [...surcharges.values()] }) };
  };
}

/**
 * The issuer's name as a Spanish record wrote it (the element `name` inside `within`): a
 * receipt printed again after the location's legal name changed, a duplicate above all,
 * shows the invoice as issued (RD 1619/2012 art. 6.1.c: the issuer's name is part of the
 * invoice; a copy reproduces it, art. 14). Undefined for a record without it (a
 * cancellation's own record): the location's.
 */
export const spanishIssuerName = (within: string, name: string): NonNullable<ReceiptFacts['issuerLegalName']> =>
  ({ record }) => (record ? textWithin(record, within, name) : undefined);
