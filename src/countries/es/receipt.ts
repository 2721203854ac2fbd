/**
 * What a Spanish receipt prints beyond its render hints (src/receipts): Spanish, and the
 * QR rules TicketBAI and VERI*FACTU share: ISO/IEC 18004, error correction M, printed
 * between 30 and 40 mm (FORMATS.md §1.3 and §2.6). A sale to a final consumer without
 * the buyer's details is a simplified invoice (RD 1619/2012 art. 4).
 */
import type { Localized, ReceiptQrSpec, RenderHint, TransactionDraft } from '../types.ts';

/** TicketBAI §1.3 and VERI*FACTU §2.6: level M, 30-40 mm; we print the smallest allowed. */
export const SPANISH_QR: ReceiptQrSpec = { errorCorrectionLevel: 'M', sizeMm: 30 };

const SIMPLIFIED: Localized = { es: 'Factura simplificada', en: 'Simplified invoice' };
const FULL: Localized = { es: 'Factura', en: 'Invoice' };
const RECTIFYING: Localized = { es: 'Factura rectificativa', en: 'Corrective invoice' };

/** The title: rectificativa for refunds, complete when the buyer is named (customer_context tax id), else simplified. */
export function spanishTitle(_hints: readonly RenderHint[], tx: TransactionDraft): Localized {
  if (tx.type !== 'sale') return RECTIFYING;
  const taxId = tx.customer_context?.tax_id;
  return typeof taxId === 'string' && taxId !== '' ? FULL : SIMPLIFIED;
}
