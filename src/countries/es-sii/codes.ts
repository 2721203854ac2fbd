/**
 * SII codes, in English. Unknown codes get a generic message.
 *
 * Sources:
 * - ERR01-ERR05: `ErrorEnvioType` of RespuestaSuministro.xsd (SII 1.1) [verified];
 * - record codes (`CodigoErrorRegistro`) and header codes (SOAP faults
 *   "Codigo[4104]…"): AEAT "Validaciones y errores" of the SII service
 *   (Validaciones_ErroresSII_es_es.pdf), the texts as AEAT returns them and as SII
 *   clients report them (OCA/l10n-spain issues: 1117, 1157, 2011, 3000, 4102).
 *   Some numbers differ from VERI*FACTU's list (SII 4109 is "NIF not identified",
 *   VERI*FACTU 4109 "invalid NIF format"; SII 4111 is a NIF format error, VERI*FACTU
 *   4111 a technical error).
 * - Our own codes for answers that carry no AEAT code (HTTP refusals, server faults).
 *
 * Retriable: only AEAT's technical errors (35xx) and server faults; everything else needs
 * the record or the configuration changed.
 *
 * Codes with a `translation` make the static translation catalog (src/translations/
 * catalog.ts). 3001-3501, 4102, 4103, 4105 and 4106 mean what they mean in VERI*FACTU but
 * have no catalog entry for SII: a lookup names them VERI*FACTU's.
 */
import type { AuthorityCode } from '../types.ts';
import { AEAT_COMMON_CODES } from '../es/aeat-codes.ts';
import { RESEND, error, warning } from '../shared/codes.ts';

export const SII_CODES: Readonly<Record<string, AuthorityCode>> = {
  ...AEAT_COMMON_CODES,
  // Submission-level states of RespuestaSuministro.xsd (ErrorEnvioType).
  ERR01: {
    message: 'The submission does not match the SII schema.', category: 'validation', retriable: false,
    translation: error('The record sent to the tax agency was not in the required format. Contact support.'),
  },
  ERR03: {
    message: 'Unknown declarant.', category: 'configuration', retriable: false,
    translation: error('The tax agency does not know the business sending the records. Check the tax ID of this location.'),
  },
  ERR04: {
    message: 'The declarant must be identified by a Spanish NIF.', category: 'configuration', retriable: false,
    translation: error('The business sending the records needs a Spanish tax ID. Check the tax ID of this location.',
      'The declarant must be identified by a Spanish tax ID (NIF).'),
  },
  ERR05: {
    message: 'The NIF of the representative is incorrect.', category: 'configuration', retriable: false,
    translation: error('The representative\'s tax ID is not valid. Check the certificate used for this location.',
      'The tax ID (NIF) of the representative is incorrect.'),
  },
  // Record validations (1xxx: the record is refused).
  '1104': {
    message: 'Invalid value in the ID field (a party identified without a Spanish NIF).', category: 'validation', retriable: false,
    translation: error(`The customer's foreign identification is not valid. ${RESEND}`,
      'Invalid value in the ID field (identification of a party without a Spanish tax ID).'),
  },
  '1116': {
    message: 'The NIF is not identified in the AEAT census.', category: 'validation', retriable: false,
    translation: error(`A tax ID on the invoice is not registered with the tax agency. ${RESEND}`, 'The tax ID (NIF) is not identified in the AEAT census.'),
  },
  '1117': {
    message: 'The NIF is not identified: the NIF and name given do not match the AEAT census.', category: 'validation', retriable: false,
    translation: error(`The customer's tax ID and name do not match the tax agency's records. ${RESEND}`,
      'The tax ID (NIF) is not identified: tax ID and name do not match the AEAT census.'),
  },
  '1153': {
    message: 'The NIF has an incorrect format.', category: 'validation', retriable: false,
    translation: error(`A tax ID on the invoice has a wrong format. ${RESEND}`, 'The tax ID (NIF) has an incorrect format.'),
  },
  '1157': {
    message: 'The invoice breakdown (DesgloseFactura) must hold at least one block.', category: 'validation', retriable: false,
    translation: error('The invoice was sent without its VAT breakdown. Contact support.'),
  },
  // Accepted with errors (2xxx: registered, to be corrected).
  '2011': {
    message: "Accepted with errors: the counterparty's NIF is not registered in the AEAT census.", category: 'validation', retriable: false,
    translation: warning('The invoice was registered, but the customer\'s tax ID is not known to the tax agency. Check it with the customer.',
      'Accepted with errors: the counterparty\'s tax ID is not registered in the AEAT census.'),
  },
  // Record state at AEAT (3xxx).
  '3001': { message: 'The invoice record has already been cancelled (baja).', category: 'submission', retriable: false },
  '3002': { message: 'The invoice record does not exist at AEAT.', category: 'submission', retriable: false },
  '3500': { message: 'Technical database error at AEAT (information integrity); the record will be sent again.', category: 'submission', retriable: true },
  '3501': { message: 'Technical database error at AEAT; the record will be sent again.', category: 'submission', retriable: true },
  // Header errors, answered as SOAP faults (4xxx).
  '4105': { message: 'Header error: the NIF of the representative is not identified.', category: 'configuration', retriable: false },
  '4106': { message: 'Date format error (dates are DD-MM-YYYY).', category: 'validation', retriable: false },
  '4109': {
    message: 'The NIF is not identified.', category: 'configuration', retriable: false,
    translation: error('A tax ID is not registered with the tax agency. Check the tax ID of this location and of the customer.',
      'The tax ID (NIF) is not identified in the AEAT census.'),
  },
  '4111': {
    message: 'The NIF has an incorrect format.', category: 'configuration', retriable: false,
    translation: error('A tax ID has a wrong format. Check the tax ID of this location.', 'The tax ID (NIF) has an incorrect format.'),
  },
  // Ours: answers without an AEAT code.
  HTTP_403: {
    message: "AEAT refused the connection: the holder's (or a representative's) certificate is required as the TLS client certificate.",
    category: 'auth',
    retriable: false,
  },
  SOAP_SERVER_FAULT: { message: 'AEAT answered with a server-side SOAP fault; the record will be sent again.', category: 'submission', retriable: true },
  SOAP_CLIENT_FAULT: { message: 'AEAT refused the message (SOAP fault without an error code).', category: 'validation', retriable: false },
  INCORRECTO: { message: 'AEAT refused the submission (EstadoEnvio Incorrecto) without a per-record answer.', category: 'submission', retriable: false },
  // Live only: the record would name the placeholder holder 000000000 (client.ts); not sent.
  MISSING_ISSUER_NIF: { message: 'The location has no tax_id: a live SII record must name the holder of the books by NIF, so it is not sent.', category: 'configuration', retriable: false },
};
