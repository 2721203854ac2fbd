/**
 * SII modification of an invoice AEAT holds (POST /v1/transactions/{id}/correct): the same
 * `RegistroLRFacturasEmitidas`, same IDFactura (issuer NIF, NumSerieFacturaEmisor,
 * FechaExpedicionFacturaEmisor) and PeriodoLiquidacion, sent in a SuministroLRFacturasEmitidas
 * whose header says `TipoComunicacion` A1: "Modificación (La información que se comunica
 * sustituye a la existente relacionada)" (SuministroInformacion.xsd ClaveTipoComunicacionType;
 * FORMATS.md §3). The A1 is in the message's header, not in the record: the stored record
 * is an alta like any other, and the client writes A1 because the core hands it over as a
 * correction (`StoredRecord.correction`; client.ts). AEAT refuses an A1 of an invoice it
 * does not hold with 3002 (codes.ts).
 *
 * What a correction changes: only what the invoice may be corrected in without a rectifying
 * invoice (RD 1619/2012 art. 15: amounts, quota or the invoice's own data need one), and what
 * the SII record carries of it: the customer (`Contraparte`, which SII takes from
 * metadata.counterparty_* — the spec's "Spain SII" table —, not from customer_context) and
 * the operation's description (`DescripcionOperacion`, metadata.description). SII is not
 * chained: the core puts the record on a side sequence.
 */
import { badRequest, conflict } from '../../core/errors.ts';
import type { CorrectionBuildInput, FiscalRecord, RecordCorrection, TransactionContext, TransactionDraft } from '../types.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { checkKeptFields, sameValue as same } from '../es/correction-fields.ts';
import { NAMES_COUNTERPARTY, buildAlta } from './build.ts';
import { invoiceOfRecord } from './consulta.ts';
import { validateSiiTransaction } from './metadata.ts';
import { operationOf } from './soap.ts';

/** The metadata that makes the record's `Contraparte` (metadata.ts `readCounterparty`). */
export const COUNTERPARTY_FIELDS = ['counterparty_nif', 'counterparty_name', 'counterparty_id_type', 'counterparty_country', 'counterparty_id'] as const;

/** What an A1 may change: the Contraparte and DescripcionOperacion. */
export const SII_CORRECTABLE_METADATA = [...COUNTERPARTY_FIELDS, 'description'] as const;

/**
 * Metadata that identifies the invoice or decides its amounts, type or period: a correction
 * keeps it as stored. The core lets a request name only SII_CORRECTABLE_METADATA; these are
 * checked because validateSiiTransaction derives some (invoice_type, exercise, period).
 */
const KEPT = [
  'invoice_type', 'series', 'invoice_number', 'issue_date', 'exercise', 'period', 'regime_key', 'simplified', 'book_type',
  'original_invoice_number', 'original_issue_date', 'exemption_code', 'replaces_simplified', 'operation_date',
] as const;

export const VOID_NOT_CORRECTED =
  'transaction cannot be corrected: an SII void is a baja (RegistroLRBajaExpedidas), which carries no customer or description to modify';
export const COUNTERPARTY_NOT_NAMED = (type: string): string =>
  `metadata.counterparty_* cannot be corrected on an ${type} invoice: its SII record names no counterparty (Contraparte); ` +
  'to name the customer, issue a full invoice (F3) replacing it';
export const NOTHING_IN_RECORD =
  'nothing to correct in the SII record: a modification (A1) changes its Contraparte (metadata.counterparty_nif, counterparty_name, ' +
  'or counterparty_id_type, counterparty_country and counterparty_id) or its DescripcionOperacion (metadata.description); ' +
  'customer_context is not written in SII records';

function validate(tx: TransactionDraft, original: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  // The transaction's kind, not the request, is what cannot be corrected (409, as the core's).
  if (original.type === 'void') throw conflict(VOID_NOT_CORRECTED);
  const metadata = validateSiiTransaction(tx, ctx);
  checkKeptFields(metadata, original.metadata, KEPT, "the invoice's identity, type and period");
  const type = metaString(original, 'invoice_type') ?? 'F1';
  const partyChanged = COUNTERPARTY_FIELDS.some((f) => !same(metadata[f], original.metadata[f]));
  if (partyChanged && !NAMES_COUNTERPARTY.has(type)) throw badRequest(COUNTERPARTY_NOT_NAMED(type));
  // An A1 identical to what AEAT holds would modify nothing (customer_context alone never reaches the record).
  if (!partyChanged && same(metadata.description, original.metadata.description)) throw badRequest(NOTHING_IN_RECORD);
  return metadata;
}

function build(input: CorrectionBuildInput): FiscalRecord {
  const body = input.original.body;
  const held = operationOf(body) === 'alta' ? invoiceOfRecord(body) : undefined;
  // Only an alta is corrected (validate refuses a void, the core a cancellation): anything else is a bug.
  if (held === undefined) throw new Error(`transaction ${input.original.transactionId}: its record is not an SII alta naming an invoice to modify`);
  const record = buildAlta(
    { ...input, kind: 'record', original: undefined },
    { id: { issuerNif: held.issuerNif, numSerie: held.numSerie, issueDate: held.issueDate }, exercise: held.exercise, period: held.period },
  );
  // Not a new invoice: no number of its own (the transaction keeps the original's), nothing new to print.
  return { ...record, documentNumber: null, renderHints: [] };
}

export const SII_CORRECTION: RecordCorrection = { metadataFields: SII_CORRECTABLE_METADATA, validate, build };
