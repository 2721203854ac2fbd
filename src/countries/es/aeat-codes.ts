/**
 * Codes that AEAT's web services (VERI*FACTU and SII) share, with the same meaning in
 * both lists (AEAT `errores.properties` for VERI*FACTU; "Validaciones y errores" for SII).
 * Messages are our English renderings of AEAT's Spanish text.
 */
import type { AuthorityCode } from '../types.ts';

export const AEAT_COMMON_CODES: Readonly<Record<string, AuthorityCode>> = {
  '1100': { message: 'Incorrect value or type in a field.', category: 'validation', retriable: false },
  '3000': {
    message: 'Duplicate invoice record: AEAT already holds an invoice with this issuer, number and issue date.',
    category: 'submission',
    retriable: false,
    duplicate: true,
  },
  '4102': { message: 'The XML does not match the schema: a mandatory field is missing.', category: 'validation', retriable: false },
  '4103': { message: 'Unexpected error while parsing the XML.', category: 'validation', retriable: false },
  '4104': {
    message: 'Header error: the NIF of the obligated issuer (holder of the books) is not identified.',
    category: 'configuration',
    retriable: false,
  },
};
