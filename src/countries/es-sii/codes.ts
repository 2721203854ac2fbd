/**
 * SII codes (AEAT "Validaciones y errores" of the SII service), in English. Unknown
 * codes get a generic message. Note that some numbers differ from VERI*FACTU's list
 * (SII 4109 is "NIF not identified", VERI*FACTU 4109 "invalid NIF format").
 */
import type { AuthorityCode } from '../types.ts';
import { AEAT_COMMON_CODES } from '../es/aeat-codes.ts';

export const SII_CODES: Readonly<Record<string, AuthorityCode>> = {
  ...AEAT_COMMON_CODES,
  '4105': { message: 'Header error: the NIF of the representative is not identified.', category: 'configuration', retriable: false },
  '4106': { message: 'Date format error (dates are DD-MM-YYYY).', category: 'validation', retriable: false },
  '4109': { message: 'The NIF is not identified.', category: 'validation', retriable: false },
};
