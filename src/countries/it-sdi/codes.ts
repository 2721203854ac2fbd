/**
 * SdI rejection codes (NotificaScarto `ListaErrori/Errore/Codice`, from the SdI
 * "elenco controlli"), in English. Unknown codes get a generic message. Codes with a
 * `translation` make the static translation catalog (src/translations/catalog.ts).
 *
 * Sources (the Agenzia delle Entrate's "Elenco controlli" of the FatturaPA technical
 * specifications is a PDF not held here; these are the public transcriptions read):
 * the table of SdI error codes and texts in bibe74/StudioRivadossi.InvoiceXML
 * (Data/XMLCodifiche.CodiceErroreSDI_Data.sql: 00200, 00300-00306, 00311, 00312, 00398,
 * 00399, 00400, 00401, 00403, 00411, 00413-00415, 00417-00430, 00437, 00438, 00448); the
 * vendor guides fattura24.com "scarto fattura elettronica" (00001-00003, 00102, the
 * uniqueness checks), digitalinvoice "verifica di unicità della fattura" (00404: seller,
 * year and number of an invoice not rejected nor refused; a TD04 may share them; 00409),
 * pmi.it (00100, 00101, 00104) and the specifications 1.6.1 change note (00445, 00448
 * from 1 January 2021). Every 00xxx code is final for the file (NS): none is retriable.
 */
import type { AuthorityCode } from '../types.ts';
import { RESEND, codeKind, error, warning } from '../shared/codes.ts';

const v = codeKind('validation', false);
const cfg = codeKind('configuration', false);
const auth = codeKind('auth', false);
const sub = codeKind('submission', false);

export const SDI_CODES: Readonly<Record<string, AuthorityCode>> = {
  '00001': v('Invalid file name.', error('The invoice file was named incorrectly. Contact support.')),
  '00002': {
    message: 'Duplicate file name: SdI already received a file with this name (or this very file).', category: 'submission', retriable: false,
    translation: error('The SDI already received an invoice file with this name. If the invoice was sent twice, nothing more to do; otherwise contact support.'),
  },
  '00003': sub('The file is larger than SdI accepts (5 MB).', error('The invoice is too large for the SDI (5 MB at most). Split it into several invoices, or contact support.')),
  '00100': auth('The signing certificate has expired.', error('The certificate used to sign invoices has expired. Upload a valid certificate.')),
  '00101': auth('The signing certificate has been revoked.', error('The certificate used to sign invoices was revoked. Upload a valid certificate.')),
  '00102': {
    message: 'The file is not intact: its signature is not valid.', category: 'auth', retriable: false,
    translation: error('The invoice signature is not valid. Check the certificate, or contact support.', 'The file is not intact: invalid signature.'),
  },
  '00104': auth('The certification authority of the signing certificate is not trusted.',
    error('The certificate used to sign invoices is not accepted. Upload a certificate from a recognised authority.')),
  '00200': v('The file does not conform to the FatturaPA format (schema).',
    error('The invoice is not in the required format. Contact support.', 'The file does not conform to the FatturaPA format.')),
  '00300': cfg('1.1.1.2 <IdCodice> of the transmitter is not valid.',
    error('The transmitter\'s tax code is not valid. Check the tax ID of this location.', 'Invalid tax code (IdCodice) of the transmitter (1.1.1.2).')),
  '00301': cfg('1.2.1.1.2 <IdCodice> of the seller (CedentePrestatore) is not valid.',
    error('Your business VAT number (partita IVA) is not valid. Check the tax ID of this location.',
      'Invalid VAT number (IdCodice) of the seller (1.2.1.1.2).')),
  '00302': cfg('Invalid fiscal code (CodiceFiscale) of the seller (1.2.1.2).',
    error('Your business fiscal code (codice fiscale) is not valid. Check the configuration of this location.')),
  '00303': v('Invalid VAT number (IdCodice) of the tax representative (1.3.1.1.2 or 1.4.4.1.2).',
    error(`The tax representative's VAT number is not valid. ${RESEND}`)),
  '00304': v('Invalid fiscal code (CodiceFiscale) of the tax representative (1.3.1.2).', error(`The tax representative's fiscal code is not valid. ${RESEND}`)),
  '00305': v('1.4.1.1.2 <IdCodice> of the buyer (CessionarioCommittente) is not valid.',
    error(`The customer's VAT number is not valid. ${RESEND}`, 'Invalid VAT number (IdCodice) of the buyer (1.4.1.1.2).')),
  '00306': v('1.4.1.2 <CodiceFiscale> of the buyer (CessionarioCommittente) is not valid.',
    error(`The customer's fiscal code is not valid. ${RESEND}`, 'Invalid fiscal code (CodiceFiscale) of the buyer (1.4.1.2).')),
  '00398': cfg('1.1.4 <CodiceDestinatario> is a "Centrale" office code while the IPA registry identifies the administration\'s own office.',
    error('This public administration has its own office code: give its 6-character IPA office code as codice_destinatario and send the transaction again.')),
  '00399': v('The buyer\'s CodiceFiscale belongs to a public administration in the IPA registry, but 1.1.4 <CodiceDestinatario> is 999999.',
    error('This customer is a public administration: give its 6-character IPA office code as codice_destinatario and send the transaction again.')),
  '00311': v('1.1.4 <CodiceDestinatario> is not valid.',
    error('The customer\'s recipient code (codice destinatario) is not valid. Check it with the customer and send the transaction again.',
      'Invalid recipient code (CodiceDestinatario, 1.1.4).')),
  '00312': v('1.1.4 <CodiceDestinatario> is not active.',
    error('The customer\'s recipient code (codice destinatario) is not active. Check it with the customer and send the transaction again.',
      'The recipient code (CodiceDestinatario, 1.1.4) is not active.')),
  '00400': v('2.2.1.14 <Natura> is missing on a line whose 2.2.1.12 <AliquotaIVA> is zero.',
    error('A line with 0% VAT needs an exemption nature (N1…N7). Add it and send the transaction again.',
      'The VAT exemption nature (Natura, 2.2.1.14) is missing on a line with a 0% VAT rate.')),
  '00401': v('2.2.1.14 <Natura> is present on a line whose 2.2.1.12 <AliquotaIVA> is not zero.',
    error(`A line with VAT must not have an exemption nature. ${RESEND}`,
      'The VAT exemption nature (Natura, 2.2.1.14) is given on a line whose VAT rate is not zero.')),
  '00411': v('2.1.1.5 <DatiRitenuta> is missing while a line (2.2.1.13 <Ritenuta>) is subject to withholding.',
    error('The invoice withholding tax data is incomplete. Contact support.')),
  '00413': v('2.1.1.7.7 <Natura> is missing for a pension fund contribution (cassa previdenziale) whose VAT rate is zero.',
    error('The pension fund contribution needs a VAT exemption nature. Contact support.')),
  '00414': v('2.1.1.7.7 <Natura> is given for a pension fund contribution (cassa previdenziale) whose VAT rate is not zero.',
    error('The pension fund contribution has a VAT exemption nature with a VAT rate. Contact support.')),
  '00415': v('2.1.1.5 <DatiRitenuta> is missing while 2.1.1.7.6 <Ritenuta> (pension fund contribution) is subject to withholding.',
    error('The invoice withholding tax data is incomplete. Contact support.')),
  '00418': v('2.1.1.3 <Data> is earlier than 2.1.6.3 <Data> (the date of the invoice it refers to).',
    error(`The document is dated before the invoice it refers to. ${RESEND}`, 'The document date (2.1.1.3) is earlier than the date of the linked invoice (2.1.6.3).')),
  '00420': v('2.2.2.2 <Natura> N6 (reverse charge) with 2.2.2.7 <EsigibilitaIVA> S (split payment).',
    error(`Reverse charge (N6) cannot be combined with split payment. ${RESEND}`)),
  '00426': v('1.1.6 <PECDestinatario> does not match 1.1.4 <CodiceDestinatario>: a PEC address goes with the code 0000000 only.',
    error(`The recipient PEC address is given together with a recipient code other than 0000000. ${RESEND}`)),
  '00437': v('2.1.1.8.1 <Tipo> (document discount or surcharge) without 2.1.1.8.2 <Percentuale> or 2.1.1.8.3 <Importo>.',
    error('A discount or surcharge of the invoice has no amount or percentage. Contact support.')),
  '00438': v('2.2.1.10.1 <Tipo> (line discount or surcharge) without 2.2.1.10.2 <Percentuale> or 2.2.1.10.3 <Importo>.',
    error('A discount or surcharge of a line has no amount or percentage. Contact support.')),
  // 00443, 00444, 00471: FatturaElettronica.NET's FatturaOrdinariaValidator (the SdI texts and document-type list).
  '00443': v('The VAT rates (AliquotaIVA) of the lines and of the VAT summary (DatiRiepilogo) do not match.',
    error('The invoice VAT summary does not match its lines. Contact support.')),
  '00444': v('The VAT exemption natures (Natura) of the lines and of the VAT summary (DatiRiepilogo) do not match.',
    error('The invoice VAT summary does not match its lines. Contact support.')),
  '00471': v('For this TipoDocumento (TD01, TD02, TD03, TD06, TD16-TD20, TD24, TD25, TD28) the seller (CedentePrestatore) cannot be the buyer (CessionarioCommittente).',
    error('The customer of this invoice is your own business. An invoice must name another customer; goods taken for your own use are a self-invoice (TD27), not issued here.')),
  '00445': v('The generic <Natura> N2, N3 or N6 is no longer accepted (since 1 January 2021): its sub-code is required.',
    error('Give the VAT exemption nature with its sub-code (N2.1-N2.2, N3.1-N3.6, N6.1-N6.9) and send the transaction again.')),
  '00448': v('Cross-border invoice: the generic <Natura> N2, N3 or N6 is no longer accepted: its sub-code is required.',
    error('Give the VAT exemption nature with its sub-code (N2.1-N2.2, N3.1-N3.6, N6.1-N6.9) and send the transaction again.')),
  '00403': v('2.1.1.3 <Data> (invoice date) is later than the date SdI received it.',
    error(`The invoice is dated in the future. ${RESEND}`, 'The invoice date (2.1.1.3) is later than the date it was received.')),
  '00404': {
    message: 'Duplicate invoice: SdI already holds an invoice of this seller with this number in this year (not rejected).',
    category: 'submission',
    retriable: false,
    duplicate: true,
    translation: warning('The SDI already has an invoice with this number for this year. If it is this invoice, sent again, nothing more to do; otherwise give the invoice a new number and send it again.',
      'Duplicate invoice: an invoice of the same seller with the same number in the same year was already accepted.'),
  },
  '00409': sub('Duplicate invoice within the same batch.', error('The same invoice appears twice in one batch. Contact support.')),
  '00417': v('The buyer has neither 1.4.1.1 <IdFiscaleIVA> nor 1.4.1.2 <CodiceFiscale> (at least one is required).',
    error('The customer needs a VAT number or a fiscal code. Add one and send the transaction again.',
      'Neither the VAT number (1.4.1.1) nor the fiscal code (1.4.1.2) of the buyer is given.')),
  '00419': v('The VAT summary (DatiRiepilogo, 2.2.2) is missing for at least one VAT rate used.',
    error('The invoice VAT summary is incomplete. Contact support.')),
  '00421': v('The VAT amount (Imposta, 2.2.2.6) is not calculated according to the technical rules.',
    error(`The VAT amounts do not add up. ${RESEND}`)),
  '00422': v('The taxable amount (ImponibileImporto, 2.2.2.5) is not calculated according to the technical rules.',
    error(`The taxable amounts do not add up. ${RESEND}`)),
  '00423': v('2.2.1.11 <PrezzoTotale> is not calculated according to the technical rules.',
    error(`A line total does not match quantity times unit price. ${RESEND}`,
      'The line total (PrezzoTotale, 2.2.1.11) is not calculated according to the technical rules.')),
  '00424': v('<AliquotaIVA> is not expressed as a percentage.',
    error(`A VAT rate must be a percentage (e.g. 22.00). ${RESEND}`, 'The VAT rate (AliquotaIVA) is not given as a percentage.')),
  '00425': v('2.1.1.4 <Numero> (invoice number) contains no digit.',
    error(`The invoice number must contain at least one digit. ${RESEND}`, 'The invoice number (2.1.1.4) contains no digits.')),
  '00427': cfg('1.1.4 <CodiceDestinatario> has 7 characters on an FPA12 invoice, or 6 characters on an FPR12 invoice.',
    error('The customer\'s recipient code does not fit the invoice format (private or public administration). Check the configuration of this location.',
      'The recipient code (CodiceDestinatario) length does not match the transmission format (7 characters for FPR12, 6 for FPA12).')),
  '00428': cfg('The transmission format (FormatoTrasmissione, 1.1.3) is neither FPA12 nor FPR12.',
    error('The invoice format is not valid. Check the configuration of this location.')),
  '00429': v('The VAT exemption nature (Natura, 2.2.2.2) is missing in the VAT summary for a 0% VAT rate.',
    error('A 0% VAT rate needs an exemption nature. Add it and send the transaction again.')),
  '00430': v('The VAT exemption nature (Natura, 2.2.2.2) is given in the VAT summary for a non-zero VAT rate.',
    error(`A VAT rate above zero must not have an exemption nature. ${RESEND}`)),
  // SdICoop SdIRiceviFile `Errore` (erroreInvio_Type, TrasmissioneTypes_v1.0.xsd) and
  // the client's own answers (sdicoop.ts).
  EI01: sub('SdI refused the file: it is empty (EI01).', error('The invoice file sent to the SDI was empty. Contact support.')),
  EI02: { message: 'The SdI service is not available (EI02); the file will be sent again.', category: 'submission', retriable: true },
  EI03: auth('SdI refused the file: the sender is not enabled for the SdICoop service (EI03).',
    error('This certificate is not enabled to send invoices to the SDI. Check the SDI accreditation of the certificate uploaded for this location.')),
  SOAP_FAULT: sub('SdI refused the request with a SOAP fault.', error('The SDI refused the invoice file. Contact support.')),
  HTTP_403: auth('SdI refused the connection (HTTP 401/403): the client certificate is missing, unknown or not enabled.',
    error('The SDI refused the certificate of this location. Upload a certificate enabled for the SDI.')),
  NOT_FATTURAPA_FILE: sub('The stored record is not a FatturaPA file with an SdI file name and cannot be sent to SdI.',
    error('This invoice cannot be sent to the SDI. Contact support.')),
};
