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
import { textWithin, unescapeXml } from '../shared/xml-text.ts';
import { checkKeptFields, sameValue } from '../es/correction-fields.ts';
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
  const customerChanged = !sameValue(tx.customer_context, original.customer_context);
  if (customerChanged && !NAMES_CUSTOMER.has(type)) throw badRequest(CUSTOMER_NOT_NAMED(type));
  // validateVerifactuTransaction derives some of them (invoice_type from the customer): the stored one stands.
  checkKeptFields(metadata, original.metadata, KEPT, "the invoice's identity and type");
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

/**
 * The NombreRazonEmisor of a stored RegistroAlta, as written (decoded, not trimmed: the
 * subsanación writes it back byte for byte); undefined when it has none.
 */
export function issuerNameOf(body: string): string | undefined {
  const m = /<(?:[\w.-]+:)?NombreRazonEmisor>([^<]*)<\/(?:[\w.-]+:)?NombreRazonEmisor>/.exec(body);
  return m ? unescapeXml(m[1]!) : undefined;
}

function build(input: CorrectionBuildInput): FiscalRecord {
  const id = invoiceIdOf(input.original.body);
  const issuerName = issuerNameOf(input.original.body);
  // Only a RegistroAlta is corrected (the core refuses cancellations): a body without one is a bug.
  if (id === undefined || issuerName === undefined) throw new Error(`transaction ${input.original.transactionId}: its record carries no IDFactura and issuer to correct`);
  // The subsanación registers the same invoice again (same IDFactura), so it names its issuer
  // as the invoice was issued (RD 1619/2012 art. 6.1.c: the issuer's name is part of the
  // invoice), not as the location is named now: a rename since changes nothing AEAT holds of
  // the invoice. The Cabecera names the same one (the core hands the corrected record's issuer).
  const record = buildAlta(
    { ...input, kind: 'record', original: undefined },
    { id, issuerName, flags: { Subsanacion: 'S', ...(input.earlierRefused ? { RechazoPrevio: 'S' as const } : {}) } },
  );
  // Not a new invoice: no number of its own (the transaction keeps the original's).
  return { ...record, documentNumber: null };
}

export const VERIFACTU_CORRECTION: RecordCorrection = { metadataFields: ['description'], validate, build };
