/**
 * TicketBAI authority codes (Haciendas Forales: `ResultadosValidacion/Codigo` in the
 * Araba and Gipuzkoa answer). Only codes whose meaning we are sure of are listed; the
 * full per-territory lists (and Bizkaia's LROE codes) come with the Spain issue, and an
 * unknown code gets a generic message meanwhile.
 *
 * 005 and 019: the file was already received (same issuer, series and number); the
 * Hacienda holds the invoice, so it is a duplicate, not a failure (as Odoo's
 * l10n_es_edi_tbai treats them).
 */
import type { AuthorityCode } from '../types.ts';

export const TICKETBAI_CODES: Readonly<Record<string, AuthorityCode>> = {
  '005': {
    message: 'This TicketBAI invoice has already been received by the Hacienda Foral (duplicate submission).',
    category: 'submission',
    retriable: false,
    duplicate: true,
  },
  '019': {
    message: 'An invoice with this series and number has already been received by the Hacienda Foral (duplicate submission).',
    category: 'submission',
    retriable: false,
    duplicate: true,
  },
};
