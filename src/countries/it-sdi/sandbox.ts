/**
 * Stub SdI. A real submission is answered later by a notification (RC delivered, NS
 * rejected, MC not delivered); the stub answers at once: accept = the receipt (RC),
 * status `delivered`, with the IdentificativoSdI SdI gives every file (a number; 10
 * digits here); reject = the scarto (NS), status `rejected`.
 */
import { derivedDigits, type SandboxSpec } from '../shared/sandbox.ts';
import { SDI_CODES } from './codes.ts';

export const sdiSandbox: SandboxSpec = {
  system: 'it-sdi',
  authority: 'SdI',
  codes: SDI_CODES,
  rejectedStatus: 'rejected',
  accept: (record) => {
    const id = derivedDigits(record.transactionId, 'sdi-identificativo', 10);
    return { fiscalId: id, status: 'delivered', response: { notification: 'RC', IdentificativoSdI: id } };
  },
};
