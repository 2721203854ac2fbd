/**
 * A dry run of a create (DECISIONS "Beyond the spec": `POST /v1/transactions/preview`):
 * the transaction entry create would append, built by the same code (transaction-entry.ts
 * `transactionEntry`, the ledger's `linkAfter` and the system's `build`) on the chain's
 * committed head and its series' next number, then shown instead of written. Nothing is
 * stored, numbered, moved, enqueued or emitted (docs/decisions.md "Transaction preview").
 */
import type { TransactionDraft } from '../core/transaction.ts';
import type { TransactionView } from './transaction-view.ts';
import type { Ledger } from '../ledger/types.ts';
import { transactionEntry, type EntryDeps, type TransactionAppend } from './transaction-entry.ts';

/** What a preview answers: the sale as create would store it, its fiscal record, and where in its chain it was built. */
export interface TransactionPreview {
  preview: true;
  /** When the preview was built: the issue time its record carries (a create issues at its own time). */
  computed_at: Date;
  /** When the chain head it was built on was written; null when the chain has no record yet. */
  chain_head_at: Date | null;
  /** The place the record would take in its chain, and the fingerprint it would link to. */
  seq: number;
  previous_fingerprint: string | null;
  /** The sale as create normalizes it (canonical form, the system's validated metadata). */
  normalized: TransactionDraft;
  /**
   * The id the preview was built with. Create assigns its own, so what a record derives
   * from it differs there (SII's invoice number when the request gives none, the NF525
   * record's transaction_id, the PT qr_image URL, which answers 404 for this id).
   */
  transaction_id: string;
  /**
   * The transaction as create stores it: `status` is the one it is created with, before any
   * submission (create may answer a later one after its inline wait, with the authority's
   * render hints added).
   */
  transaction: Pick<TransactionView,
    'location_id' | 'type' | 'status' | 'amount' | 'currency' | 'country' | 'system' | 'environment' | 'fiscal_id' | 'render_hints' | 'deadline_at' | 'completed_at'>;
  /** The fiscal document as `GET /v1/transactions/{id}/fiscal-record` would return it, with its link and QR content. */
  fiscal_record: {
    content_type: string;
    body: string;
    placeholder: boolean;
    fingerprint: string | null;
    fiscal_id: string | null;
    document_number: string | null;
    qr_data: string | null;
  };
  /** The keys the record was signed with: the same ones create would use. */
  signature: {
    /** The issuer's certificate (systems that sign with one): the account's uploaded one, or its sandbox one. */
    certificate: 'uploaded' | 'sandbox' | 'device' | null;
    /** The location's record key id (systems whose records the installation signs). */
    record_key_id: string | null;
  };
}

/** Builds `p` as create would append it, on the chain as it stands; writes nothing. */
export async function previewTransaction(ledger: Ledger, p: TransactionAppend, deps: EntryDeps): Promise<TransactionPreview> {
  const { built, seq, previousFingerprint, headAt, at } = await ledger.preview(transactionEntry(p, deps));
  const t = built.transaction!;
  const r = built.record;
  return {
    preview: true,
    computed_at: at,
    chain_head_at: headAt,
    seq,
    previous_fingerprint: previousFingerprint,
    normalized: t.normalized,
    transaction_id: t.id,
    transaction: {
      location_id: t.location_id, type: t.type, status: t.status, amount: t.amount, currency: t.currency, country: t.country,
      system: t.system, environment: t.environment, fiscal_id: t.fiscal_id, render_hints: t.render_hints,
      deadline_at: t.deadline_at, completed_at: t.completed_at,
    },
    fiscal_record: {
      content_type: r.content_type, body: r.body, placeholder: r.placeholder, fingerprint: r.fingerprint,
      fiscal_id: r.fiscal_id, document_number: r.document_number, qr_data: r.qr_data,
    },
    signature: { certificate: p.signingKey?.source ?? null, record_key_id: p.recordKey?.keyId ?? null },
  };
}
