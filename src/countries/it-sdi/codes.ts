/**
 * SdI rejection codes (NotificaScarto `ListaErrori/Errore/Codice`, from the SdI
 * "elenco controlli"), in English. Unknown codes get a generic message.
 */
import type { AuthorityCode } from '../types.ts';

const v = (message: string): AuthorityCode => ({ message, category: 'validation', retriable: false });

export const SDI_CODES: Readonly<Record<string, AuthorityCode>> = {
  '00001': v('Invalid file name.'),
  '00002': { message: 'Duplicate file name: a file with this name was already sent.', category: 'submission', retriable: false },
  '00102': { message: 'The file is not intact: its signature is not valid.', category: 'validation', retriable: false },
  '00200': v('The file does not conform to the FatturaPA format (schema).'),
  '00300': v('1.1.1.2 <IdCodice> of the transmitter is not valid.'),
  '00301': v('1.2.1.1.2 <IdCodice> of the seller (CedentePrestatore) is not valid.'),
  '00305': v('1.4.1.1.2 <IdCodice> of the buyer (CessionarioCommittente) is not valid.'),
  '00306': v('1.4.1.2 <CodiceFiscale> of the buyer (CessionarioCommittente) is not valid.'),
  '00311': v('1.1.4 <CodiceDestinatario> is not valid.'),
  '00312': v('1.1.4 <CodiceDestinatario> is not active.'),
  '00400': v('2.2.1.14 <Natura> is missing on a line whose 2.2.1.12 <AliquotaIVA> is zero.'),
  '00401': v('2.2.1.14 <Natura> is present on a line whose 2.2.1.12 <AliquotaIVA> is not zero.'),
  '00403': v('2.1.1.3 <Data> (invoice date) is later than the date SdI received it.'),
  '00404': {
    message: 'Duplicate invoice: SdI already holds an invoice with this number, date and seller.',
    category: 'submission',
    retriable: false,
    duplicate: true,
  },
  '00417': v('The buyer has neither 1.4.1.1 <IdFiscaleIVA> nor 1.4.1.2 <CodiceFiscale> (at least one is required).'),
  '00423': v('2.2.1.11 <PrezzoTotale> is not calculated according to the technical rules.'),
  '00424': v('<AliquotaIVA> is not expressed as a percentage.'),
  '00425': v('2.1.1.4 <Numero> (invoice number) contains no digit.'),
  '00427': v(
    '1.1.4 <CodiceDestinatario> has 7 characters on an FPA12 invoice, or 6 characters on an FPR12 invoice.',
  ),
};
