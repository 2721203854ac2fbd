import type { Localized, ReceiptCorrectionInput, ReceiptFacts } from '../types.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { jetWriter } from './closures/processor.ts';

const SALE: Localized = { fr: 'Ticket de caisse', en: 'Receipt' };
const REFUND: Localized = { fr: 'Ticket de remboursement', en: 'Refund receipt' };
const CANCELLATION: Localized = { fr: 'Ticket d\'annulation', en: 'Cancellation receipt' };

/** A stored NF525 record (JSON) as an object, if readable. */
function parsed(record: string | null | undefined): Record<string, unknown> | undefined {
  if (!record) return undefined;
  try {
    const body: unknown = JSON.parse(record);
    return body !== null && typeof body === 'object' && !Array.isArray(body) ? body as Record<string, unknown> : undefined;
  } catch {
    return undefined;
  }
}

/** The `legal_name` a stored NF525 record carries, if readable. */
function recordedLegalName(record: string | null | undefined): string | undefined {
  const name = parsed(record)?.legal_name;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** The location's name and address a stored NF525 record kept (`location`), if it has them. */
function recordedLocation(record: string | null | undefined): { name: string; address: string | null } | undefined {
  const loc = parsed(record)?.location as { name?: unknown; address?: unknown } | null | undefined;
  if (!loc || typeof loc !== 'object' || typeof loc.name !== 'string' || loc.name === '') return undefined;
  if (loc.address !== null && typeof loc.address !== 'string') return undefined;
  return { name: loc.name, address: loc.address === '' ? null : loc.address };
}

/** The number a ticket printed (`document_number` hint), else its record's. */
const ticketNumber = (o: NonNullable<ReceiptCorrectionInput['original']>): string | null =>
  o.hints.find((h) => h.key === 'document_number')?.value ?? o.documentNumber ?? o.fiscalId;

/**
 * An NF525 ticket (CGI art. 286-I-3° bis; FORMATS.md §8, items as industry summaries of
 * the référentiel give them): its number on the register (`document_number`), the
 * signature extract (`signature_extract`), and the name and version of the cash-register
 * software that made it.
 */
export const NF525_RECEIPT: ReceiptFacts = {
  language: 'fr',
  // Each operation is titled as its record names it (`operation`): a void is an annulment,
  // not a refund (the record keeps the two apart, so does the ticket).
  title: (_hints, tx) => (tx.type === 'sale' ? SALE : tx.type === 'refund' ? REFUND : CANCELLATION),
  // A cancellation is a ticket of its own (its number, its signature: a new record of the
  // chain, FORMATS.md §8 "corrections are new, traced operations"), titled as such and naming
  // the ticket it cancels (the record's `cancels.document_number`), with the reason given.
  // Amounts print as the record carries them: a refund, a void and the cancellation of a
  // sale negative, the cancellation of a refund positive (build.ts `operationOf`).
  correction: {
    title: ({ kind }) => (kind === 'cancellation' ? CANCELLATION : undefined),
    references: ({ kind, original, tx }) => {
      if (kind !== 'cancellation') return [];
      const out: Localized[] = [];
      const n = original ? ticketNumber(original) : null;
      if (n) out.push({ fr: `Annule le ticket n° ${n}`, en: `Cancels receipt no. ${n}` });
      const reason = metaString(tx, 'cancellation_reason');
      if (reason) out.push({ fr: `Motif : ${reason}`, en: `Reason: ${reason}` });
      return out;
    },
    negative: ({ kind, tx }) => (kind === 'cancellation' ? tx.type === 'sale' : tx.type !== 'sale'),
  },
  labels: {
    document_number: { fr: 'Ticket n°', en: 'Receipt no.' },
    signature_extract: { fr: 'Signature', en: 'Signature' },
  },
  qr: {},
  // The location's tax id is what the merchant registered: usually the SIRET (14 digits) or
  // SIREN (9), sometimes the intra-EU VAT number (FR + 2-character key + SIREN, CGI art.
  // 242 nonies A I-3°). The generic "N° TVA" would call a SIRET a VAT number on the ticket.
  // The legal name the ticket's record keeps (`legal_name`: in the body, not in the signed
  // message, record.ts): a reprint or a duplicate after the merchant's name changed shows
  // the ticket as issued (a duplicate reproduces the original, BOI-TVA-DECLA-30-10-30 §§ on
  // duplicates), not today's name.
  issuerLegalName: ({ record }) => recordedLegalName(record),
  // Likewise the shop's name and address the ticket's header printed (the record's
  // `location`); a record from before they were kept has none: the location's current ones.
  issuerLocation: ({ record }) => recordedLocation(record),
  taxIdLabel: (taxId) => {
    const v = taxId.replace(/\s/g, '');
    if (/^\d{14}$/.test(v)) return { fr: 'SIRET', en: 'SIRET' };
    if (/^\d{9}$/.test(v)) return { fr: 'SIREN', en: 'SIREN' };
    if (/^FR[0-9A-Z]{2}\d{9}$/i.test(v)) return { fr: 'N° TVA intracom.', en: 'VAT no.' };
    return undefined;
  },
  // A reprint of a ticket says so, with its number (BOI-TVA-DECLA-30-10-30: duplicates are
  // identified and counted); the original is the receipt as first drawn.
  duplicate: {
    label: (copy) => ({ fr: `DUPLICATA n° ${copy}`, en: `DUPLICATE no. ${copy}` }),
    // Each reprint is traced in the register's JET (code 70), signed and chained like every event.
    async journal(deps, input) {
      if (input.recordKey === undefined) throw new Error('fr-nf525: a duplicate is journaled with the location\'s record key');
      await jetWriter(deps, { accountId: input.location.account_id, location: input.location, environment: input.environment, key: input.recordKey })(
        'duplicate', { transaction_id: input.transactionId, ticket: input.documentNumber ?? '', copy: String(input.copy) },
      );
    },
  },
  lines: ({ software }) => [
    { placement: 'footer_bottom', text: { fr: `Logiciel de caisse : ${software.name} ${software.version}`, en: `Cash-register software: ${software.name} ${software.version}` } },
  ],
};
