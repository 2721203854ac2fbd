import type { ReceiptFacts } from '../types.ts';
import { jetWriter } from './closures/processor.ts';

/**
 * An NF525 ticket (CGI art. 286-I-3° bis; FORMATS.md §8, items as industry summaries of
 * the référentiel give them): its number on the register (`document_number`), the
 * signature extract (`signature_extract`), and the name and version of the cash-register
 * software that made it.
 */
export const NF525_RECEIPT: ReceiptFacts = {
  language: 'fr',
  title: (_hints, tx) => (tx.type === 'sale' ? { fr: 'Ticket de caisse', en: 'Receipt' } : { fr: 'Ticket de remboursement', en: 'Refund receipt' }),
  labels: {
    document_number: { fr: 'Ticket n°', en: 'Receipt no.' },
    signature_extract: { fr: 'Signature', en: 'Signature' },
  },
  qr: {},
  // The location's tax id is what the merchant registered: usually the SIRET (14 digits) or
  // SIREN (9), sometimes the intra-EU VAT number (FR + 2-character key + SIREN, CGI art.
  // 242 nonies A I-3°). The generic "N° TVA" would call a SIRET a VAT number on the ticket.
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
