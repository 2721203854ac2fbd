import type { Translated, TranslationCountry, TranslationSystem } from './types.ts';

/**
 * The static translation catalog: authority error codes we know, in English, with a
 * short message a merchant can act on. Only codes whose meaning is certain are here
 * (from the authorities' published code lists); anything else goes to the AI
 * translator, or is passed through untranslated.
 *
 * Keyed by (country, system, code). One entry may serve several systems when the code
 * means the same in each (AEAT's 1100 and 3000 in VERI*FACTU and SII); where a code
 * means different things per system (AEAT 1104, 1117, 4109, 4111), there is one entry
 * per system, and a lookup without a system finds neither (ambiguous).
 *
 * Severity: `error` = not accepted; `warning` = accepted with remarks, already
 * registered, or retried automatically; `info` = nothing to do.
 */
export interface CatalogEntry extends Translated {
  country: TranslationCountry;
  systems: readonly TranslationSystem[];
  code: string;
}

type Row = [code: string, translation: string, user_message: string, category: Translated['category'], severity: Translated['severity'], retriable: boolean];

const rows = (country: TranslationCountry, systems: readonly TranslationSystem[], list: Row[]): CatalogEntry[] =>
  list.map(([code, translation, user_message, category, severity, retriable]) => ({ country, systems, code, translation, user_message, category, severity, retriable }));

const RESEND = 'Correct it and send the transaction again.';

// AEAT: the same meaning in VERI*FACTU and SII.
const AEAT_SHARED = rows('ES', ['verifactu', 'sii'], [
  ['1100', 'Invalid value or type in a field.', `A field of the invoice has an invalid value (often a tax ID or a name). ${RESEND}`, 'validation', 'error', false],
  ['3000', 'Duplicate record: this invoice is already registered with the AEAT.', 'The tax agency already has this invoice. Nothing more to do.', 'submission', 'warning', false],
  ['4104', 'Header error: the tax ID (NIF) of the taxpayer sending the records is not identified by the AEAT.', 'Your business tax ID is not recognised by the tax agency. Check the tax ID of this location.', 'configuration', 'error', false],
]);

// AEAT VERI*FACTU (the published list of error codes of the VERI*FACTU service, errores.properties of
// tikeV1.0; the same codes as src/countries/es-verifactu/codes.ts).
const VERIFACTU = rows('ES', ['verifactu'], [
  ['1102', 'Invalid IDType (type of identification document) value.', `The customer's identification document type is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1104', 'Invalid invoice series and number (NumSerieFactura).', `The invoice number is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1105', 'Invalid invoice issue date (FechaExpedicionFactura).', `The invoice date is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1106', 'The invoice type (TipoFactura) is not one of the allowed values.', `The invoice type is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1108', 'The issuer tax ID (IDEmisorFactura) must be the same as the tax ID of the taxpayer obliged to issue (ObligadoEmision).', 'The invoice issuer does not match the business sending it. Check the tax ID of this location.', 'configuration', 'error', false],
  ['1109', 'The tax ID (NIF) is not identified in the AEAT census.', `A tax ID on the invoice is not registered with the tax agency. ${RESEND}`, 'validation', 'error', false],
  ['1110', 'The tax ID (NIF) is not identified in the AEAT census.', `A tax ID on the invoice is not registered with the tax agency. ${RESEND}`, 'validation', 'error', false],
  ['1112', 'The invoice issue date is later than today.', `The invoice is dated in the future. ${RESEND}`, 'validation', 'error', false],
  ['1117', 'The corrected invoices block (FacturasRectificadas) is only allowed on a corrective invoice.', `A non-corrective invoice refers to corrected invoices. ${RESEND}`, 'validation', 'error', false],
  ['1124', 'The VAT rate (TipoImpositivo) is not one of the allowed values.', `A VAT rate on the invoice is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1150', 'A simplified invoice (F2) cannot exceed 3,000 (sum of the taxable bases and VAT of all lines).', 'Simplified invoices (tickets) cannot exceed 3,000 EUR. Issue a full invoice with the customer\'s details instead.', 'validation', 'error', false],
  ['1189', 'The recipients block (Destinatarios) is required for invoice types F1, F3, R1, R2, R3 and R4.', 'This kind of invoice needs the customer\'s name and tax ID. Add them and send the transaction again.', 'validation', 'error', false],
  ['1190', 'The recipients block (Destinatarios) is not allowed for invoice types F2 and R5.', `A simplified invoice must not name a customer. ${RESEND}`, 'validation', 'error', false],
  ['1210', 'The invoice total (ImporteTotal) does not match the taxable bases, VAT and equivalence surcharge given.', `The invoice total does not match its lines and taxes. ${RESEND}`, 'validation', 'error', false],
  ['1216', 'The total tax (CuotaTotal) does not match the VAT and equivalence surcharge given.', `The tax total does not match the tax of the lines. ${RESEND}`, 'validation', 'error', false],
  ['1246', 'Invalid VAT regime key (ClaveRegimen).', `The VAT regime of the invoice is not valid. ${RESEND}`, 'validation', 'error', false],
  ['2000', 'Accepted with errors: the record hash (huella) does not match the AEAT\'s calculation.', 'The invoice was registered, but its fingerprint did not match. Contact support so the record chain can be checked.', 'validation', 'warning', false],
  ['2001', 'Accepted with errors: the recipient\'s tax ID is not identified in the AEAT census.', 'The invoice was registered, but the customer\'s tax ID is not known to the tax agency. Check it with the customer.', 'validation', 'warning', false],
  ['2004', 'Accepted with errors: the record generation time (FechaHoraHusoGenRegistro) must be the AEAT\'s current time, within a margin.', 'The invoice was registered, but the device clock seems wrong. Check the date and time of your till.', 'configuration', 'warning', false],
  ['3001', 'The invoice record has already been cancelled.', 'This invoice was already cancelled with the tax agency.', 'submission', 'warning', false],
  ['3002', 'The invoice record does not exist at the AEAT.', 'The tax agency has no record of the invoice being corrected or cancelled.', 'submission', 'error', false],
  ['3003', 'The submitter does not have the permissions needed to update this invoice record.', 'The certificate used may not change this invoice. Use the certificate of the business that issued it.', 'auth', 'error', false],
  ['3500', 'Technical database error at the AEAT (information integrity).', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['3501', 'Technical database error at the AEAT.', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['4102', 'The XML does not match the schema: a mandatory field is missing.', 'The record sent to the tax agency was incomplete. Contact support.', 'validation', 'error', false],
  ['4103', 'Unexpected error while parsing the XML.', 'The tax agency could not read the record. Contact support.', 'validation', 'error', false],
  ['4106', 'Incorrect date format.', 'A date in the record has a wrong format. Contact support.', 'validation', 'error', false],
  ['4107', 'The tax ID (NIF) is not identified in the AEAT census.', 'Your business tax ID is not registered with the tax agency. Check the tax ID of this location.', 'configuration', 'error', false],
  ['4109', 'Incorrect tax ID (NIF) format.', 'A tax ID has a wrong format. Check the tax ID of this location and of the customer.', 'validation', 'error', false],
  ['4110', 'Technical error at the AEAT while checking the powers of representation.', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['4111', 'Technical error at the AEAT while creating the filing.', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['4112', 'The certificate holder must be the taxpayer obliged to issue, a social collaborator, an authorised representative or a successor.', 'The certificate does not belong to this business or to someone authorised to act for it. Upload the business\'s own certificate.', 'auth', 'error', false],
  ['4115', 'Invalid tax ID (NIF) of the taxpayer obliged to issue (ObligadoEmision).', 'Your business tax ID is not valid. Check the tax ID of this location.', 'configuration', 'error', false],
  ['4116', 'Header error: the tax ID (NIF) of the taxpayer obliged to issue has an incorrect format.', 'Your business tax ID has a wrong format. Check the tax ID of this location.', 'configuration', 'error', false],
  ['4119', 'The record contains characters that are not UTF-8 encoded.', 'The record contains characters the tax agency does not accept. Remove special characters from names and descriptions.', 'validation', 'error', false],  // Whole submission rejected (AEAT errores.properties, 41xx).
  ['4105', 'Header error: the tax ID (NIF) of the representative (Representante) is not identified.', 'The tax ID of the representative sending the records is not recognised by the tax agency. Contact support.', 'configuration', 'error', false],
  ['4108', 'Technical error at the AEAT while obtaining the certificate.', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['4113', 'The XML does not match the schema: too many records in a block.', 'Too many records were sent at once. Contact support.', 'validation', 'error', false],
  ['4114', 'The XML does not match the schema: more invoices than allowed in one request.', 'Too many invoices were sent at once. Contact support.', 'validation', 'error', false],
  ['4117', 'Header error: the tax ID (NIF) of the representative (Representante) has an incorrect format.', 'The tax ID of the representative has a wrong format. Contact support.', 'configuration', 'error', false],
  ['4118', 'Technical error: the service address does not match the file sent.', 'The record was sent to the wrong tax agency service. Contact support.', 'configuration', 'error', false],
  ['4120', 'Header error: invalid end date of voluntary VERI*FACTU use (FechaFinVeriFactu).', 'The record header has an invalid date. Contact support.', 'validation', 'error', false],
  ['4121', 'Header error: invalid incident flag (Incidencia).', 'The record header is invalid. Contact support.', 'validation', 'error', false],
  ['4127', 'Header error: voluntary submission (RemisionVoluntaria) is only for VERI*FACTU systems.', 'The record header is invalid. Contact support.', 'validation', 'error', false],
  ['4128', 'Technical error at the AEAT while reading a reference table.', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['4134', 'The AEAT service is not active.', 'The tax agency service is not available right now. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['4136', 'The invoice record (RegistroAlta) is missing, or the element before it is wrong.', 'The record sent to the tax agency was malformed. Contact support.', 'validation', 'error', false],
  ['4137', 'The cancellation record (RegistroAnulacion) is missing, or the element before it is wrong.', 'The cancellation sent to the tax agency was malformed. Contact support.', 'validation', 'error', false],
  ['4138', 'Empty request.', 'The request sent to the tax agency was empty. Contact support.', 'validation', 'error', false],
  ['4139', 'The service is not enabled in production.', 'The tax agency service is not enabled for live use yet. Contact support.', 'configuration', 'error', false],
  // Record rejected (11xx, 12xx).
  ['1101', 'Invalid country code (CodigoPais).', `The customer's country code is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1103', 'Invalid identifier (ID) of a party without a Spanish tax ID.', `The customer's foreign identification is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1107', 'Invalid kind of corrective invoice (TipoRectificativa).', 'The refund record is invalid. Contact support.', 'validation', 'error', false],
  ['1111', 'The country code (CodigoPais) is required when the identification type (IDType) is not 02.', `The customer's country is missing. ${RESEND}`, 'validation', 'error', false],
  ['1114', 'A corrective invoice must say how it corrects (TipoRectificativa).', 'The refund record is incomplete. Contact support.', 'validation', 'error', false],
  ['1115', 'TipoRectificativa is only allowed on a corrective invoice.', 'The invoice record is invalid. Contact support.', 'validation', 'error', false],
  ['1118', 'A corrective invoice by substitution needs the corrected amounts (ImporteRectificacion).', 'The refund record is incomplete. Contact support.', 'validation', 'error', false],
  ['1119', 'The corrected amounts (ImporteRectificacion) are only allowed on a corrective invoice by substitution.', 'The refund record is invalid. Contact support.', 'validation', 'error', false],
  ['1120', 'The issuer tax ID (IDEmisorFactura) has an incorrect type.', 'Your business tax ID is not valid. Check the tax ID of this location.', 'configuration', 'error', false],
  ['1121', 'The identifier (ID) is not identified in the AEAT census.', `The customer's identification is not registered with the tax agency. ${RESEND}`, 'validation', 'error', false],
  ['1122', 'The country code (CodigoPais) does not match the first two characters of the identifier.', `The customer's country and tax ID do not match. ${RESEND}`, 'validation', 'error', false],
  ['1123', 'Incorrect tax ID (NIF) format.', `A tax ID on the invoice has a wrong format. ${RESEND}`, 'validation', 'error', false],
  ['1125', 'The operation date (FechaOperacion) is later than allowed.', `The operation date is too far in the future. ${RESEND}`, 'validation', 'error', false],
  ['1126', 'The country code may be ES only for a passport (03) or a party not registered in the census (07).', `The customer's identification type does not fit Spain. ${RESEND}`, 'validation', 'error', false],
  ['1129', 'Technical error at the AEAT while obtaining the invoicing agreement.', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['1130', 'The invoice series and number (NumSerieFactura) contains characters that are not allowed.', `The invoice number contains characters the tax agency does not accept. ${RESEND}`, 'validation', 'error', false],
  ['1133', 'The invoice issue date must not be more than twenty years in the past.', `The invoice date is too old. ${RESEND}`, 'validation', 'error', false],
  ['1142', 'The VAT amount (CuotaRepercutida) does not match the taxable base and the VAT rate.', `The VAT of a line does not match its base and rate. ${RESEND}`, 'validation', 'error', false],
  ['1143', 'The VAT amount (CuotaRepercutida) and the taxable base must have the same sign.', `A line has a VAT amount and a base of different signs. ${RESEND}`, 'validation', 'error', false],
  ['1145', 'Incorrect date format.', 'A date in the record has a wrong format. Contact support.', 'validation', 'error', false],
  ['1152', 'The issue date cannot be earlier than 28 October 2024.', `The invoice date is earlier than VERI*FACTU allows. ${RESEND}`, 'validation', 'error', false],
  ['1153', 'RechazoPrevio X is only allowed together with Subsanacion S.', 'The correction record is invalid. Contact support.', 'validation', 'error', false],
  ['1154', 'The tax ID of the issuer of the corrected or replaced invoice is not identified in the AEAT census.', 'The corrected invoice names an issuer unknown to the tax agency. Check the tax ID of this location.', 'validation', 'error', false],
  ['1172', 'The tax ID (NIF) or the obliged taxpayer (ObligadoEmision) is empty.', 'Your business tax ID is missing. Add the tax ID of this location.', 'configuration', 'error', false],
  ['1174', 'Invalid issue date in the previous record block (RegistroAnterior).', 'The link to the previous invoice is invalid. Contact support so the record chain can be checked.', 'validation', 'error', false],
  ['1175', 'Invalid invoice series and number in the previous record block (RegistroAnterior).', 'The link to the previous invoice is invalid. Contact support so the record chain can be checked.', 'validation', 'error', false],
  ['1176', 'Invalid tax ID (NIF) in the billing software block (SistemaInformatico).', 'The software developer tax ID is not valid. Check software_nif in the configuration of this location.', 'configuration', 'error', false],
  ['1177', 'Invalid software identifier (IdSistemaInformatico).', 'The billing software identification is invalid. Contact support.', 'configuration', 'error', false],
  ['1179', 'Error in the billing software block (SistemaInformatico).', 'The billing software identification is invalid. Check software_nif and installation_number of this location.', 'configuration', 'error', false],
  ['1180', 'Error in the chaining block (Encadenamiento).', 'The link to the previous invoice is wrong. Contact support so the record chain can be checked.', 'validation', 'error', false],
  ['1181', 'Invalid operation qualification (CalificacionOperacion).', `The VAT treatment of a line is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1182', 'Invalid exemption cause (OperacionExenta).', `The VAT exemption of a line is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1193', 'A recipient tax ID must be identified in the census and differ from the issuer\'s tax ID.', `The customer's tax ID is unknown to the tax agency, or is your own. ${RESEND}`, 'validation', 'error', false],
  ['1195', 'One of the exemption cause (OperacionExenta) or the operation qualification (CalificacionOperacion) must be given.', 'The VAT treatment of a line is missing. Contact support.', 'validation', 'error', false],
  ['1196', 'The exemption cause (OperacionExenta) and the operation qualification (CalificacionOperacion) exclude each other.', 'The VAT treatment of a line is contradictory. Contact support.', 'validation', 'error', false],
  ['1207', 'The VAT amount may differ from 0 only for subject, non-exempt operations (S1).', `A line charges VAT on an operation that carries none. ${RESEND}`, 'validation', 'error', false],
  ['1208', 'For subject, non-exempt operations (S1) the VAT rate and the VAT amount are required.', 'A line is missing its VAT rate or amount. Contact support.', 'validation', 'error', false],
  ['1215', 'Error in the obliged taxpayer block (ObligadoEmision).', 'Your business details are invalid. Check the tax ID and legal name of this location.', 'configuration', 'error', false],
  ['1218', 'Invalid tax (Impuesto) value.', 'The tax type of a line is invalid. Contact support.', 'validation', 'error', false],
  ['1219', 'Invalid issuer tax ID (IDEmisorFactura).', 'Your business tax ID is not valid. Check the tax ID of this location.', 'configuration', 'error', false],
  ['1220', 'Invalid billing software name (NombreSistemaInformatico).', 'The billing software identification is invalid. Contact support.', 'configuration', 'error', false],
  ['1223', 'The billing software block must give either a Spanish tax ID (NIF) or another identifier (IDOtro), not both.', 'The software developer identification is invalid. Check software_nif of this location.', 'configuration', 'error', false],
  ['1237', 'Operations not subject to VAT (N1, N2) must not give a VAT rate, a VAT amount or an equivalence surcharge.', `A line not subject to VAT carries VAT. ${RESEND}`, 'validation', 'error', false],
  ['1238', 'Exempt operations must not give a VAT rate, a VAT amount or an equivalence surcharge.', `An exempt line carries VAT. ${RESEND}`, 'validation', 'error', false],
  ['1239', 'Error in the recipient block (Destinatario).', `The customer details are invalid. ${RESEND}`, 'validation', 'error', false],
  ['1241', 'Technical error at the AEAT while obtaining the billing software.', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['1242', 'The billing software does not exist.', 'The tax agency does not know this billing software. Contact support.', 'configuration', 'error', false],
  ['1243', 'Technical error at the AEAT while computing the time zone date.', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['1244', 'The record generation time (FechaHoraHusoGenRegistro) has an incorrect format.', 'The record time has a wrong format. Contact support.', 'validation', 'error', false],
  ['1245', 'The VAT regime key (ClaveRegimen) is required for VAT and IGIC.', 'The VAT regime of a line is missing. Contact support.', 'validation', 'error', false],
  ['1247', 'Invalid hash type (TipoHuella).', 'The record fingerprint type is invalid. Contact support.', 'validation', 'error', false],
  ['1251', 'Invalid version (IDVersion).', 'The record format version is invalid. Contact support.', 'validation', 'error', false],
  ['1256', 'Technical error at the AEAT while obtaining the issue date limit.', 'The tax agency had a technical problem. The transaction will be sent again automatically.', 'submission', 'warning', true],
  ['1262', 'The record hash (Huella) length does not meet the specification.', 'The record fingerprint is invalid. Contact support.', 'validation', 'error', false],
  ['1268', 'The record generation time (FechaHoraHusoGenRegistro) length does not meet the specification.', 'The record time has a wrong format. Contact support.', 'validation', 'error', false],
  ['1269', 'The previous record block (RegistroAnterior) is not filled in correctly.', 'The link to the previous invoice is invalid. Contact support so the record chain can be checked.', 'validation', 'error', false],
  ['1274', 'Invalid first record flag (PrimerRegistro).', 'The link to the previous invoice is invalid. Contact support so the record chain can be checked.', 'validation', 'error', false],
  ['1278', 'The previous record\'s hash must differ from this record\'s hash.', 'The link to the previous invoice is invalid. Contact support so the record chain can be checked.', 'validation', 'error', false],
  ['1282', 'When the taxpayer\'s tax ID is a natural person\'s, the name must be given too.', 'Your business legal name is missing. Check legal_name in the configuration of this location.', 'configuration', 'error', false],
  ['1283', 'When the counterparty\'s tax ID is a natural person\'s, the name must be given too.', 'The customer\'s name is missing. Add it (customer_context.name) and send the transaction again.', 'validation', 'error', false],
  // Rejected against what the AEAT holds (30xx).
  ['3004', 'The invoice cannot be changed: it was registered through the AEAT web form.', 'This invoice was registered on the tax agency website and cannot be changed from here.', 'submission', 'error', false],
  // Accepted with errors, to be corrected (20xx).
  ['2002', 'Accepted with errors: the length of the previous record\'s hash does not meet the specification.', 'The invoice was registered, but the link to the previous invoice was malformed. Contact support.', 'validation', 'warning', false],
  ['2003', 'Accepted with errors: the content of the previous record\'s hash does not meet the specification.', 'The invoice was registered, but the link to the previous invoice was malformed. Contact support.', 'validation', 'warning', false],
  ['2005', 'Accepted with errors: the invoice total (ImporteTotal) does not match the bases, VAT and surcharges given.', 'The invoice was registered, but its total did not match its lines. Check the amounts with support.', 'validation', 'warning', false],
  ['2006', 'Accepted with errors: the total tax (CuotaTotal) does not match the VAT and surcharges given.', 'The invoice was registered, but its tax total did not match its lines. Check the amounts with support.', 'validation', 'warning', false],
  ['2007', 'Accepted with errors: sent as the first record although the AEAT holds records of this taxpayer and software.', 'The invoice was registered, but the record chain restarted. Contact support so the record chain can be checked.', 'validation', 'warning', false],
  ['2008', 'Accepted with errors: the previous record\'s hash must differ from this record\'s hash.', 'The invoice was registered, but the link to the previous invoice was wrong. Contact support.', 'validation', 'warning', false],
]);

// AEAT SII (codes whose SII meaning differs from VERI*FACTU, or that only SII returns).
const SII = rows('ES', ['sii'], [
  ['1104', 'Invalid value in the ID field (identification of a party without a Spanish tax ID).', `The customer's foreign identification is not valid. ${RESEND}`, 'validation', 'error', false],
  ['1116', 'The tax ID (NIF) is not identified in the AEAT census.', `A tax ID on the invoice is not registered with the tax agency. ${RESEND}`, 'validation', 'error', false],
  ['1117', 'The tax ID (NIF) is not identified: tax ID and name do not match the AEAT census.', `The customer's tax ID and name do not match the tax agency's records. ${RESEND}`, 'validation', 'error', false],
  ['1153', 'The tax ID (NIF) has an incorrect format.', `A tax ID on the invoice has a wrong format. ${RESEND}`, 'validation', 'error', false],
  ['1157', 'The invoice breakdown (DesgloseFactura) must hold at least one block.', 'The invoice was sent without its VAT breakdown. Contact support.', 'validation', 'error', false],
  ['2011', 'Accepted with errors: the counterparty\'s tax ID is not registered in the AEAT census.', 'The invoice was registered, but the customer\'s tax ID is not known to the tax agency. Check it with the customer.', 'validation', 'warning', false],
  ['4109', 'The tax ID (NIF) is not identified in the AEAT census.', 'A tax ID is not registered with the tax agency. Check the tax ID of this location and of the customer.', 'configuration', 'error', false],
  ['4111', 'The tax ID (NIF) has an incorrect format.', 'A tax ID has a wrong format. Check the tax ID of this location.', 'configuration', 'error', false],
  // Submission states of RespuestaSuministro.xsd (ErrorEnvioType): the whole submission.
  ['ERR01', 'The submission does not match the SII schema.', 'The record sent to the tax agency was not in the required format. Contact support.', 'validation', 'error', false],
  ['ERR03', 'Unknown declarant.', 'The tax agency does not know the business sending the records. Check the tax ID of this location.', 'configuration', 'error', false],
  ['ERR04', 'The declarant must be identified by a Spanish tax ID (NIF).', 'The business sending the records needs a Spanish tax ID. Check the tax ID of this location.', 'configuration', 'error', false],
  ['ERR05', 'The tax ID (NIF) of the representative is incorrect.', 'The representative\'s tax ID is not valid. Check the certificate used for this location.', 'configuration', 'error', false],
]);

// TicketBAI: the codes of src/countries/es-ticketbai/codes.ts (sources listed there), with the
// same category and retry rule (es-ticketbai/codes.test.ts checks both lists match).
const TBAI_RETRY = 'The tax office had a technical problem. The transaction will be sent again automatically.';
const TBAI_HELD = 'The tax office already has this invoice. Nothing more to do.';
const TICKETBAI = rows('ES', ['ticketbai'], [
  // Araba and Gipuzkoa (ResultadosValidacion/Codigo).
  ['001', 'The certificate used to connect (sender) is not accepted: not recognised, revoked or expired.', 'The tax office did not accept the certificate of this location. Upload a valid certificate.', 'auth', 'error', false],
  ['002', 'The TicketBAI file does not comply with the XSD schema.', 'The invoice file was not in the required format. Contact support.', 'validation', 'error', false],
  ['003', 'The TicketBAI invoice has no detail lines.', `The invoice has no lines. ${RESEND}`, 'validation', 'error', false],
  ['004', 'A mandatory field is missing or invalid (invoice number, chaining data, TicketBAI licence format, issuer tax ID).', `The invoice is missing required data or has an invalid value. ${RESEND}`, 'validation', 'error', false],
  ['005', 'The TicketBAI invoice was already received by the provincial tax office (duplicate submission).', TBAI_HELD, 'submission', 'warning', false],
  ['006', 'The provincial tax office reception service is not available.', TBAI_RETRY, 'submission', 'warning', true],
  ['007', 'The certificate used to connect (sender) is not valid for the invoice issuer.', 'The certificate of this location does not belong to the invoice issuer. Upload the issuer\'s certificate.', 'auth', 'error', false],
  ['008', 'The file signature is not valid, or the signing certificate has expired.', 'The invoice signature was not accepted. Check the certificate of this location.', 'auth', 'error', false],
  ['010', 'The invoice chaining is incorrect (EncadenamientoFacturaAnterior).', 'The invoice does not link correctly to the previous one. Contact support.', 'validation', 'error', false],
  ['011', 'The invoice data fail a business validation of the provincial tax office (e.g. a corrective invoice that does not name the corrected invoice).', `The tax office rejected the invoice data. ${RESEND}`, 'validation', 'error', false],
  ['012', 'The TicketBAI licence (LicenciaTBAI) is not valid.', 'The TicketBAI licence of this location is not valid. Check country_config.tbai_license.', 'configuration', 'error', false],
  ['013', 'The device (certificate) sending the file is not registered for the issuer.', 'The device certificate is not registered for this business. Register it with the tax office.', 'configuration', 'error', false],
  ['015', 'The certificate used to connect (sender) has expired.', 'The certificate of this location has expired. Upload a valid certificate.', 'auth', 'error', false],
  ['016', 'The signing certificate has expired.', 'The certificate used to sign invoices has expired. Upload a valid certificate.', 'auth', 'error', false],
  ['017', 'The message exceeds the size the reception service allows.', 'The invoice file is too large for the tax office. Contact support.', 'submission', 'error', false],
  ['018', 'The invoice to cancel is not registered with the provincial tax office.', 'The tax office has no record of the invoice being cancelled.', 'submission', 'error', false],
  ['019', 'The provincial tax office already holds this record: the invoice was already received, or its cancellation already registered.', 'The tax office already has this record. Nothing more to do.', 'submission', 'warning', false],
  // Bizkaia (Batuz LROE): request-level codes (eus-bizkaia-n3-codigo-respuesta).
  ['B4_1000001', 'The LROE request does not comply with its schema (a header field is missing or invalid).', 'The batch sent to the tax office was not in the required format. Contact support.', 'validation', 'error', false],
  ['B4_1000002', 'Every record in the LROE request is incorrect.', 'The tax office rejected every invoice of the batch. See each invoice\'s error.', 'submission', 'error', false],
  ['B4_1000003', 'The LROE request could not be decompressed.', 'The batch sent to the tax office could not be read. Contact support.', 'submission', 'error', false],
  ['B4_1000004', 'Technical error at Batuz.', TBAI_RETRY, 'submission', 'warning', true],
  ['B4_1000005', 'The LROE request contains the same invoice more than once.', 'The same invoice appears twice in one batch. Contact support.', 'validation', 'error', false],
  ['B4_1000006', 'The LROE model does not match the kind of taxpayer (Modelo 140 natural persons, 240 entities).', 'The tax ID of this location does not match the kind of taxpayer. Check the tax ID of this location.', 'configuration', 'error', false],
  ['B4_1000021', 'The fiscal year of the LROE request does not match the issue year of its invoices, or is later than the current year.', 'The batch year does not match the invoice dates. Contact support.', 'validation', 'error', false],
  ['B4_1000022', 'The NIF in the request header does not match the taxpayer (ObligadoTributario).', 'The tax ID sent does not match the business. Check the tax ID of this location.', 'configuration', 'error', false],
  ['B4_1000026', 'Wrong LROE section (apartado) in the request header.', 'The batch was sent to the wrong LROE section. Contact support.', 'validation', 'error', false],
  ['B4_1000030', 'The name in the request header does not match the taxpayer (ObligadoTributario).', 'The business name sent does not match the taxpayer. Check country_config.legal_name of this location.', 'configuration', 'error', false],
  ['N3_0000011', 'Batuz could not process the request ("other" error; see the message it returned).', TBAI_RETRY, 'submission', 'warning', true],
  // Bizkaia (Batuz LROE): record-level codes (CodigoErrorRegistro).
  ['B4_2000000', 'A mandatory field of the record is missing.', `The invoice is missing required data. ${RESEND}`, 'validation', 'error', false],
  ['B4_2000001', 'The TicketBAI file in the record does not comply with its schema.', 'The invoice file was not in the required format. Contact support.', 'validation', 'error', false],
  ['B4_2000002', 'The issuer tax ID of the TicketBAI file is not the taxpayer of the request.', 'The invoice issuer does not match the business sending it. Check the tax ID of this location.', 'configuration', 'error', false],
  ['B4_2000003', 'The invoice record was already received in the LROE (duplicate).', TBAI_HELD, 'submission', 'warning', false],
  ['B4_2000004', 'The record being cancelled does not exist at Batuz.', 'The tax office has no record of the invoice being cancelled.', 'submission', 'error', false],
  ['B4_2000005', 'The invoice issue date is not a valid DD-MM-YYYY date or is later than today.', `The invoice date is not valid. ${RESEND}`, 'validation', 'error', false],
  ['B4_2000006', 'The record is already cancelled at Batuz.', 'This invoice was already cancelled with the tax office. Nothing more to do.', 'submission', 'warning', false],
  ['B4_2000008', 'The invoice issue date is later than the current date.', `The invoice is dated in the future. ${RESEND}`, 'validation', 'error', false],
  ['B4_2000011', 'A tax ID (NIF) has an invalid format or is not a valid document.', `A tax ID on the invoice is not valid. ${RESEND}`, 'validation', 'error', false],
  ['B4_2000012', 'The country code is required when the identification is not an EU VAT number.', `The customer's country is missing. Add it (customer_context.country) and send the transaction again.`, 'validation', 'error', false],
  ['B4_2000013', 'The country code does not match the first two characters of the EU VAT number.', `The customer's country does not match their VAT number. ${RESEND}`, 'validation', 'error', false],
  ['B4_2000016', 'Corrected invoices are given on an invoice that is not corrective.', `A non-corrective invoice refers to corrected invoices. ${RESEND}`, 'validation', 'error', false],
  ['B4_2000030', 'The VAT breakdown needs an exempt or a non-exempt part (or both).', 'The invoice VAT breakdown is incomplete. Contact support.', 'validation', 'error', false],
  ['B4_2000038', 'The breakdown by operation type needs services, deliveries or both.', 'The invoice VAT breakdown is incomplete. Contact support.', 'validation', 'error', false],
  ['B4_2000045', 'The corrective invoice does not name the invoice it corrects.', 'The refund must name the invoice it corrects (metadata.original_invoice_number and original_issue_date). Add them and send again.', 'validation', 'error', false],
  ['B4_2000060', 'The invoice chaining is missing or invalid.', 'The invoice does not link correctly to the previous one. Contact support.', 'validation', 'error', false],
  ['B4_2000061', 'The invoice chaining is missing or invalid.', 'The invoice does not link correctly to the previous one. Contact support.', 'validation', 'error', false],
  ['B4_2000063', 'The TicketBAI licence is not registered.', 'The TicketBAI licence of this location is not registered. Check country_config.tbai_license.', 'configuration', 'error', false],
  ['B4_2000064', 'The developer tax ID does not match the TicketBAI licence.', 'The software details do not match the TicketBAI licence. Contact support.', 'configuration', 'error', false],
  ['B4_2000065', 'The developer identifier does not match the TicketBAI licence.', 'The software details do not match the TicketBAI licence. Contact support.', 'configuration', 'error', false],
  ['B4_2000066', 'The software name does not match the TicketBAI licence.', 'The software details do not match the TicketBAI licence. Contact support.', 'configuration', 'error', false],
  ['B4_2000070', 'The signature does not meet the TicketBAI signature policy, or the signing certificate is not valid.', 'The invoice signature was not accepted. Check the certificate of this location.', 'auth', 'error', false],
]);

// Italy SDI: rejection (scarto) codes of the Sistema di Interscambio.
const SDI = rows('IT', ['sdi'], [
  ['00001', 'Invalid file name.', 'The invoice file was named incorrectly. Contact support.', 'validation', 'error', false],
  ['00002', 'Duplicate file name: a file with this name was already sent.', 'The invoice file name was already used. Contact support.', 'submission', 'error', false],
  ['00100', 'The signing certificate has expired.', 'The certificate used to sign invoices has expired. Upload a valid certificate.', 'auth', 'error', false],
  ['00101', 'The signing certificate has been revoked.', 'The certificate used to sign invoices was revoked. Upload a valid certificate.', 'auth', 'error', false],
  ['00102', 'The file is not intact: invalid signature.', 'The invoice signature is not valid. Check the certificate, or contact support.', 'auth', 'error', false],
  ['00104', 'The certification authority of the signing certificate is not trusted.', 'The certificate used to sign invoices is not accepted. Upload a certificate from a recognised authority.', 'auth', 'error', false],
  ['00200', 'The file does not conform to the FatturaPA format.', 'The invoice is not in the required format. Contact support.', 'validation', 'error', false],
  ['00300', 'Invalid tax code (IdCodice) of the transmitter (1.1.1.2).', 'The transmitter\'s tax code is not valid. Check the tax ID of this location.', 'configuration', 'error', false],
  ['00301', 'Invalid VAT number (IdCodice) of the seller (1.2.1.1.2).', 'Your business VAT number (partita IVA) is not valid. Check the tax ID of this location.', 'configuration', 'error', false],
  ['00302', 'Invalid fiscal code (CodiceFiscale) of the seller (1.2.1.2).', 'Your business fiscal code (codice fiscale) is not valid. Check the configuration of this location.', 'configuration', 'error', false],
  ['00303', 'Invalid VAT number (IdCodice) of the tax representative (1.3.1.1.2 or 1.4.4.1.2).', `The tax representative's VAT number is not valid. ${RESEND}`, 'validation', 'error', false],
  ['00304', 'Invalid fiscal code (CodiceFiscale) of the tax representative (1.3.1.2).', `The tax representative's fiscal code is not valid. ${RESEND}`, 'validation', 'error', false],
  ['00305', 'Invalid VAT number (IdCodice) of the buyer (1.4.1.1.2).', `The customer's VAT number is not valid. ${RESEND}`, 'validation', 'error', false],
  ['00306', 'Invalid fiscal code (CodiceFiscale) of the buyer (1.4.1.2).', `The customer's fiscal code is not valid. ${RESEND}`, 'validation', 'error', false],
  ['00311', 'Invalid recipient code (CodiceDestinatario, 1.1.4).', 'The customer\'s recipient code (codice destinatario) is not valid. Check it with the customer and send the transaction again.', 'validation', 'error', false],
  ['00312', 'The recipient code (CodiceDestinatario, 1.1.4) is not active.', 'The customer\'s recipient code (codice destinatario) is not active. Check it with the customer and send the transaction again.', 'validation', 'error', false],
  ['00400', 'The VAT exemption nature (Natura, 2.2.1.14) is missing on a line with a 0% VAT rate.', 'A line with 0% VAT needs an exemption nature (N1…N7). Add it and send the transaction again.', 'validation', 'error', false],
  ['00401', 'The VAT exemption nature (Natura, 2.2.1.14) is given on a line whose VAT rate is not zero.', `A line with VAT must not have an exemption nature. ${RESEND}`, 'validation', 'error', false],
  ['00403', 'The invoice date (2.1.1.3) is later than the date it was received.', `The invoice is dated in the future. ${RESEND}`, 'validation', 'error', false],
  ['00404', 'Duplicate invoice: an invoice with the same seller, number and date was already accepted.', 'The SDI already has this invoice. Nothing more to do.', 'submission', 'warning', false],
  ['00409', 'Duplicate invoice within the same batch.', 'The same invoice appears twice in one batch. Contact support.', 'submission', 'error', false],
  ['00417', 'Neither the VAT number (1.4.1.1) nor the fiscal code (1.4.1.2) of the buyer is given.', 'The customer needs a VAT number or a fiscal code. Add one and send the transaction again.', 'validation', 'error', false],
  ['00419', 'The VAT summary (DatiRiepilogo, 2.2.2) is missing for at least one VAT rate used.', 'The invoice VAT summary is incomplete. Contact support.', 'validation', 'error', false],
  ['00421', 'The VAT amount (Imposta, 2.2.2.6) is not calculated according to the technical rules.', `The VAT amounts do not add up. ${RESEND}`, 'validation', 'error', false],
  ['00422', 'The taxable amount (ImponibileImporto, 2.2.2.5) is not calculated according to the technical rules.', `The taxable amounts do not add up. ${RESEND}`, 'validation', 'error', false],
  ['00423', 'The line total (PrezzoTotale, 2.2.1.11) is not calculated according to the technical rules.', `A line total does not match quantity times unit price. ${RESEND}`, 'validation', 'error', false],
  ['00424', 'The VAT rate (AliquotaIVA) is not given as a percentage.', `A VAT rate must be a percentage (e.g. 22.00). ${RESEND}`, 'validation', 'error', false],
  ['00425', 'The invoice number (2.1.1.4) contains no digits.', `The invoice number must contain at least one digit. ${RESEND}`, 'validation', 'error', false],
  ['00427', 'The recipient code (CodiceDestinatario) length does not match the transmission format (7 characters for FPR12, 6 for FPA12).', 'The customer\'s recipient code does not fit the invoice format (private or public administration). Check the configuration of this location.', 'configuration', 'error', false],
  ['00428', 'The transmission format (FormatoTrasmissione, 1.1.3) is neither FPA12 nor FPR12.', 'The invoice format is not valid. Check the configuration of this location.', 'configuration', 'error', false],
  ['00429', 'The VAT exemption nature (Natura, 2.2.2.2) is missing in the VAT summary for a 0% VAT rate.', 'A 0% VAT rate needs an exemption nature. Add it and send the transaction again.', 'validation', 'error', false],
  ['00430', 'The VAT exemption nature (Natura, 2.2.2.2) is given in the VAT summary for a non-zero VAT rate.', `A VAT rate above zero must not have an exemption nature. ${RESEND}`, 'validation', 'error', false],
]);

// Italy Documento Commerciale: the spec's authority codes.
const DC = rows('IT', ['dc'], [
  ['0100', 'Non-compliant file.', 'The commercial document was not in the required format. Contact support.', 'validation', 'error', false],
  ['0200', 'Validation error.', `The commercial document has invalid data. ${RESEND}`, 'validation', 'error', false],
  ['0403', 'Not authorized: the certificate is not accepted.', 'The seal certificate of this device is not authorised. Check the certificate of this location.', 'auth', 'error', false],
  ['0429', 'Too many requests: the authority\'s rate limit was reached.', 'The tax authority is busy. The document will be sent again automatically.', 'submission', 'warning', true],
  ['0500', 'Authority server error.', 'The tax authority had a technical problem. The document will be sent again automatically.', 'submission', 'warning', true],
]);

export const CATALOG: readonly CatalogEntry[] = [...AEAT_SHARED, ...VERIFACTU, ...SII, ...TICKETBAI, ...SDI, ...DC];

/**
 * Codes this service itself reports for a failed submission (not an authority's), in
 * any country and system: already in English, never sent to the AI.
 */
export const SERVICE_CODES: Readonly<Record<string, Translated>> = {
  TIMEOUT: {
    translation: 'The tax authority did not answer in time.',
    category: 'network', severity: 'warning', retriable: true,
    user_message: 'The tax authority did not respond in time. The transaction will be sent again automatically.',
  },
};

/** Codes are matched trimmed and case-insensitively (TicketBAI's B4_… codes). */
export const normalizeCode = (code: string): string => code.trim().toUpperCase();

const index = new Map<string, CatalogEntry[]>();
for (const e of CATALOG) {
  const k = `${e.country}|${normalizeCode(e.code)}`;
  index.set(k, [...(index.get(k) ?? []), e]);
}

/**
 * The catalog entry for a code. With a system, the entry of that system; without one,
 * the entry of the country if exactly one entry has that code (else none: ambiguous).
 */
export function lookupStatic(country: string, system: string | undefined, code: string): CatalogEntry | undefined {
  const candidates = index.get(`${country.toUpperCase()}|${normalizeCode(code)}`) ?? [];
  if (system) return candidates.find((e) => (e.systems as readonly string[]).includes(system));
  return candidates.length === 1 ? candidates[0] : undefined;
}
