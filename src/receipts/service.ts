/**
 * Receipts of stored transactions: the caller's transaction (another account's is not
 * found), the location it was made at (deleted or not: the receipt is of the past
 * sale), its system's receipt facts, drawn by render.ts.
 */
import { badRequest, forbidden, notFound } from '../core/errors.ts';
import { allowsCountry, environmentMismatch } from '../core/permissions.ts';
import type { Country } from '../core/country.ts';
import { getSystem, isSystemKey } from '../countries/registry.ts';
import type { FirstRecordDeps, FiscalSystem, SoftwareIdentity } from '../countries/types.ts';
import type { Clock } from '../core/clock.ts';
import type { LocationService } from '../services/locations.ts';
import type { SigningKeyService } from '../services/signing-keys.ts';
import type { AuthContext } from '../services/auth-context.ts';
import type { Db } from '../store/db.ts';
import { correctionsRepo, lastAcceptedCorrection } from '../store/repos/corrections-repo.ts';
import { fiscalRecordsRepo } from '../store/repos/fiscal-records-repo.ts';
import { locationsRepo, type LocationRow } from '../store/repos/locations-repo.ts';
import { receiptDuplicatesRepo } from '../store/repos/receipt-duplicates-repo.ts';
import { transactionsRepo, type TransactionRow } from '../store/repos/transactions-repo.ts';
import { receiptLanguages, receiptOptions, renderReceipt, type RenderedReceipt } from './render.ts';
import { legalNameOf, printedIssuer } from '../services/record-issuer.ts';

export interface ReceiptService {
  render(auth: AuthContext, id: string, query: Record<string, unknown>): Promise<RenderedReceipt>;
  /** A numbered duplicate (a reprint), counted: for systems whose receipts have them (`receipt.duplicate`). */
  duplicate(auth: AuthContext, id: string, query: Record<string, unknown>, now: Date): Promise<RenderedReceipt & { copy: number }>;
}

export const RECEIPT_ERRORS = {
  noDuplicates: 'this transaction\'s receipts have no numbered duplicates: print the receipt again (GET /v1/transactions/{id}/receipt)',
} as const;

/** What a duplicate's journaling needs (`receipt.duplicate.journal`): the ledger, the location and its record key. */
export interface DuplicateJournalDeps {
  ledger: FirstRecordDeps['ledger'];
  clock: Clock;
  log: FirstRecordDeps['log'];
  locations: Pick<LocationService, 'toFiscal'>;
  signingKeys: Pick<SigningKeyService, 'recordKey'>;
}

export function createReceiptService(deps: { db: Db; software: SoftwareIdentity; journal?: DuplicateJournalDeps | undefined }): ReceiptService {
  /**
   * The system's journaling of a copy, where it has one (France: the JET), in the log of
   * the location the transaction was made at, deleted or not: a reprint of a closed
   * register's ticket is journaled there all the same (as a cancellation of it is recorded
   * in its chain).
   */
  function journalOf(row: TransactionRow, at: LocationRow | undefined, system: FiscalSystem, documentNumber: string | null, copy: number): (() => Promise<void>) | undefined {
    const hook = system.receipt?.duplicate?.journal;
    const j = deps.journal;
    if (!hook || !j) return undefined;
    return async () => {
      if (!at) throw new Error(`receipt duplicate: location ${row.location_id} not found`);
      const fiscal = j.locations.toFiscal(at);
      const kind = system.capabilities.recordKey;
      const recordKey = kind ? await j.signingKeys.recordKey(fiscal, kind) : undefined;
      await hook({ db: deps.db, clock: j.clock, log: j.log, ledger: j.ledger, software: deps.software }, {
        location: fiscal, environment: row.environment, recordKey, transactionId: row.id, documentNumber, copy,
      });
    };
  }

  /**
   * Draws a transaction's receipt; with `copyOf`, a numbered duplicate, whose number it
   * answers (taken once the options are checked and the system is known to have them).
   */
  async function draw(
    auth: AuthContext, id: string, query: Record<string, unknown>,
    copyOf?: (row: TransactionRow, location: LocationRow | undefined, system: FiscalSystem, documentNumber: string | null) => Promise<number>,
  ) {
    const row = await transactionsRepo.get(deps.db, auth.accountId, id);
    if (!row) throw notFound('transaction not found');
    // A numbered duplicate acts in the transaction's country (it takes a copy number and, in
    // France, writes a JET event): a key scoped to other countries may read the receipt, as it
    // may read the transaction, but not reprint it (DECISIONS "Keys": 403 when transacting
    // elsewhere; the message is the cancel's).
    if (copyOf && !allowsCountry(auth.permissions, row.country)) throw forbidden(`API key is not allowed to act in country ${row.country}`);
    // A reprint is counted (France: journaled in the register's JET) in the transaction's
    // environment: only a key of that environment may take one.
    if (copyOf && row.environment !== auth.environment) throw forbidden(environmentMismatch(auth.environment, row.environment));
    const system = row.system && isSystemKey(row.system) ? getSystem(row.system) : undefined;
    // The options are checked before anything is drawn (or counted): a bad one is a 400 whatever the transaction.
    const options = receiptOptions(query, receiptLanguages(system?.receipt));
    if (copyOf && !system?.receipt?.duplicate) throw badRequest(RECEIPT_ERRORS.noDuplicates);
    const record = await fiscalRecordsRepo.getForTransaction(deps.db, row.id);
    const documentNumber = record?.document_number ?? null;
    // Deleted or not: the location the transaction was made at (drawn, and journaled in).
    const location = await locationsRepo.getById(deps.db, row.location_id);
    const copy = copyOf ? await copyOf(row, location, system!, documentNumber) : undefined;
    // A cancellation names the document it cancels: the original as stored (same account).
    const originalRow = row.cancels_id ? await transactionsRepo.get(deps.db, auth.accountId, row.cancels_id) : undefined;
    const originalRecord = originalRow ? await fiscalRecordsRepo.getForTransaction(deps.db, originalRow.id) : undefined;
    const original = originalRow
      ? {
        documentNumber: originalRecord?.document_number ?? null,
        fiscalId: originalRow.fiscal_id,
        hints: originalRow.render_hints,
        tx: originalRow.normalized,
        createdAt: originalRow.created_at,
        record: originalRecord?.body ?? null,
      }
      : null;
    // A document since cancelled may name what cancelled it (ReceiptFacts.cancelledNotice): the cancellation that stands.
    const cancellationRow = row.status === 'cancelled' && row.cancelled_by_id ? await transactionsRepo.get(deps.db, auth.accountId, row.cancelled_by_id) : undefined;
    const cancellationRecord = cancellationRow ? await fiscalRecordsRepo.getForTransaction(deps.db, cancellationRow.id) : undefined;
    const cancelledBy = cancellationRow
      ? {
        documentNumber: cancellationRecord?.document_number ?? null,
        fiscalId: cancellationRow.fiscal_id,
        hints: cancellationRow.render_hints,
        createdAt: cancellationRow.created_at,
        record: cancellationRecord?.body ?? null,
      }
      : null;
    // The document as its authority holds it: after an accepted correction (POST …/correct) its
    // corrected draft (customer, descriptive metadata); `normalized` stays the draft as created.
    // Read only for a system with corrections (a cancellation is never corrected).
    const corrected = system?.correct && row.type !== 'cancellation' ? lastAcceptedCorrection(await correctionsRepo.ofTransaction(deps.db, row.id))?.draft : undefined;
    // The location as the document was issued (its record kept it), else as it is now.
    const issuer = printedIssuer(record?.issuer, {
      name: location?.name ?? '', address: location?.address ?? null, legal_name: location ? legalNameOf(location.country_config) : null,
    });
    return renderReceipt({
      transaction: {
        id: row.id,
        type: row.type,
        environment: row.environment,
        country: row.country as Country,
        created_at: row.created_at,
        fiscal_id: row.fiscal_id,
        document_number: documentNumber,
        normalized: corrected ?? row.normalized,
        render_hints: row.render_hints,
        copy,
        status: row.status,
        original,
        record: record?.body ?? null,
        cancelledBy,
      },
      location: { name: issuer.name, address: issuer.address, tax_id: location?.tax_id ?? null, legal_name: issuer.legal_name },
      system,
      software: deps.software,
    }, options).then((out) => ({ ...out, copy }));
  }

  return {
    render: (auth, id, query) => draw(auth, id, query),
    async duplicate(auth, id, query, now) {
      let journal: (() => Promise<void>) | undefined;
      const out = await draw(auth, id, query, async (row, location, system, documentNumber) => {
        const copy = await receiptDuplicatesRepo.takeNext(deps.db, row.id, auth.accountId, now);
        journal = journalOf(row, location, system, documentNumber, copy);
        return copy;
      });
      if (journal) {
        try {
          await journal();
        } catch (err) {
          // Not traced, not printed: the number is given back (the next reprint takes it).
          await receiptDuplicatesRepo.giveBack(deps.db, id, out.copy!);
          throw err;
        }
      }
      return { ...out, copy: out.copy! };
    },
  };
}
