/**
 * myDATA error codes (ResponseDoc `errors/error/code`; AADE myDATA REST API
 * documentation, error tables), in English as AADE writes them, each with its entry in
 * the static translation catalog (src/translations/catalog.ts; `errorTranslations` in
 * index.ts makes `country: GR` accepted there).
 *
 * Sources and certainty: 101 (XMLSyntaxError), 204 (correlatedInvoices missing), 233 ("UID has already been sent") and
 * 228 ("{Field} is invalid": an invalid UID or invoice type, and on the provider channel
 * also a UID already sent, quoting the original MARK) are confirmed by integrators'
 * published answers (fiskaltrust/middleware PR #742 citing the v1.0.10 documentation
 * p. 65; firebed/aade-mydata issue #29). The others are from the documentation's tables
 * as we recall them and are marked `uncertain` below: their codes should be checked
 * against the current PDF before they drive anything but wording.
 *
 * The spec's Greek error categories (`transient`, `regulatory_reject`, `permanent`,
 * `duplicate_as_success`) follow from each code: `myDataErrorCategory`.
 */
import type { AuthorityCode } from '../types.ts';
import { RESEND, codeKind, error, warning } from '../shared/codes.ts';

const v = codeKind('validation', false);
const auth = codeKind('auth', false);
const conf = codeKind('configuration', false);
const sub = codeKind('submission', false);
const busy = codeKind('submission', true);

export const MYDATA_CODES: Readonly<Record<string, AuthorityCode>> = {
  '101': v('XML Syntax Validation Error.', error('The document sent to AADE was not valid XML for myDATA. Contact support.')),
  // uncertain
  '102': conf('The VAT number does not belong to an active corporation.', error('AADE does not know this AFM as an active business. Check the AFM of this location.')),
  // uncertain
  '104': v('The requested invoice was not found.', error('AADE has no document with this MARK, so it cannot be cancelled.')),
  // uncertain
  '105': auth('The user VAT number is not authorized to execute this method for this VAT number.', error('This myDATA user may not send documents for this AFM. Check the aade_user_id of this location.')),
  // uncertain
  '201': auth('The user VAT number is not authorized to execute this method.', error('This myDATA user is not authorised for this operation. Check the myDATA credentials of this location.')),
  // uncertain
  '202': v('Invalid Greek VAT number.', error(`A Greek VAT number (AFM) on the document is invalid. ${RESEND}`)),
  // uncertain
  '203': v("Gross value doesn't match the sum of net value plus taxes.", error(`The document's total does not equal its net amount plus taxes. ${RESEND}`)),
  // Published with this wording by an integrator (Epsilon SingularLogic knowledge base,
  // "Code: 204, Message: CorrelatedInvoices is mandatory for this invoice type", e.g. a 5.1).
  '204': v('CorrelatedInvoices is mandatory for this invoice type.', error(`This credit note must name the MARK of the invoice it corrects (metadata.correlated_mark), or be a non-correlated credit note (5.2). ${RESEND}`)),
  // uncertain
  '207': v("The sum of the lines' net values doesn't match the invoice's total net value.", error(`The net total does not equal the sum of the lines. ${RESEND}`)),
  // uncertain
  '208': v("The sum of the lines' gross values doesn't match the invoice's total gross value.", error(`The gross total does not equal the sum of the lines. ${RESEND}`)),
  // uncertain
  '209': v("The sum of the lines' VAT amounts doesn't match the invoice's total VAT amount.", error(`The VAT total does not equal the sum of the lines. ${RESEND}`)),
  // uncertain
  '210': v("The sum of the lines' withheld amounts doesn't match the invoice's total withheld amount.", error(`The withheld total does not equal the sum of the lines. ${RESEND}`)),
  // uncertain
  '223': v('Unsupported invoice type.', error(`AADE does not accept this invoice type here. Check metadata.invoice_type. ${RESEND}`)),
  '228': v('A field is invalid (UID or invoice type).', error(`AADE found a field of the document invalid (its UID or invoice type). ${RESEND}`)),
  '233': {
    ...sub('This UID has already been sent: AADE already holds this document.', warning('AADE already holds this document (it was received before). Nothing to do.')),
    duplicate: true,
  },
  // uncertain
  '251': sub('The invoice cannot be cancelled because it is already cancelled.', warning('This document was already cancelled at AADE. Nothing to do.')),
  // uncertain
  '260': v('IssueDate is invalid: it must be less than or equal to the current date.', error('The document is dated in the future. Check the clock of the device and send the transaction again.')),
  // HTTP answers without a ResponseDoc: the transport reports them by status.
  '429': busy('Too many requests: AADE rate limit.', warning('AADE is busy. The document will be sent again automatically.')),
  '500': busy('AADE server error.', warning('AADE had a technical problem. The document will be sent again automatically.')),
};

export type MyDataErrorCategory = 'transient' | 'regulatory_reject' | 'permanent' | 'duplicate_as_success';

/**
 * The spec's Greek `error.category` of a code: a duplicate is success (AADE holds the
 * document), a retriable code is transient, a judgement on the document's content is a
 * regulatory rejection (with `authority_code`), and the rest (credentials, configuration,
 * unknown codes) are permanent until someone changes something.
 */
export function myDataErrorCategory(code: string, message = ''): MyDataErrorCategory {
  if (isMyDataDuplicate(code, message)) return 'duplicate_as_success';
  const c = MYDATA_CODES[code];
  if (c === undefined) return 'permanent';
  if (c.retriable) return 'transient';
  return c.category === 'validation' || c.category === 'submission' ? 'regulatory_reject' : 'permanent';
}

/**
 * AADE's "already holds this document" answers: 233 always; 228 when its message says the
 * UID "has already been sent" (the provider channel's wording, which quotes the original
 * MARK), not when it names an invalid invoice type or a malformed UID.
 */
export function isMyDataDuplicate(code: string, message = ''): boolean {
  if (code === '233') return true;
  return code === '228' && /\bUID\b[\s\S]*already been sent/i.test(message);
}

/** The original MARK a duplicate answer quotes (`… (MARK:400001966030681 , …`), if any. */
export function markInDuplicateMessage(message: string): string | undefined {
  return /MARK\s*:\s*(\d{1,19})/i.exec(message)?.[1];
}
