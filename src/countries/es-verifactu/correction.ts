/**
 * VERI*FACTU subsanación (POST /v1/transactions/{id}/correct): a record AEAT holds (accepted,
 * or "AceptadoConErrores" with a 2xxx code) is corrected by a new RegistroAlta of the same
 * IDFactura with `Subsanacion` S, chained like any record.
 *
 * AEAT's record design ("Diseño de registro de facturación", the operations table that OCA
 * l10n-spain issue 4420 / PR 4429 reproduce): subsanación S/N corrects a record AEAT holds;
 * "alta por rechazo de una subsanación" S/S when AEAT refused an earlier subsanación of it.
 * SuministroInformacion.xsd RechazoPrevioType N: "No ha habido rechazo previo": left out,
 * as the alta's other optional fields (xml.ts). The IDFactura (issuer, NumSerieFactura,
 * FechaExpedicionFactura) is AEAT's key of the invoice: it is the original's, taken from its
 * stored record. A correction changes only what the invoice may be corrected in without a
 * rectifying invoice: the recipient and the operation's description (RD 1619/2012 art. 15:
 * a change of amounts, quota or the invoice's own data is a factura rectificativa).
 */
import { badRequest } from '../../core/errors.ts';
import type { CorrectionBuildInput, FiscalRecord, RecordCorrection, TransactionContext, TransactionDraft } from '../types.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { textWithin } from '../shared/xml-text.ts';
import { buildAlta } from './build.ts';
import { NAMES_CUSTOMER, validateVerifactuTransaction } from './metadata.ts';
import type { InvoiceId } from './xml.ts';

/** Metadata fields that identify the invoice or decide its amounts: a correction keeps them as stored. */
const KEPT = ['invoice_type', 'series', 'invoice_number', 'exemption_code', 'original_invoice_number', 'original_issue_date'] as const;

export const CUSTOMER_NOT_NAMED = (type: string): string =>
  `customer_context cannot be corrected on an ${type} invoice: its record names no recipient (AEAT 1190); ` +
  'to name the customer, issue a full invoice (F3) replacing it';

function validate(tx: TransactionDraft, original: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  const metadata = validateVerifactuTransaction(tx, ctx);
  const type = metaString(original, 'invoice_type') ?? 'F2';
  const customerChanged = JSON.stringify(tx.customer_context ?? null) !== JSON.stringify(original.customer_context ?? null);
  if (customerChanged && !NAMES_CUSTOMER.has(type)) throw badRequest(CUSTOMER_NOT_NAMED(type));
  for (const field of KEPT) {
    // validateVerifactuTransaction derives some of them (invoice_type from the customer): the stored one stands.
    if (JSON.stringify(metadata[field] ?? null) !== JSON.stringify(original.metadata[field] ?? null)) {
      throw badRequest(`metadata.${field} cannot change in a correction: the record keeps the invoice's identity and type (a refund or a cancellation changes them)`);
    }
  }
  return metadata;
}

/** The IDFactura of a stored RegistroAlta, as AEAT holds it. */
export function invoiceIdOf(body: string): InvoiceId | undefined {
  const field = (name: string) => textWithin(body, 'IDFactura', name);
  const IDEmisorFactura = field('IDEmisorFactura');
  const NumSerieFactura = field('NumSerieFactura');
  const FechaExpedicionFactura = field('FechaExpedicionFactura');
  if (IDEmisorFactura === undefined || NumSerieFactura === undefined || FechaExpedicionFactura === undefined) return undefined;
  return { IDEmisorFactura, NumSerieFactura, FechaExpedicionFactura };
}

function build(input: CorrectionBuildInput): FiscalRecord {
  const id = invoiceIdOf(input.original.body);
  // Only a RegistroAlta is corrected (the core refuses cancellations): a body without one is a bug.
  if (id === undefined) throw new Error(`transaction ${input.original.transactionId}: its record carries no IDFactura to correct`);
  const record = buildAlta(
    { ...input, kind: 'record', original: undefined },
    { id, flags: { Subsanacion: 'S', ...(input.earlierRefused ? { RechazoPrevio: 'S' as const } : {}) } },
  );
  // Not a new invoice: no number of its own (the transaction keeps the original's).
  return { ...record, documentNumber: null };
}

export const VERIFACTU_CORRECTION: RecordCorrection = { metadataFields: ['description'], validate, build };
