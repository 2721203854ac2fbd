/**
 * verify-chain for myDATA (countries/types.ts `verifyRecord`): a document's fingerprint is
 * its UID (uid.ts), recomputed from the document's own issuer, date, branch, type, series
 * and number; its number (`aa`) follows the previous document of the series (+1 in the same
 * year, 1 in a new one: build.ts `nextAa`). myDATA documents carry no signature and no link
 * to their predecessor (AADE's MARK is their registration). A CancelInvoice record (JSON,
 * no fingerprint) has neither.
 */
import type { RecordFault, VerifyRecordInput } from '../types.ts';
import { textAt, xmlRoot } from '../shared/record-verify.ts';
import { uidOfInvoice } from './uid.ts';

export function verifyMyDataRecord({ record, previous }: VerifyRecordInput): RecordFault | null {
  if (!record.contentType.startsWith('application/xml')) {
    return record.fingerprint === null ? null : { kind: 'body_changed', reason: 'a record with a fingerprint must be an invoice document' };
  }
  const parsed = xmlRoot(record.body);
  if ('fault' in parsed) return parsed.fault;
  const invoice = parsed.root.localName === 'InvoicesDoc' ? parsed.root.getElementsByTagNameNS('*', 'invoice')[0] : undefined;
  if (!invoice) return { kind: 'body_changed', reason: 'not a myDATA InvoicesDoc' };
  const t = (...path: string[]) => textAt(invoice, ...path) ?? '';
  const uid = uidOfInvoice(invoice);
  if (uid !== record.fingerprint) return { kind: 'body_changed', reason: `fingerprint mismatch: the document gives UID ${uid}, stored ${record.fingerprint ?? '(none)'}` };
  const aa = Number(t('invoiceHeader', 'aa'));
  const year = t('invoiceHeader', 'issueDate').slice(0, 4);
  const prevAa = previous?.documentNumber !== undefined && previous?.documentNumber !== null ? Number(previous.documentNumber) : null;
  if (prevAa !== null && Number.isInteger(prevAa) && aa !== prevAa + 1 && aa !== 1) {
    return { kind: 'link_broken', reason: `document number ${aa} does not follow ${prevAa} in its series (year ${year})` };
  }
  return null;
}
