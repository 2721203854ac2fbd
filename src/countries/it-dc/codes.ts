/** Italy Documento Commerciale authority codes: exactly the spec's table (Errors). */
import type { AuthorityCode } from '../types.ts';

export const DC_CODES: Readonly<Record<string, AuthorityCode>> = {
  '0100': { message: 'Non-compliant file.', category: 'validation', retriable: false },
  '0200': { message: 'Validation error.', category: 'validation', retriable: false },
  '0403': { message: 'Not authorized (certificate).', category: 'auth', retriable: false },
  '0429': { message: 'Authority rate limit: retried automatically.', category: 'submission', retriable: true },
  '0500': { message: 'Authority server error: retried automatically.', category: 'submission', retriable: true },
};
