/**
 * Codes that AEAT's web services (VERI*FACTU and SII) share, with the same meaning in
 * both lists (AEAT `errores.properties` for VERI*FACTU; "Validaciones y errores" for SII).
 * Messages are our English renderings of AEAT's Spanish text. One object per code, spread
 * into both systems' lists: the translation catalog gives a code one entry for both
 * systems when they share its object (a lookup without a system still finds it).
 */
import type { AuthorityCode } from '../types.ts';
import { RESEND, error, warning } from '../shared/codes.ts';

export const AEAT_COMMON_CODES: Readonly<Record<string, AuthorityCode>> = {
  '1100': {
    message: 'Incorrect value or type in a field.', category: 'validation', retriable: false,
    translation: error(`A field of the invoice has an invalid value (often a tax ID or a name). ${RESEND}`, 'Invalid value or type in a field.'),
  },
  '3000': {
    message: 'Duplicate invoice record: AEAT already holds an invoice with this issuer, number and issue date.',
    category: 'submission',
    retriable: false,
    duplicate: true,
    translation: warning('The tax agency already has this invoice. Nothing more to do.', 'Duplicate record: this invoice is already registered with the AEAT.'),
  },
  '4102': { message: 'The XML does not match the schema: a mandatory field is missing.', category: 'validation', retriable: false },
  '4103': { message: 'Unexpected error while parsing the XML.', category: 'validation', retriable: false },
  '4104': {
    message: 'Header error: the NIF of the obligated issuer (holder of the books) is not identified.',
    category: 'configuration',
    retriable: false,
    translation: error(
      'Your business tax ID is not recognised by the tax agency. Check the tax ID of this location.',
      'Header error: the tax ID (NIF) of the taxpayer sending the records is not identified by the AEAT.',
    ),
  },
};
