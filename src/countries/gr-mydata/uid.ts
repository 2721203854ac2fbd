/**
 * The myDATA invoice UID, computed client-side (FORMATS.md §6 "UID", AADE myDATA FAQ):
 * SHA-1 over `<issuer AFM>-<issueDate yyyy-MM-dd>-<branch>-<invoiceType>-<series>-<aa>`,
 * uppercase hex. AADE computes the same and answers a second document with the same UID
 * as a duplicate (code 228/233), which is how a retry after a timeout AADE did receive
 * is recognised.
 *
 * Encoding: UTF-8 (the text encoding is not stated in the FAQ; myDATA is an XML/UTF-8
 * API, and with Latin series, as our defaults, every encoding gives the same bytes). A
 * Greek series gives a different digest under ISO-8859-7 (FORMATS.md §9): to confirm
 * against a real MARK/UID pair (docs/decisions.md).
 */
import { createHash } from 'node:crypto';
import { textAt, xmlRoot } from '../shared/record-verify.ts';

export interface UidFields {
  afm: string;
  issueDate: string;
  branch: number;
  invoiceType: string;
  series: string;
  aa: string;
}

export const uidInput = (f: UidFields): string => [f.afm, f.issueDate, String(f.branch), f.invoiceType, f.series, f.aa].join('-');

export const myDataUid = (f: UidFields): string => createHash('sha1').update(uidInput(f), 'utf8').digest('hex').toUpperCase();

/**
 * The UID of an `InvoicesDoc` (its first invoice), recomputed from the document itself, as
 * AADE does on receipt; undefined for anything else (a CancelInvoice request is JSON).
 * The stub AADE (sandbox.ts) answers it as `invoiceUid`, so a sandbox receipt prints the
 * UID AADE would give.
 */
export function uidOfDocument(body: string): string | undefined {
  const parsed = xmlRoot(body);
  if ('fault' in parsed || parsed.root.localName !== 'InvoicesDoc') return undefined;
  const invoice = parsed.root.getElementsByTagNameNS('*', 'invoice')[0];
  return invoice ? uidOfInvoice(invoice) : undefined;
}

/** The UID of one `invoice` element, from its issuer and header fields (verify.ts checks stored records with it). */
export function uidOfInvoice(invoice: Element): string {
  const t = (...path: string[]) => textAt(invoice, ...path) ?? '';
  return myDataUid({
    afm: t('issuer', 'vatNumber'),
    issueDate: t('invoiceHeader', 'issueDate'),
    branch: Number(t('issuer', 'branch')),
    invoiceType: t('invoiceHeader', 'invoiceType'),
    series: t('invoiceHeader', 'series'),
    aa: t('invoiceHeader', 'aa'),
  });
}
