/**
 * myDATA document (placeholder). The real one is an `InvoicesDoc` (myDATA v1.0.x
 * schema) sent with SendInvoices, or a CancelInvoice call by MARK for a cancellation;
 * both come with the Greece issue. Documents are numbered per series (`aa`), not
 * chained; the fiscal id is "<series>-<aa>" (spec: Greece fiscal_id = series-number),
 * and AADE's MARK arrives with its answer.
 *
 * No receipt items at build: mark, uid, authentication code and QR come from AADE; if
 * it cannot be reached, the core prints the late-transmission label instead.
 */
import type { BuildInput, FiscalRecord } from '../types.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { commonFields, placeholderBody, placeholderNote } from '../shared/placeholder.ts';
import { configString } from '../shared/config-fields.ts';
import { defaultInvoiceType, seriesOf } from './metadata.ts';

export function buildMyData(input: BuildInput): FiscalRecord {
  const { tx, location } = input;
  const config = location.config;
  const issuer = {
    afm: configString(config, 'afm') ?? null,
    branch: typeof config.branch === 'number' ? config.branch : 0,
    document_class: configString(config, 'document_class') ?? null,
  };
  if (input.kind === 'cancellation') {
    const body = placeholderBody('myDATA CancelInvoice', placeholderNote('myDATA cancellation (CancelInvoice by MARK)', 'Greece'), {
      ...commonFields(input, { chained: false }),
      ...issuer,
      cancelled_mark: input.original?.upstreamId ?? null,
      cancelled_document: input.original?.fiscalId ?? null,
    });
    return { body, contentType: 'application/json', fiscalId: null, documentNumber: null, fingerprint: null, qrData: null, placeholder: true, renderHints: [] };
  }
  const series = seriesOf(tx, location);
  const aa = String(input.chain.seq);
  const body = placeholderBody('myDATA InvoicesDoc XML', placeholderNote('myDATA InvoicesDoc', 'Greece'), {
    ...commonFields(input, { chained: false }),
    ...issuer,
    invoice_type: typeof tx.metadata.invoice_type === 'string' ? tx.metadata.invoice_type : defaultInvoiceType(tx),
    series,
    aa,
    issue_date: isoDate(localDate(input.now, 'GR')),
  });
  return {
    body,
    contentType: 'application/json',
    fiscalId: `${series}-${aa}`,
    documentNumber: aa,
    fingerprint: null,
    qrData: null,
    placeholder: true,
    renderHints: [],
  };
}
