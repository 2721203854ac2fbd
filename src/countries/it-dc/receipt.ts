import type { Localized, ReceiptFacts } from '../types.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { metaString } from '../shared/metadata-fields.ts';

const SALE: Localized = { it: 'DOCUMENTO COMMERCIALE di vendita o prestazione', en: 'COMMERCIAL DOCUMENT of sale or service' };
const RETURN: Localized = { it: 'DOCUMENTO COMMERCIALE emesso per RESO MERCE', en: 'COMMERCIAL DOCUMENT issued for a GOODS RETURN' };
const ANNULMENT: Localized = { it: 'DOCUMENTO COMMERCIALE emesso per ANNULLAMENTO', en: 'COMMERCIAL DOCUMENT issued for an ANNULMENT' };

/** `2026-03-01` → `01-03-2026`, the day as the documento commerciale prints it. */
const printedDay = (iso: string): string => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  return m ? `${m[3]}-${m[2]}-${m[1]}` : iso;
};

/**
 * The Documento Commerciale (DM 7 dicembre 2016, Agenzia delle Entrate specifiche
 * tecniche): titled "DOCUMENTO COMMERCIALE di vendita o prestazione", its number
 * (`document_number`, "numero progressivo") at the top; a return is "emesso per RESO
 * MERCE", an annulment "emesso per ANNULLAMENTO", the words every RT and AdE's own
 * "documento commerciale online" print. The kind is the document's own, from
 * its metadata (`is_return`, `is_cancellation`, which `type` refund/void sets:
 * metadata.ts), not from `type`: a sale whose metadata says is_return is a reso.
 */
export const DC_RECEIPT: ReceiptFacts = {
  language: 'it',
  title: (_hints, tx) => (tx.metadata.is_cancellation === true
    ? ANNULMENT
    : tx.metadata.is_return === true || (tx.type !== 'sale' && tx.metadata.is_return === undefined)
      ? RETURN
      : SALE),
  labels: { document_number: { it: 'Documento n.', en: 'Document no.' } },
  qr: {},
  // A reso or annullo names the document it returns or annuls, as its ResoAnnullo does
  // (register, day, number): from the metadata, or, for POST …/cancel, from the original
  // (whose draft the cancellation carries: its is_return must not title the annullo a reso).
  // Amounts print positive, as Ammontare carries them.
  correction: {
    title: ({ kind }) => (kind === 'cancellation' ? ANNULMENT : undefined),
    references: ({ kind, tx, original }) => {
      let number: string | undefined;
      let day: string | undefined;
      let register: string | undefined;
      if (kind === 'cancellation') {
        number = original ? (original.hints.find((h) => h.key === 'document_number')?.value ?? original.documentNumber ?? original.fiscalId ?? undefined) : undefined;
        day = original ? isoDate(localDate(original.createdAt, 'IT')) : undefined;
      } else if (tx.metadata.is_return === true || tx.metadata.is_cancellation === true) {
        number = metaString(tx, 'original_number');
        day = metaString(tx, 'original_date');
        register = metaString(tx, 'original_matricola');
      }
      if (number === undefined) return [];
      // "Documento di riferimento:" then "N. 0005-0009 del 03-06-2020", as RTs and AdE print
      // it (two lines: together they overrun a 48-column roll).
      const when = day === undefined ? '' : ` del ${printedDay(day)}`;
      const whenEn = day === undefined ? '' : ` of ${printedDay(day)}`;
      return [
        { it: 'Documento di riferimento:', en: 'Reference document:' },
        { it: `N. ${number}${when}`, en: `No. ${number}${whenEn}` },
        ...(register === undefined ? [] : [{ it: `Matricola RT ${register}`, en: `Register (RT) ${register}` }]),
      ];
    },
  },
};
