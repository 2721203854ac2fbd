/**
 * Minimal placeholder records (FiscalRecord.placeholder = true).
 *
 * Until a system's real format (signed XML…) is written in its country issue, `build`
 * returns a small JSON document that says what it stands for, with the facts the real
 * record will carry: ids, issuer, number, date, lines, totals and the chain link. It is
 * canonical JSON, so the same input always gives the same bytes.
 */
import type { BuildInput, TransactionDraft } from '../types.ts';
import { canonicalJson, sha256Hex } from './canonical.ts';
import { issuerTaxId } from './issuer-tax-id.ts';

export const placeholderNote = (record: string, issue: string): string =>
  `minimal placeholder: the real ${record} is built in the ${issue} issue`;

/** The request lines as the record lists them (amounts in minor units, as received). */
export const linesOf = (tx: TransactionDraft) =>
  tx.items.map((l, i) => ({
    line: i + 1,
    description: l.description,
    quantity: l.quantity,
    unit_price: l.unit_price,
    tax_rate: l.tax_rate,
    tax_amount: l.tax_amount,
    total_amount: l.total_amount,
    natura: l.natura,
  }));

export const totalsOf = (tx: TransactionDraft) => ({
  currency: tx.currency,
  pretax_amount: tx.pretax_amount,
  tax_amount: tx.tax_amount,
  total_amount: tx.total_amount,
});

/** The issuer block: tax id and legal name (the config's, else the location name). */
export function issuerOf(input: BuildInput) {
  const legal = input.location.config.legal_name;
  return { tax_id: issuerTaxId(input), name: typeof legal === 'string' ? legal : input.location.name };
}

/** What every placeholder carries, whatever the system. */
export function commonFields(input: BuildInput, opts: { chained: boolean }) {
  const { original } = input;
  return {
    transaction_id: input.transactionId,
    kind: input.kind,
    environment: input.environment,
    issued_at: input.now.toISOString(),
    issuer: issuerOf(input),
    type: input.tx.type,
    payment_method: input.tx.payment_method,
    lines: linesOf(input.tx),
    totals: totalsOf(input.tx),
    software: input.software,
    chain: opts.chained
      ? { seq: input.chain.seq, previous_fingerprint: input.chain.previous?.fingerprint ?? null }
      : undefined,
    original:
      original === undefined
        ? undefined
        : {
            transaction_id: original.transactionId,
            fiscal_id: original.fiscalId,
            document_number: original.documentNumber ?? null,
            issued_at: original.issuedAt,
          },
  };
}

/** The placeholder document: canonical JSON, marked as such. */
export function placeholderBody(format: string, note: string, fields: Record<string, unknown>): string {
  return canonicalJson({ ...fields, placeholder: true, format, note });
}

/**
 * Placeholder chaining: SHA-256 (hex) over the previous fingerprint, a newline and this
 * record's body; the first record of a chain has an empty previous part. The real rule
 * of each format (VERI*FACTU huella, TicketBAI SignatureValue, SAF-T PT Hash, NF525
 * signature) replaces this with the format itself.
 */
export const chainedFingerprint = (previous: string | null, body: string): string =>
  sha256Hex(`${previous ?? ''}\n${body}`);

/** The previous link's fingerprint, or null for the first record of a chain. */
export const previousFingerprint = (input: BuildInput): string | null => input.chain.previous?.fingerprint ?? null;
