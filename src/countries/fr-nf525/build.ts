/**
 * The NF525 record (CGI art. 286-I-3° bis, BOI-TVA-DECLA-30-10-30): each sale, refund,
 * void and cancellation of a register is a JSON document signed with the location's
 * ECDSA P-256 record key (`capabilities.recordKey: 'ec-p256'`, `input.recordKey`) over
 * its fiscal data, its grand totals and the previous record's signature: one chain per
 * register (a location). The document, the signed message and the signature's encoding
 * are in record.ts; the grand totals in totals.ts. A cancellation is itself a new,
 * numbered and signed record of the chain, which negates the one it cancels: nothing is
 * ever deleted or changed.
 *
 * The fiscal id is the record's number on its register: `<register_id>-<seq, 8 digits>`.
 * The fingerprint (what the next record signs as `previous`) is the signature itself.
 * verify.ts checks a run of records the way an auditor would.
 */
import type { BuildInput, FiscalRecord, PrepareInput, PreparedRecord, TransactionDraft, TransactionType } from '../types.ts';
import { configString } from '../shared/config-fields.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { buildPrepared } from '../shared/prepared-record.ts';
import { localDate, localDateTimeWithOffset } from '../shared/dates.ts';
import { textHint } from '../shared/render-hints.ts';
import {
  NF525_FORMAT,
  NF525_RECORD_VERSION,
  SIGNATURE_ALGORITHM,
  nf525MessageHead,
  rateText,
  signatureExtract,
  type Nf525Operation,
  type Nf525Record,
  type VatTotal,
} from './record.ts';
import { nextTotals, otherEnvironmentLinkData, periodsOf, readNf525Totals, totalsLinkData } from './totals.ts';

export const nf525Number = (registerId: string, seq: number): string => `${registerId}-${String(seq).padStart(8, '0')}`;

/** How a transaction type counts in the totals: sales add, refunds and voids subtract. */
const SIGN: Record<TransactionType, 1 | -1> = { sale: 1, refund: -1, void: -1 };

/** The record's operation and the sign its amounts take (a cancellation negates its original). */
function operationOf(input: Pick<BuildInput, 'kind'>, tx: TransactionDraft): { operation: Nf525Operation; sign: 1 | -1 } {
  if (input.kind === 'cancellation') return { operation: 'cancellation', sign: SIGN[tx.type] === 1 ? -1 : 1 };
  return { operation: tx.type, sign: SIGN[tx.type] };
}

/** Per-rate totals of the lines, rate ascending, with the operation's sign. */
export function vatTotals(tx: TransactionDraft, sign: 1 | -1): VatTotal[] {
  const byRate = new Map<number, { excl: number; tax: number; incl: number }>();
  for (const l of tx.items) {
    const t = byRate.get(l.tax_rate) ?? { excl: 0, tax: 0, incl: 0 };
    t.excl += l.total_amount - l.tax_amount;
    t.tax += l.tax_amount;
    t.incl += l.total_amount;
    byRate.set(l.tax_rate, t);
  }
  // `+ 0` turns the -0 of a negated zero into 0 (JSON and the message would disagree otherwise).
  return [...byRate.entries()]
    .sort(([a], [b]) => a - b)
    .map(([rate, t]) => ({ rate: rateText(rate), excl_tax: sign * t.excl + 0, tax: sign * t.tax + 0, incl_tax: sign * t.incl + 0 }));
}

export const buildNf525 = (input: BuildInput): FiscalRecord => buildPrepared(prepareNf525(input), input);

/**
 * Everything of the record but its signature (FiscalSystem.prepare): the message up to
 * the previous record's signature (its last field), and how the signature completes the
 * record. Nothing here reads that previous signature; the grand totals come from the
 * previous record's link data.
 */
export function prepareNf525(input: PrepareInput): PreparedRecord {
  const key = input.recordKey;
  if (key === undefined || key.kind !== 'ec-p256') {
    throw new Error('fr-nf525: no record key: NF525 records are signed with the location\'s ec-p256 record key (capabilities.recordKey)');
  }
  const cancellation = input.kind === 'cancellation';
  // A cancellation repeats the amounts of the record it cancels (its draft is the original's).
  const tx = cancellation && input.original ? input.original.tx : input.tx;
  const registerId = configString(input.location.config, 'register_id') ?? input.location.id;
  const number = nf525Number(registerId, input.chain.seq);
  const { operation, sign } = operationOf(input, tx);
  const env = input.environment;

  const totals = {
    excl_tax: sign * tx.pretax_amount + 0,
    tax: sign * tx.tax_amount + 0,
    incl_tax: sign * tx.total_amount + 0,
  };
  const previousLink = input.chain.previous?.linkData;
  const after = nextTotals(readNf525Totals(previousLink, env), periodsOf(localDate(input.now, 'FR')), {
    excl: totals.excl_tax,
    incl: totals.incl_tax,
  });

  const unsigned: Omit<Nf525Record, 'signature'> = {
    format: NF525_FORMAT,
    version: NF525_RECORD_VERSION,
    register_id: registerId,
    legal_name: configString(input.location.config, 'legal_name') ?? input.location.name,
    // What the ticket's header prints of the location, kept with the ticket for its duplicates.
    location: { name: input.location.name, address: input.location.address ?? null },
    environment: env,
    seq: input.chain.seq,
    document_number: number,
    operation,
    timestamp: localDateTimeWithOffset(input.now, 'FR'),
    transaction_id: input.transactionId,
    cancels: cancellation
      ? {
        document_number: input.original?.documentNumber ?? input.original?.fiscalId ?? '',
        transaction_id: input.original?.transactionId ?? '',
        // The reason the cancel gave (the cancellation's own draft carries it), signed (record.ts field 26).
        reason: metaString(input.tx, 'cancellation_reason') ?? null,
      }
      : null,
    currency: tx.currency,
    payment_method: tx.payment_method,
    lines: tx.items.map((l) => ({
      description: l.description, quantity: l.quantity, unit_price: l.unit_price, tax_rate: l.tax_rate, tax_amount: l.tax_amount, total_amount: l.total_amount,
    })),
    vat: vatTotals(tx, sign),
    totals,
    grand_totals: {
      perpetual: { excl_tax: after.perpetual.excl, incl_tax: after.perpetual.incl },
      day: { period: after.day.period, excl_tax: after.day.excl, incl_tax: after.day.incl },
      month: { period: after.month.period, excl_tax: after.month.excl, incl_tax: after.month.incl },
      fiscal_year: { period: after.year.period, excl_tax: after.year.excl, incl_tax: after.year.incl },
    },
    software: { name: input.software.name, version: input.software.version },
  };
  const linkData = { ...otherEnvironmentLinkData(previousLink, env), ...totalsLinkData(env, after) };
  const finish = (value: string, previous: string | null): FiscalRecord => {
    const record: Nf525Record = { ...unsigned, signature: { algorithm: SIGNATURE_ALGORITHM, key_id: key.keyId, previous, value } };
    return {
      // One line: the record is stored, written to the database and served as it is signed
      // for; indenting it made every create write a third more bytes (golden/*.pretty.json
      // are the readable copies).
      body: JSON.stringify(record),
      contentType: 'application/json',
      fiscalId: number,
      documentNumber: number,
      fingerprint: value,
      linkData,
      qrData: null,
      placeholder: false,
      renderHints: [textHint('document_number', 'header', number), textHint('signature_extract', 'footer_bottom', signatureExtract(value))],
    };
  };
  return {
    signing: { signer: key.signer, digest: 'sha256', encoding: 'base64url', messageHead: nf525MessageHead({ ...unsigned, signature: { key_id: key.keyId } }) },
    fiscalId: number,
    linkData,
    finish,
  };
}
