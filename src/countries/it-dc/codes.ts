/**
 * Italy Documento Commerciale authority codes: exactly the spec's table (Errors), each
 * with its entry in the static translation catalog (src/translations/catalog.ts).
 */
import type { AuthorityCode } from '../types.ts';
import { RESEND, error, warning } from '../shared/codes.ts';

export const DC_CODES: Readonly<Record<string, AuthorityCode>> = {
  '0100': {
    message: 'Non-compliant file.', category: 'validation', retriable: false,
    translation: error('The commercial document was not in the required format. Contact support.'),
  },
  '0200': { message: 'Validation error.', category: 'validation', retriable: false, translation: error(`The commercial document has invalid data. ${RESEND}`) },
  '0403': {
    message: 'Not authorized (certificate).', category: 'auth', retriable: false,
    translation: error('The seal certificate of this device is not authorised. Check the certificate of this location.',
      'Not authorized: the certificate is not accepted.'),
  },
  '0429': {
    message: 'Authority rate limit: retried automatically.', category: 'submission', retriable: true,
    translation: warning('The tax authority is busy. The document will be sent again automatically.',
      'Too many requests: the authority\'s rate limit was reached.'),
  },
  '0500': {
    message: 'Authority server error: retried automatically.', category: 'submission', retriable: true,
    translation: warning('The tax authority had a technical problem. The document will be sent again automatically.', 'Authority server error.'),
  },
};
