/**
 * VERI*FACTU codes: AEAT's `errores.properties` of the SIF service (tikeV1.0,
 * `https://prewww2.aeat.es/static_files/common/internet/dep/aplicaciones/es/aeat/tikeV1.0/cont/ws/errores.properties`,
 * as gobl.verifactu cites it), the codes an integrator meets, in English. The file has
 * four groups, kept here:
 * - 4xxx / 35xx: the whole submission is rejected (usually a SOAP Fault `Codigo[4102]…`);
 * - 1xxx: the record is rejected (or the whole request when the error is in the header);
 * - 3xxx: the record is rejected against what AEAT already holds (3000 duplicate);
 * - 2xxx: the record is accepted with errors (`AceptadoConErrores`) and must be corrected.
 * "Technical error" codes are AEAT's own failures: retriable. Unknown codes get a generic
 * message. The same codes, with user-facing text, are in ../../translations/catalog.ts.
 * Codes that are not AEAT's (HTTP refusals, flow control) are at the end.
 */
import type { AuthorityCode } from '../types.ts';
import { AEAT_COMMON_CODES } from '../es/aeat-codes.ts';

const v = (message: string): AuthorityCode => ({ message, category: 'validation', retriable: false });
const cfg = (message: string): AuthorityCode => ({ message, category: 'configuration', retriable: false });
const auth = (message: string): AuthorityCode => ({ message, category: 'auth', retriable: false });
const sub = (message: string): AuthorityCode => ({ message, category: 'submission', retriable: false });
/** AEAT's own technical failure: the same record may pass later. */
const tech = (message: string): AuthorityCode => ({ message, category: 'submission', retriable: true });

export const VERIFACTU_CODES: Readonly<Record<string, AuthorityCode>> = {
  // 1100, 3000 (duplicate), 4102, 4103, 4104: shared with SII.
  ...AEAT_COMMON_CODES,

  // ---- the whole submission is rejected ------------------------------------------
  '4105': cfg('Header error: the NIF of the Representante block is not identified.'),
  '4106': v('Incorrect date format.'),
  '4107': cfg('The NIF is not identified in the AEAT census.'),
  '4108': tech('Technical error at AEAT while obtaining the certificate.'),
  '4109': v('The NIF has an invalid format.'),
  '4110': tech('Technical error at AEAT while checking the powers of representation.'),
  '4111': tech('Technical error at AEAT while creating the filing.'),
  '4112': auth('The certificate holder must be the issuer, a social collaborator, an authorised representative or a successor.'),
  '4113': v('The XML does not match the schema: too many records in a block.'),
  '4114': v('The XML does not match the schema: more invoices than allowed in one request.'),
  '4115': cfg('The NIF of the ObligadoEmision block is incorrect.'),
  '4116': cfg('Header error: the NIF of the ObligadoEmision block has an invalid format.'),
  '4117': cfg('Header error: the NIF of the Representante block has an invalid format.'),
  '4118': cfg('Technical error: the address (endpoint) does not match the input file.'),
  '4119': v('The record contains characters that are not UTF-8 encoded.'),
  '4120': v('Header error: invalid FechaFinVeriFactu (must be 31-12 of the current or the previous year).'),
  '4121': v('Header error: invalid Incidencia value.'),
  '4127': v('Header error: voluntary submission (RemisionVoluntaria) is only for VERI*FACTU systems.'),
  '4128': tech('Technical error at AEAT while reading a reference table.'),
  '4134': tech('The AEAT service is not active.'),
  '4136': v('The RegistroAlta node is missing, or the node before it is wrong.'),
  '4137': v('The RegistroAnulacion node is missing, or the node before it is wrong.'),
  '4138': v('Empty request.'),
  '4139': cfg('The service is not enabled in production.'),
  '3500': tech('Technical database error at AEAT: information integrity error.'),
  '3501': tech('Technical database error at AEAT.'),

  // ---- the record is rejected ----------------------------------------------------
  '1101': v('Invalid CodigoPais (country code) value.'),
  '1102': v('Invalid IDType value.'),
  '1103': v('Invalid ID value.'),
  '1104': v('Invalid NumSerieFactura (invoice series and number) value.'),
  '1105': v('Invalid FechaExpedicionFactura (issue date) value.'),
  '1106': v('TipoFactura (invoice type) is not one of the allowed values.'),
  '1107': v('Invalid TipoRectificativa (corrective invoice kind) value.'),
  '1108': cfg('The NIF of IDEmisorFactura must be the same as the NIF of ObligadoEmision.'),
  '1109': v('The NIF is not identified in the AEAT census.'),
  '1110': v('The NIF is not identified in the AEAT census.'),
  '1111': v('CodigoPais is required when IDType is not 02.'),
  '1112': v('FechaExpedicionFactura (issue date) is later than the current date.'),
  '1114': v('A corrective invoice must give TipoRectificativa.'),
  '1115': v('TipoRectificativa must not be given when the invoice is not a corrective invoice.'),
  '1117': v('FacturasRectificadas must not be given when the invoice is not a corrective invoice.'),
  '1118': v('ImporteRectificacion is required for a corrective invoice by substitution.'),
  '1119': v('ImporteRectificacion must not be given unless the invoice corrects by substitution.'),
  '1120': v('IDEmisorFactura of the IDFactura block has an invalid type.'),
  '1121': v('The ID is not identified in the AEAT census.'),
  '1122': v('CodigoPais does not match the first two characters of the identifier.'),
  '1123': v('The NIF has an invalid format.'),
  '1124': v('TipoImpositivo (VAT rate) is not one of the allowed values.'),
  '1125': v('FechaOperacion (operation date) is later than allowed.'),
  '1126': v('CodigoPais may be ES only when IDType is passport (03) or not registered (07).'),
  '1129': tech('Technical error at AEAT while obtaining the invoicing agreement.'),
  '1130': v('NumSerieFactura contains characters that are not allowed.'),
  '1133': v('FechaExpedicionFactura must not be more than twenty years in the past.'),
  '1142': v('CuotaRepercutida does not match BaseImponibleOimporteNoSujeto and TipoImpositivo.'),
  '1143': v('CuotaRepercutida and BaseImponibleOimporteNoSujeto must have the same sign.'),
  '1145': v('Incorrect date format.'),
  '1150': v('A simplified invoice (F2) cannot exceed 3,000 (sum of the taxable bases and VAT of all lines).'),
  '1152': v('The issue date cannot be earlier than 28 October 2024.'),
  '1153': v('RechazoPrevio X is only allowed together with Subsanacion S.'),
  '1154': v('The NIF of the issuer of the corrected or replaced invoice is not identified in the AEAT census.'),
  '1172': v('NIF or ObligadoEmision is empty.'),
  '1174': v('Invalid FechaExpedicionFactura in the RegistroAnterior block.'),
  '1175': v('Invalid NumSerieFactura in the RegistroAnterior block.'),
  '1176': cfg('Invalid NIF in the SistemaInformatico block.'),
  '1177': cfg('Invalid IdSistemaInformatico in the SistemaInformatico block.'),
  '1179': cfg('Error in the SistemaInformatico block.'),
  '1180': v('Error in the Encadenamiento (chaining) block.'),
  '1181': v('Invalid CalificacionOperacion value.'),
  '1182': v('Invalid OperacionExenta value.'),
  '1189': v('The Destinatarios (recipients) block is required for invoice types F1, F3, R1, R2, R3 and R4.'),
  '1190': v('The Destinatarios (recipients) block is not allowed for invoice types F2 and R5.'),
  '1193': v('A recipient NIF in Destinatarios must be identified and differ from the NIF of ObligadoEmision.'),
  '1195': v('One of OperacionExenta or CalificacionOperacion must be given.'),
  '1196': v('OperacionExenta and CalificacionOperacion exclude each other.'),
  '1207': v('CuotaRepercutida may differ from 0 only when CalificacionOperacion is S1.'),
  '1208': v('With CalificacionOperacion S1 and no BaseImponibleACoste, TipoImpositivo and CuotaRepercutida are required.'),
  '1210': v('ImporteTotal does not match BaseImponibleOimporteNoSujeto, CuotaRepercutida and CuotaRecargoEquivalencia.'),
  '1215': v('Error in the ObligadoEmision block.'),
  '1216': v('CuotaTotal does not match CuotaRepercutida and CuotaRecargoEquivalencia.'),
  '1218': v('Invalid Impuesto (tax) value.'),
  '1219': v('Invalid IDEmisorFactura value.'),
  '1220': cfg('Invalid NombreSistemaInformatico value.'),
  '1223': cfg('The SistemaInformatico block must give either NIF or IDOtro, not both.'),
  '1237': v('With CalificacionOperacion N1 or N2 and IVA, TipoImpositivo, CuotaRepercutida and the equivalence surcharge must not be given.'),
  '1238': v('An exempt operation must not give TipoImpositivo, CuotaRepercutida or the equivalence surcharge.'),
  '1239': v('Error in the Destinatario block.'),
  '1241': tech('Technical error at AEAT while obtaining the SistemaInformatico.'),
  '1242': cfg('The SistemaInformatico does not exist.'),
  '1243': tech('Technical error at AEAT while computing the time zone date.'),
  '1244': v('FechaHoraHusoGenRegistro has an invalid format.'),
  '1245': v('ClaveRegimen is required when Impuesto is empty, 01 or 03.'),
  '1246': v('Invalid ClaveRegimen (VAT regime key) value.'),
  '1247': v('Invalid TipoHuella value.'),
  '1251': v('Invalid IDVersion value.'),
  '1256': tech('Technical error at AEAT while obtaining the issue date limit.'),
  '1262': v('The Huella length does not meet the specification.'),
  '1268': v('The FechaHoraHusoGenRegistro length does not meet the specification.'),
  '1269': v('The RegistroAnterior block is not filled in correctly.'),
  '1274': v('Invalid PrimerRegistro value.'),
  '1278': v('The previous record\'s huella must differ from this record\'s huella.'),
  '1282': v('When the header NIF is a natural person, its NombreRazon must be given too.'),
  '1283': v('When the counterparty NIF is a natural person, its NombreRazon must be given too.'),

  // ---- rejected against what AEAT already holds ----------------------------------
  '3001': sub('The invoice record has already been cancelled.'),
  '3002': sub('The invoice record does not exist.'),
  '3003': auth('The submitter does not have the permissions needed to update this invoice record.'),
  '3004': sub('The invoice cannot be changed: it was registered through the AEAT web form.'),

  // ---- accepted with errors (to be corrected with a Subsanacion) -----------------
  '2000': v('Accepted with errors: the huella (record hash) does not match AEAT\'s calculation.'),
  '2001': v('Accepted with errors: the NIF of the Destinatarios block is not identified in the AEAT census.'),
  '2002': v('Accepted with errors: the length of the previous record\'s huella does not meet the specification.'),
  '2003': v('Accepted with errors: the content of the previous record\'s huella does not meet the specification.'),
  '2004': cfg('Accepted with errors: FechaHoraHusoGenRegistro must be AEAT\'s current time, within a margin (check the clock).'),
  '2005': v('Accepted with errors: ImporteTotal does not match the bases, quotas and surcharges given.'),
  '2006': v('Accepted with errors: CuotaTotal does not match the quotas and surcharges given.'),
  '2007': v('Accepted with errors: marked as the first record although AEAT holds records of this issuer and software.'),
  '2008': v('Accepted with errors: the previous record\'s huella must differ from this record\'s huella.'),

  // ---- not AEAT codes: what this client reports itself ---------------------------
  HTTP_401: auth('AEAT refused the connection: the TLS client certificate is missing or not accepted.'),
  HTTP_403: auth('AEAT refused the connection: the TLS client certificate is missing or not accepted.'),
  HTTP_429: { message: 'AEAT is limiting the request rate.', category: 'network', retriable: true },
  WAIT_TIME: { message: 'AEAT asked to wait before the next submission for this issuer (TiempoEsperaEnvio).', category: 'submission', retriable: true },
  SOAP_FAULT: { message: 'AEAT answered with a SOAP fault without an error code.', category: 'unknown', retriable: false },
  // A record of a multi-record request that AEAT's answer names in no RespuestaLinea: we
  // do not know its fate, so it is sent again (AEAT answers 3000 if it holds it already).
  NO_RECORD_LINE: { message: 'AEAT\'s answer has no line for this record: it will be sent again.', category: 'submission', retriable: true },
  INVALID_RECORD: { message: 'The stored record is not a VERI*FACTU record and cannot be sent.', category: 'validation', retriable: false },
  // Live only: the record would name the placeholder issuer 000000000 (client.ts); not sent.
  MISSING_ISSUER_NIF: cfg('The location has no tax_id: a live VERI*FACTU record must name its issuer by NIF, so it is not sent.'),
};
