/**
 * Italy Documento Commerciale transaction rules: the spec's DC metadata table.
 *
 * Payments: the document splits what was collected in cash (`cash_amount`), by card or
 * transfer (`electronic_amount`) and in meal vouchers (`ticket_amount`). When neither
 * cash nor electronic amount is given, the payment method fills the one it names with
 * what vouchers do not cover.
 *
 * Returns and cancellations (resi / annulli) must name the original document: the
 * register (matricola), its date and its number ("NNNN-NNNN": closure-progressive).
 */
import { badRequest } from '../../core/errors.ts';
import type { TransactionContext, TransactionDraft } from '../types.ts';
import { isIsoDate } from '../shared/dates.ts';
import {
  baseMetadata,
  optionalAmount,
  optionalBoolean,
  optionalCount,
  optionalText,
  withoutUndefined,
  type Metadata,
} from '../shared/metadata-fields.ts';
import { checkNatura } from '../it/natura.ts';
import { checkItalianAmounts } from '../it/amounts.ts';

export const SUM_MESSAGE = 'cash_amount + electronic_amount + ticket_amount must equal total_amount';

export function validateDcTransaction(tx: TransactionDraft, _ctx: TransactionContext): Record<string, unknown> {
  const meta = baseMetadata(tx, 'IT');
  checkNatura(tx);
  checkItalianAmounts(tx);

  const payments = readPayments(tx, meta);
  const ticket_count = optionalCount(meta, 'ticket_count');
  // Lotteria degli scontrini: the customer's 8-character lottery code.
  const lottery_code = optionalText(meta, 'lottery_code', 'metadata.lottery_code must be 8 alphanumeric characters', /^[A-Za-z0-9]{8}$/);
  const instant_lottery_qr = optionalText(meta, 'instant_lottery_qr', 'metadata.instant_lottery_qr must be a string');
  // A person's codice fiscale: 16 characters (6 letters, 2 digits, letter, 2 digits, letter, 3 digits, check letter).
  const customer_codice_fiscale = optionalText(
    meta,
    'customer_codice_fiscale',
    'metadata.customer_codice_fiscale must be 16 alphanumeric characters',
    /^[A-Za-z0-9]{16}$/,
  )?.toUpperCase();

  const flags = readFlags(tx, meta);
  const original = flags.is_return || flags.is_cancellation ? readOriginal(meta) : {};

  return withoutUndefined({
    ...meta,
    ...payments,
    ticket_count,
    lottery_code,
    instant_lottery_qr,
    customer_codice_fiscale,
    ...flags,
    ...original,
  });
}

function readPayments(tx: TransactionDraft, meta: Metadata) {
  let cash_amount = optionalAmount(meta, 'cash_amount');
  let electronic_amount = optionalAmount(meta, 'electronic_amount');
  const ticket_amount = optionalAmount(meta, 'ticket_amount');
  if (cash_amount === undefined && electronic_amount === undefined) {
    const rest = tx.total_amount - (ticket_amount ?? 0);
    if (rest < 0) throw badRequest(SUM_MESSAGE);
    if (tx.payment_method === 'cash') cash_amount = rest;
    else if (tx.payment_method === 'card' || tx.payment_method === 'transfer') electronic_amount = rest;
  } else if ((cash_amount ?? 0) + (electronic_amount ?? 0) + (ticket_amount ?? 0) !== tx.total_amount) {
    // Either given: what was given says how the whole was paid (a missing one is 0), or
    // the document would declare a payment other than its total (9,999.99 paid on 12.20).
    throw badRequest(SUM_MESSAGE);
  }
  return { cash_amount, electronic_amount, ticket_amount };
}

/**
 * `is_return` / `is_cancellation`. A refund or void is a return unless the client marks
 * it a cancellation; a document cannot be both (a reso and an annullo are different
 * documents).
 */
function readFlags(tx: TransactionDraft, meta: Metadata) {
  const is_cancellation = optionalBoolean(meta, 'is_cancellation') ?? false;
  const given = optionalBoolean(meta, 'is_return');
  const corrective = tx.type !== 'sale';
  const is_return = given ?? (corrective && !is_cancellation);
  if (is_return && is_cancellation) throw badRequest('metadata.is_return and metadata.is_cancellation cannot both be true');
  if (corrective && !is_return && !is_cancellation) {
    throw badRequest('metadata.is_return or metadata.is_cancellation must be true for refund and void transactions');
  }
  return { is_return, is_cancellation };
}

function readOriginal(meta: Metadata) {
  const required = (field: string) => `metadata.${field} is required for returns and cancellations`;
  const original_matricola = optionalText(
    meta,
    'original_matricola',
    // MatrTrasm of the lottery/RT schemas: exactly 11 characters (a PEM "XXXX-XXXXXX", an RT serial "99MEX012345").
    'metadata.original_matricola must be the 11-character register serial (e.g. XXXX-XXXXXX)',
    /^[A-Za-z0-9][A-Za-z0-9-]{10}$/,
  );
  if (original_matricola === undefined) throw badRequest(required('original_matricola'));
  const original_date = optionalText(meta, 'original_date', 'metadata.original_date must be a date in the form YYYY-MM-DD');
  if (original_date === undefined) throw badRequest(required('original_date'));
  if (!isIsoDate(original_date)) throw badRequest('metadata.original_date must be a date in the form YYYY-MM-DD');
  const original_number = optionalText(meta, 'original_number', 'metadata.original_number must have the form NNNN-NNNN', /^\d{4}-\d{4}$/);
  if (original_number === undefined) throw badRequest(required('original_number'));
  return { original_matricola, original_date, original_number };
}
