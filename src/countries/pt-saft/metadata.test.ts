import { describe, it, expect } from 'vitest';
import { saft } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, location, txCtx } from '../shared/test-fixtures.ts';

const loc = location('pt-saft');
const validate = (metadata: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}, l = loc) =>
  saft.validateTransaction(draft({ metadata, ...over }), txCtx(l));

describe('pt-saft validateTransaction', () => {
  it('FS for a sale, NC for a refund or void', () => {
    expect(validate({})).toEqual({ document_type: 'FS' });
    const original = { original_invoice_no: 'FS A2026/1' };
    expect(validate(original, { type: 'refund' })).toEqual({ document_type: 'NC', ...original });
    expect(validate({ ...original, reason: ' Artigo com defeito ' }, { type: 'void' })).toEqual({ document_type: 'NC', ...original, reason: 'Artigo com defeito' });
    expect(validate({ document_type: 'FT' })).toEqual({ document_type: 'FT' });
  });

  it('the type needs a configured series', () => {
    expect400(() => validate({ document_type: 'FR' }), 'no series configured for document type FR');
    const ftOnly = location('pt-saft', { series: { FT: { prefix: 'A', atcud_code: 'AAJFJMVNTN' } } });
    expect400(() => validate({}, {}, ftOnly), 'no series configured for document type FS');
  });

  it.each([
    [{ document_type: 'XX' }, {}, 'metadata.document_type must be one of FT, FS, FR, NC, ND'],
    [{ document_type: 'NC' }, {}, 'metadata.document_type NC (credit note) is only for refund and void transactions'],
    [{ document_type: 'FS' }, { type: 'refund' as const }, 'metadata.document_type must be NC (credit note) for refund and void transactions'],
    [{}, { type: 'refund' as const }, 'metadata.original_invoice_no is required for credit notes (NC): the InvoiceNo of the document it corrects'],
    [{ original_invoice_no: 'FS A2026' }, { type: 'refund' as const }, 'metadata.original_invoice_no must be a SAF-T InvoiceNo "<type> <series>/<number>" of at most 60 characters'],
    [{ original_invoice_no: 7 }, { type: 'refund' as const }, 'metadata.original_invoice_no must be a SAF-T InvoiceNo "<type> <series>/<number>" of at most 60 characters'],
    [{ original_invoice_no: 'FS A^2026/1' }, { type: 'refund' as const }, 'metadata.original_invoice_no must be a SAF-T InvoiceNo "<type> <series>/<number>" of at most 60 characters'], // the XSD excludes ^ from the series
    [{ original_invoice_no: 'FS A/1' }, {}, 'metadata.original_invoice_no is only allowed on refund and void transactions'],
    [{ original_invoice_no: 'FS A/1', reason: 'x'.repeat(51) }, { type: 'refund' as const }, 'metadata.reason must be a string of at most 50 characters'],
  ])('refuses %j', (meta, over, message) => {
    expect400(() => validate(meta, over), message);
  });

  it('chain key per document type and series', () => {
    const tx = draft({ metadata: { document_type: 'FS' } });
    expect(saft.chainKey({ location: loc, tx })).toBe(`pt-saft:${loc.id}:FS A2026`);
    expect(saft.chainKey({ location: loc, tx: draft({ type: 'refund', metadata: { document_type: 'NC', original_invoice_no: 'FS A2026/1' } }) })).toBe(`pt-saft:${loc.id}:NC C2026`);
  });
});
