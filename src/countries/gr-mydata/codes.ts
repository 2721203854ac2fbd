/**
 * myDATA error codes (AADE myDATA REST API documentation, error tables), in English as
 * AADE writes them. Unknown codes get a generic message.
 */
import type { AuthorityCode } from '../types.ts';

const v = (message: string): AuthorityCode => ({ message, category: 'validation', retriable: false });

export const MYDATA_CODES: Readonly<Record<string, AuthorityCode>> = {
  '101': v('XML Syntax Validation Error.'),
  '102': { message: 'The VAT number does not belong to an active corporation.', category: 'configuration', retriable: false },
  '104': v('The requested invoice was not found.'),
  '105': { message: 'The user VAT number is not authorized to execute this method for this VAT number.', category: 'auth', retriable: false },
  '201': { message: 'The user VAT number is not authorized to execute this method.', category: 'auth', retriable: false },
  '202': v('Invalid Greek VAT number.'),
  '203': v("Gross value doesn't match the sum of net value plus taxes."),
  '207': v("The sum of the lines' net values doesn't match the invoice's total net value."),
  '208': v("The sum of the lines' gross values doesn't match the invoice's total gross value."),
  '209': v("The sum of the lines' VAT amounts doesn't match the invoice's total VAT amount."),
  '210': v("The sum of the lines' withheld amounts doesn't match the invoice's total withheld amount."),
  '223': v('Unsupported invoice type.'),
  '228': v('A field is invalid (UID or invoice type).'),
  '233': {
    message: 'This UID has already been sent: AADE already holds this document.',
    category: 'submission',
    retriable: false,
    duplicate: true,
  },
  '251': { message: 'The invoice cannot be cancelled because it is already cancelled.', category: 'submission', retriable: false },
  '260': v('IssueDate is invalid: it must be less than or equal to the current date.'),
};
