/**
 * SII record (placeholder). The real ones are `SuministroLRFacturasEmitidas` (A0 alta)
 * and, for a cancellation, `AnulacionLRFacturasEmitidas` (baja), SII 1.1 schemas, and
 * come with the Spain issue. SII is neither signed nor chained; AEAT's CSV is the id.
 */
import type { BuildInput, FiscalRecord, TransactionDraft } from '../types.ts';
import { commonFields, issuerTaxId, metaString, placeholderBody, placeholderNote } from '../shared/placeholder.ts';
import { textHint } from '../shared/render-hints.ts';

/** `NumSerieFacturaEmisor`: the series (when given) prefixed to the number (spec table). */
export const numSerieOf = (tx: TransactionDraft, transactionId: string): string =>
  `${metaString(tx, 'series') ?? ''}${metaString(tx, 'invoice_number') ?? transactionId}`;

const pick = (tx: TransactionDraft, fields: readonly string[]) =>
  Object.fromEntries(fields.map((f) => [f, tx.metadata[f] ?? null]));

export function buildSii(input: BuildInput): FiscalRecord {
  const { tx } = input;
  if (input.kind === 'cancellation') {
    const original = input.original;
    const origTx = original?.tx ?? tx;
    const body = placeholderBody('SII 1.1 AnulacionLRFacturasEmitidas XML (baja)', placeholderNote('SII baja (AnulacionLRFacturasEmitidas)', 'Spain'), {
      ...commonFields(input, { chained: false }),
      ...pick(origTx, ['exercise', 'period']),
      cancelled_invoice: {
        issuer_nif: issuerTaxId(input),
        num_serie_factura_emisor: original?.documentNumber ?? numSerieOf(origTx, original?.transactionId ?? input.transactionId),
        issue_date: origTx.metadata.issue_date ?? null,
      },
    });
    return { body, contentType: 'application/json', fiscalId: null, documentNumber: null, fingerprint: null, qrData: null, placeholder: true, renderHints: [] };
  }
  const number = numSerieOf(tx, input.transactionId);
  const body = placeholderBody('SII 1.1 SuministroLRFacturasEmitidas XML (A0)', placeholderNote('SII SuministroLRFacturasEmitidas record', 'Spain'), {
    ...commonFields(input, { chained: false }),
    num_serie_factura_emisor: number,
    ...pick(tx, [
      'issue_date',
      'invoice_type',
      'regime_key',
      'exercise',
      'period',
      'book_type',
      'description',
      'counterparty_nif',
      'counterparty_name',
      'counterparty_id_type',
      'counterparty_country',
      'counterparty_id',
      'original_invoice_number',
      'original_issue_date',
    ]),
  });
  return {
    body,
    contentType: 'application/json',
    fiscalId: null,
    documentNumber: number,
    fingerprint: null,
    qrData: null,
    placeholder: true,
    renderHints: [textHint('invoice_number', 'header', number)],
  };
}
