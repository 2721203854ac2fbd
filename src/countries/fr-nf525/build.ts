/**
 * NF525 record (placeholder). Under CGI art. 286-I-3° bis (BOI-TVA-DECLA-30-10-30) each
 * receipt is signed and chained to the previous one of its register, with perpetual
 * grand totals, closures and a technical event log; the exact fields and algorithm are
 * in the (non-public) NF525 référentiel and come with the France issue. A cancellation
 * is itself a new, numbered record of the chain: nothing is ever deleted.
 *
 * The fiscal id is the record's number on its register: `<register_id>-<seq, 8 digits>`.
 */
import type { BuildInput, FiscalRecord } from '../types.ts';
import {
  chainedFingerprint,
  commonFields,
  placeholderBody,
  placeholderNote,
  previousFingerprint,
} from '../shared/placeholder.ts';
import { configString } from '../shared/config-fields.ts';
import { textHint } from '../shared/render-hints.ts';

export const nf525Number = (registerId: string, seq: number): string => `${registerId}-${String(seq).padStart(8, '0')}`;

/**
 * The printed extract of the signature. The référentiel fixes which characters are
 * printed; until it is applied, the first 8 characters of the fingerprint.
 */
export const signatureExtract = (fingerprint: string): string => fingerprint.slice(0, 8);

export function buildNf525(input: BuildInput): FiscalRecord {
  const cancellation = input.kind === 'cancellation';
  const registerId = configString(input.location.config, 'register_id') ?? input.location.id;
  const number = nf525Number(registerId, input.chain.seq);
  const body = placeholderBody(
    cancellation ? 'NF525 signed cancellation record' : 'NF525 signed receipt record',
    placeholderNote(cancellation ? 'NF525 cancellation record (signed, chained)' : 'NF525 receipt record (signed, chained)', 'France'),
    {
      ...commonFields(input, { chained: true }),
      register_id: registerId,
      number,
      cancels: cancellation ? (input.original?.fiscalId ?? null) : undefined,
    },
  );
  const fingerprint = chainedFingerprint(previousFingerprint(input), body);
  return {
    body,
    contentType: 'application/json',
    fiscalId: number,
    documentNumber: number,
    fingerprint,
    qrData: null,
    placeholder: true,
    renderHints: [textHint('document_number', 'header', number), textHint('signature_extract', 'footer_bottom', signatureExtract(fingerprint))],
  };
}
