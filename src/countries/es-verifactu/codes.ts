/**
 * VERI*FACTU codes: AEAT `errores.properties` of the SIF service (tikeV1.0), the ones an
 * integrator meets most, in English. Unknown codes get a generic message.
 */
import type { AuthorityCode } from '../types.ts';
import { AEAT_COMMON_CODES } from '../es/aeat-codes.ts';

export const VERIFACTU_CODES: Readonly<Record<string, AuthorityCode>> = {
  ...AEAT_COMMON_CODES,
  '1102': { message: 'Invalid IDType value.', category: 'validation', retriable: false },
  '1104': { message: 'Invalid NumSerieFactura (invoice series and number) value.', category: 'validation', retriable: false },
  '1105': { message: 'Invalid FechaExpedicionFactura (issue date) value.', category: 'validation', retriable: false },
  '1106': { message: 'TipoFactura (invoice type) is not one of the allowed values.', category: 'validation', retriable: false },
  '1108': {
    message: 'The NIF of IDEmisorFactura must be the same as the NIF of ObligadoEmision.',
    category: 'validation',
    retriable: false,
  },
  '1112': { message: 'FechaExpedicionFactura (issue date) is later than the current date.', category: 'validation', retriable: false },
  '1117': {
    message: 'FacturasRectificadas must not be given when the invoice is not a corrective invoice.',
    category: 'validation',
    retriable: false,
  },
  '1123': { message: 'The NIF has an invalid format.', category: 'validation', retriable: false },
  '1130': { message: 'NumSerieFactura contains characters that are not allowed.', category: 'validation', retriable: false },
  '3001': { message: 'The invoice record has already been cancelled.', category: 'submission', retriable: false },
  '3002': { message: 'The invoice record does not exist.', category: 'submission', retriable: false },
  '4107': { message: 'The NIF is not identified in the AEAT census.', category: 'configuration', retriable: false },
  '4109': { message: 'The NIF has an invalid format.', category: 'validation', retriable: false },
  '4112': {
    message: 'The certificate holder must be the issuer, a social collaborator, an authorised representative or a successor.',
    category: 'auth',
    retriable: false,
  },
};
