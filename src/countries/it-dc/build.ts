/**
 * Documento Commerciale record (placeholder). The real document and its transmission
 * (through an approved software solution, art. 24 d.lgs. 1/2024, or an RT device) come
 * with the Italy issue; for a cancellation, the "documento commerciale di annullo".
 *
 * The document number is ours: "NNNN-NNNN", as printed on every documento commerciale
 * (closure number - progressive within it). Daily closures are not modelled yet, so the
 * first group counts blocks of 9999 documents of the register; numbers stay unique and
 * increasing per register. It is the record's fiscal id and `document_number` hint.
 */
import type { BuildInput, FiscalRecord } from '../types.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { commonFields, placeholderBody, placeholderNote } from '../shared/placeholder.ts';
import { configString } from '../shared/config-fields.ts';
import { textHint } from '../shared/render-hints.ts';

export function dcDocumentNumber(seq: number): string {
  const block = Math.floor((seq - 1) / 9999) + 1;
  const n = ((seq - 1) % 9999) + 1;
  return `${String(block).padStart(4, '0')}-${String(n).padStart(4, '0')}`;
}

const PICK = [
  'cash_amount',
  'electronic_amount',
  'ticket_amount',
  'ticket_count',
  'lottery_code',
  'instant_lottery_qr',
  'customer_codice_fiscale',
  'is_return',
  'is_cancellation',
  'original_matricola',
  'original_date',
  'original_number',
] as const;

export function buildDc(input: BuildInput): FiscalRecord {
  const { tx, location } = input;
  const cancellation = input.kind === 'cancellation';
  const number = dcDocumentNumber(input.chain.seq);
  const matricola = configString(location.config, 'pem_matricola') ?? null;
  const meta = Object.fromEntries(PICK.map((f) => [f, tx.metadata[f]]));
  const body = placeholderBody(
    cancellation ? 'Documento Commerciale di annullo' : 'Documento Commerciale',
    placeholderNote(cancellation ? 'documento commerciale di annullo' : 'documento commerciale', 'Italy'),
    {
      ...commonFields(input, { chained: false }),
      pem_matricola: matricola,
      cau_code: configString(location.config, 'cau_code') ?? null,
      document_number: number,
      document_date: isoDate(localDate(input.now, 'IT')),
      ...meta,
      // An annullo names the document it cancels by register, date and number.
      annulled_document: cancellation
        ? {
            matricola,
            date: input.original === undefined ? null : isoDate(localDate(new Date(input.original.issuedAt), 'IT')),
            number: input.original?.documentNumber ?? input.original?.fiscalId ?? null,
          }
        : undefined,
    },
  );
  return {
    body,
    contentType: 'application/json',
    fiscalId: number,
    documentNumber: number,
    fingerprint: null,
    qrData: null,
    placeholder: true,
    renderHints: [textHint('document_number', 'header', number)],
  };
}
