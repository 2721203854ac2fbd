/**
 * TicketBAI authority codes, with our own English texts (the authorities answer in
 * Spanish and Basque). Each code's `translation` (user message, severity) is its entry
 * in the static translation catalog (src/translations/catalog.ts).
 *
 * Araba and Gipuzkoa: `ResultadosValidacion/Codigo` of a refused file (Estado 01).
 * Sources, read and compared:
 * - OCA l10n-spain `l10n_es_ticketbai_api/models/ticketbai_response.py`:
 *   `TicketBaiInvoiceResponseCode` (alta: 001-008, 010-013, 015-017) and
 *   `TicketBaiCancellationResponseCode` (anulación: 001, 002, 004, 006-008, 012, 013,
 *   015-019);
 * - MewsSystems/fiscalizations `src/Basque/Mews.Fiscalizations.Basque/Model/ErrorCode.cs`,
 *   which quotes the Gipuzkoa alta document ("cas 01 TICKETBAI ALTA 2.1"): 001-008, 011, 017;
 * - the Zuzendu service notes (Araba/Gipuzkoa 1.3.2) on 002, 003, 004 and 017;
 * - Odoo `l10n_es_edi_tbai` (`_process_post_response_xml_ar_gi`): 005 and 019 mean the
 *   file was already received.
 * Where they differ we keep the wording both allow: 011 is "business validation error"
 * for OCA and "corrected invoice not indicated" for Mews (an instance of it). The
 * four-digit consolidation codes (1104, 1125…) come with Estado 00, as warnings on a
 * received invoice, so they are not listed: they never fail a transaction.
 *
 * The numbering is per service (alta / anulación): 005 and 019 are read as duplicates
 * only where response.ts `DUPLICATE_CODES` says so; the `duplicate` flag here serves the
 * sandbox stub (`reject:005`). Retriable: 006, as response.ts `RETRIABLE_CODES`.
 *
 * Bizkaia (Batuz LROE): the request-level `eus-bizkaia-n3-codigo-respuesta` (B4_1…, N3_…)
 * and the record-level `CodigoErrorRegistro` (B4_2…). Sources: the DFB document
 * "Validaciones y errores BATUZ - LROE" v1.0.13 as quoted by public LROE validators
 * (request checks 1000001-1000030, record checks 2000000-2000070); MewsSystems/fiscalizations
 * `DtoToModelConverter.ConvertBizkaiaErrorCodes` (2000008-2000061); gobl.ticketbai
 * `internal/gateways/ebizkaia.go` (B4_1000004, N3_0000011 retriable; B4_2000003); OCA
 * `l10n_es_ticketbai_api_batuz` `LROEOperationResponseLineCode` (B4_2000003, B4_2000006);
 * Barnetik/tbai-php-lib's Bizkaia tests (B4_2000003 "Registro duplicado"). Duplicates and
 * retriable codes match lroe/response.ts `LROE_DUPLICATE_CODES` / `LROE_RETRIABLE_CODES`.
 */
import type { AuthorityCode } from '../types.ts';
import { RESEND, codeKind, error, warning } from '../shared/codes.ts';

const validation = codeKind('validation', false);
const configuration = codeKind('configuration', false);
const auth = codeKind('auth', false);
const submission = codeKind('submission', false);
/** The authority holds the record already: a `duplicate` outcome, not a failure. */
const duplicate = codeKind('submission', false, { duplicate: true });
/** The authority's own failure: the same record may pass later. */
const serverSide = codeKind('submission', true);

// User messages of the codes that leave the merchant nothing to fix.
const TBAI_RETRY = 'The tax office had a technical problem. The transaction will be sent again automatically.';
const TBAI_HELD = 'The tax office already has this invoice. Nothing more to do.';

export const TICKETBAI_CODES: Readonly<Record<string, AuthorityCode>> = {
  // ---- Araba and Gipuzkoa: ResultadosValidacion/Codigo ----------------------------------
  '001': auth('The certificate of the connection (sender) is not accepted: it is not recognised, revoked or expired.',
    error('The tax office did not accept the certificate of this location. Upload a valid certificate.',
      'The certificate used to connect (sender) is not accepted: not recognised, revoked or expired.')),
  '002': validation('The TicketBAI file does not comply with the XSD schema.', error('The invoice file was not in the required format. Contact support.')),
  '003': validation('The TicketBAI invoice has no detail lines.', error(`The invoice has no lines. ${RESEND}`)),
  '004': validation('A mandatory field is missing or has an invalid value (invoice number, chaining data, TicketBAI licence format, issuer NIF…).',
    error(`The invoice is missing required data or has an invalid value. ${RESEND}`,
      'A mandatory field is missing or invalid (invoice number, chaining data, TicketBAI licence format, issuer tax ID).')),
  '005': duplicate('This TicketBAI invoice has already been received by the Hacienda Foral (duplicate submission).',
    warning(TBAI_HELD, 'The TicketBAI invoice was already received by the provincial tax office (duplicate submission).')),
  '006': serverSide('The Hacienda Foral reception service is not available; the file must be sent again later.',
    warning(TBAI_RETRY, 'The provincial tax office reception service is not available.')),
  '007': auth('The certificate of the connection (sender) is not valid for the invoice issuer.',
    error('The certificate of this location does not belong to the invoice issuer. Upload the issuer\'s certificate.',
      'The certificate used to connect (sender) is not valid for the invoice issuer.')),
  '008': auth('The file signature is not valid, or the signing certificate has expired.',
    error('The invoice signature was not accepted. Check the certificate of this location.')),
  '010': validation('The invoice chaining is incorrect (the previous invoice named in EncadenamientoFacturaAnterior).',
    error('The invoice does not link correctly to the previous one. Contact support.', 'The invoice chaining is incorrect (EncadenamientoFacturaAnterior).')),
  '011': validation('The invoice data fail a business validation of the Hacienda Foral (for example, a corrective invoice that does not name the invoice it corrects).',
    error(`The tax office rejected the invoice data. ${RESEND}`,
      'The invoice data fail a business validation of the provincial tax office (e.g. a corrective invoice that does not name the corrected invoice).')),
  '012': configuration('The TicketBAI licence (LicenciaTBAI) is not valid.',
    error('The TicketBAI licence of this location is not valid. Check country_config.tbai_license.')),
  '013': configuration('The device (certificate) sending the file is not registered for the issuer.',
    error('The device certificate is not registered for this business. Register it with the tax office.')),
  '015': auth('The certificate of the connection (sender) has expired.',
    error('The certificate of this location has expired. Upload a valid certificate.', 'The certificate used to connect (sender) has expired.')),
  '016': auth('The signing certificate has expired.', error('The certificate used to sign invoices has expired. Upload a valid certificate.')),
  '017': submission('The message exceeds the size the reception service allows.', error('The invoice file is too large for the tax office. Contact support.')),
  '018': submission('The invoice to cancel is not registered with the Hacienda Foral.',
    error('The tax office has no record of the invoice being cancelled.', 'The invoice to cancel is not registered with the provincial tax office.')),
  '019': duplicate('The Hacienda Foral already holds this record: the invoice was already received, or its cancellation already registered.',
    warning('The tax office already has this record. Nothing more to do.',
      'The provincial tax office already holds this record: the invoice was already received, or its cancellation already registered.')),

  // ---- Bizkaia (Batuz LROE): request-level codes ----------------------------------------
  B4_1000001: validation('The LROE request does not comply with its schema (a header field is missing or invalid).',
    error('The batch sent to the tax office was not in the required format. Contact support.')),
  B4_1000002: submission('Every record in the LROE request is incorrect (see each record\'s error).',
    error('The tax office rejected every invoice of the batch. See each invoice\'s error.', 'Every record in the LROE request is incorrect.')),
  B4_1000003: submission('The LROE request could not be decompressed.', error('The batch sent to the tax office could not be read. Contact support.')),
  B4_1000004: serverSide('Technical error at Batuz; the request must be sent again later.', warning(TBAI_RETRY, 'Technical error at Batuz.')),
  B4_1000005: validation('The LROE request contains the same invoice more than once.', error('The same invoice appears twice in one batch. Contact support.')),
  B4_1000006: configuration('The LROE model does not match the kind of taxpayer (Modelo 140 for natural persons, 240 for entities).',
    error('The tax ID of this location does not match the kind of taxpayer. Check the tax ID of this location.',
      'The LROE model does not match the kind of taxpayer (Modelo 140 natural persons, 240 entities).')),
  B4_1000021: validation('The fiscal year (Ejercicio) of the LROE request does not match the issue year of its invoices, or is later than the current year.',
    error('The batch year does not match the invoice dates. Contact support.',
      'The fiscal year of the LROE request does not match the issue year of its invoices, or is later than the current year.')),
  B4_1000022: configuration('The NIF of the party in the request header does not match the taxpayer (ObligadoTributario).',
    error('The tax ID sent does not match the business. Check the tax ID of this location.',
      'The NIF in the request header does not match the taxpayer (ObligadoTributario).')),
  B4_1000026: validation('Wrong LROE section (apartado) in the request header.', error('The batch was sent to the wrong LROE section. Contact support.')),
  B4_1000030: configuration('The name of the party in the request header does not match the taxpayer (ObligadoTributario).',
    error('The business name sent does not match the taxpayer. Check country_config.legal_name of this location.',
      'The name in the request header does not match the taxpayer (ObligadoTributario).')),
  N3_0000011: serverSide('Batuz could not process the request ("other" error: see the message it returned); it must be sent again later.',
    warning(TBAI_RETRY, 'Batuz could not process the request ("other" error; see the message it returned).')),

  // ---- Bizkaia (Batuz LROE): record-level codes (CodigoErrorRegistro) -------------------
  B4_2000000: validation('A mandatory field of the record is missing.', error(`The invoice is missing required data. ${RESEND}`)),
  B4_2000001: validation('The TicketBAI file in the record does not comply with its schema.',
    error('The invoice file was not in the required format. Contact support.')),
  B4_2000002: configuration('The issuer NIF of the TicketBAI file is not the taxpayer (ObligadoTributario) of the request.',
    error('The invoice issuer does not match the business sending it. Check the tax ID of this location.',
      'The issuer tax ID of the TicketBAI file is not the taxpayer of the request.')),
  B4_2000003: duplicate('The invoice record was already received in the LROE (duplicate).', warning(TBAI_HELD)),
  B4_2000004: submission('The record being cancelled does not exist at Batuz.', error('The tax office has no record of the invoice being cancelled.')),
  B4_2000005: validation('The invoice issue date is not a valid DD-MM-YYYY date or is later than today.', error(`The invoice date is not valid. ${RESEND}`)),
  B4_2000006: duplicate('The record is already cancelled at Batuz.', warning('This invoice was already cancelled with the tax office. Nothing more to do.')),
  B4_2000008: validation('The invoice issue date is later than the current date.', error(`The invoice is dated in the future. ${RESEND}`)),
  B4_2000011: validation('A tax ID (NIF) has an invalid format or is not a valid document.', error(`A tax ID on the invoice is not valid. ${RESEND}`)),
  B4_2000012: validation('The country code is required when the identification is not an EU VAT number (NIF-IVA).',
    error('The customer\'s country is missing. Add it (customer_context.country) and send the transaction again.',
      'The country code is required when the identification is not an EU VAT number.')),
  B4_2000013: validation('The country code does not match the first two characters of the EU VAT number (NIF-IVA).',
    error(`The customer's country does not match their VAT number. ${RESEND}`,
      'The country code does not match the first two characters of the EU VAT number.')),
  B4_2000016: validation('Corrected invoices are given on an invoice that is not corrective.',
    error(`A non-corrective invoice refers to corrected invoices. ${RESEND}`)),
  B4_2000030: validation('The VAT breakdown needs an exempt or a non-exempt part (or both).',
    error('The invoice VAT breakdown is incomplete. Contact support.')),
  B4_2000038: validation('The breakdown by operation type needs services, deliveries or both.',
    error('The invoice VAT breakdown is incomplete. Contact support.')),
  B4_2000045: validation('The corrective invoice does not name the invoice it corrects.',
    error('The refund must name the invoice it corrects (metadata.original_invoice_number and original_issue_date). Add them and send again.')),
  B4_2000060: validation('The invoice chaining is missing or invalid.', error('The invoice does not link correctly to the previous one. Contact support.')),
  B4_2000061: validation('The invoice chaining is missing or invalid.', error('The invoice does not link correctly to the previous one. Contact support.')),
  B4_2000063: configuration('The TicketBAI licence is not registered.',
    error('The TicketBAI licence of this location is not registered. Check country_config.tbai_license.')),
  B4_2000064: configuration('The developer NIF does not match the TicketBAI licence.',
    error('The software details do not match the TicketBAI licence. Contact support.', 'The developer tax ID does not match the TicketBAI licence.')),
  B4_2000065: configuration('The developer identifier does not match the TicketBAI licence.',
    error('The software details do not match the TicketBAI licence. Contact support.')),
  B4_2000066: configuration('The software name does not match the TicketBAI licence.',
    error('The software details do not match the TicketBAI licence. Contact support.')),
  B4_2000070: auth('The signature does not meet the TicketBAI signature policy, or the signing certificate is not valid.',
    error('The invoice signature was not accepted. Check the certificate of this location.')),
};
