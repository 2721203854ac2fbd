import type { ReceiptCorrectionInput, ReceiptFacts } from '../types.ts';
import { SPANISH_ANNULMENT, spanishCorrection, spanishRecipientLines, spanishTaxSummary, spanishTitle, SPANISH_DUPLICATE } from '../es/receipt.ts';
import { NAMES_COUNTERPARTY, TAX_NAME_HINT, counterpartyOf } from './build.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { OPERATION_DATE_LABELS } from '../es/operation-date.ts';
import { customerAddressOf } from '../es/customer-address.ts';
import { autoDescription } from './metadata.ts';

/**
 * The tax an IGIC or IPSI invoice charges: its SII record (an IVA book's, key 08) does not
 * name it, so build.ts leaves it as a render hint; a cancellation prints its original's.
 */
const taxNameOf = (input: ReceiptCorrectionInput): string | undefined =>
  (input.hints.find((h) => h.key === TAX_NAME_HINT) ?? input.original?.hints.find((h) => h.key === TAX_NAME_HINT))?.value;

const SPANISH = spanishCorrection((o) => o.hints.find((h) => h.key === 'invoice_number')?.value ?? o.documentNumber);

/** SII invoices carry no QR: the invoice number heads them. */
export const SII_RECEIPT: ReceiptFacts = {
  language: 'es',
  title: spanishTitle,
  duplicate: SPANISH_DUPLICATE,
  labels: {
    invoice_number: { es: 'Factura n.º', en: 'Invoice no.' },
    voided_invoice_number: { es: 'Anula la factura n.º', en: 'Voids invoice no.' },
    [TAX_NAME_HINT]: { es: 'Impuesto', en: 'Tax' },
    // The operation's own day, when the record states one (build.ts).
    ...OPERATION_DATE_LABELS,
  },
  qr: {},
  // An SII void is a baja (RegistroLRBajaExpedidas): the invoice is withdrawn, not rectified.
  // It prints as an annulment, as a cancellation does; its `voided_invoice_number` hint names
  // the invoice, and the amounts are that invoice's (the baja carries none).
  correction: {
    title: (input) => (input.kind === 'void' ? SPANISH_ANNULMENT : SPANISH.title!(input)),
    references: (input) => (input.kind === 'void' ? [] : SPANISH.references!(input)),
    negative: (input) => input.kind !== 'void' && SPANISH.negative!(input),
  },
  // Recargo de equivalencia on lines of its own (../es/receipt.ts); IGIC or IPSI by name.
  taxSummary: (input) => spanishTaxSummary(() => taxNameOf(input))(input),
  // The Contraparte of the types that name one (F1, F3, R1), as build.ts writes it, with the
  // domicile customer_context gives ("customer data for the receipt": the record has no field
  // for it, and metadata.counterparty_* name no address; RD 1619/2012 art. 6.1.e), read as
  // TicketBAI writes it (../es/customer-address.ts); and the DescripcionOperacion the request
  // gave (not the one metadata.ts makes from the lines, which print already).
  lines: spanishRecipientLines(({ tx }) => {
    if (!NAMES_COUNTERPARTY.has(metaString(tx, 'invoice_type') ?? 'F1')) return [];
    const party = counterpartyOf(tx);
    if (party === undefined) return [];
    const address = customerAddressOf(tx.customer_context ?? {});
    return [{ name: party.name, nif: party.nif, other: party.other && { country: party.other.country, id: party.other.id }, address }];
  }, ({ tx }) => {
    const given = metaString(tx, 'description');
    return given === undefined || given.trim() === '' || given === autoDescription(tx) ? undefined : given;
  }),
};
