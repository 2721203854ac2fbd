/**
 * SII records (SII 1.1): the issued-invoice record `RegistroLRFacturasEmitidas` (sent
 * with TipoComunicacion A0; A1 for a correction, correction.ts) and, for a cancellation,
 * the baja `RegistroLRBajaExpedidas` (sent in `BajaLRFacturasEmitidas`). See xml.ts for
 * the documents, soap.ts for the envelope.
 *
 * SII is neither signed nor chained: the record carries no fingerprint, and the id of an
 * accepted submission is the CSV AEAT returns, so `fiscalId` is null until then.
 */
import type { BuildInput, FiscalRecord, TransactionDraft } from '../types.ts';
import { MISSING_TAX_ID, issuerTaxId } from '../shared/issuer-tax-id.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { replacedInvoicesOf } from '../es/replacement.ts';
import { operationDateHints, operationDateOf } from '../es/operation-date.ts';
import { dmyDate, localDate } from '../shared/dates.ts';
import { textHint } from '../shared/render-hints.ts';
import { exemptBase, exemptionCodeOf, exemptionLegend, taxedLines } from '../es/exemption.ts';
import { TAX_NAMES, taxOf } from '../es/tax.ts';
import { bajaXml, isCorrective, issuedInvoiceXml, needsBreakdownByOperation, signedTotal, vatBreakdown, type SiiInvoiceId, type SiiParty } from './xml.ts';

/** `NumSerieFacturaEmisor`: the series (when given) prefixed to the number (spec table). */
export const numSerieOf = (tx: TransactionDraft, transactionId: string): string =>
  `${metaString(tx, 'series') ?? ''}${metaString(tx, 'invoice_number') ?? transactionId}`;

/**
 * The issuer NIF as the record writes it. A location may exist without a tax_id to try
 * the sandbox; its test records name the placeholder NIF, which AEAT would refuse (only
 * stub mode answers such a location in practice). Live transactions of such a location
 * are refused at creation (metadata.ts), and the client never sends the placeholder live.
 */
const issuerNif = (input: BuildInput): string => issuerTaxId(input) ?? MISSING_TAX_ID;

/** The invoice types whose record names the customer (Contraparte): F1, F3 and R1 (RD 1619/2012 art. 6.1.d); F2 and R5 do not. */
export const NAMES_COUNTERPARTY: ReadonlySet<string> = new Set(['F1', 'F3', 'R1']);

export function buildSii(input: BuildInput): FiscalRecord {
  if (input.kind === 'cancellation') return buildBaja(input);
  // A void withdraws an invoice already reported: its record is the baja (metadata.ts).
  return input.tx.type === 'void' ? buildVoid(input) : buildAlta(input);
}

/**
 * What makes an alta a modification (A1) of an invoice AEAT holds (correction.ts): the
 * invoice's key and period as its first record gave them, so the modification names the
 * same IDFactura whatever the location or the clock say now.
 */
export interface AltaAs {
  id: SiiInvoiceId;
  exercise: string;
  period: string;
}

export function buildAlta(input: BuildInput, as?: AltaAs): FiscalRecord {
  const { tx } = input;
  const number = numSerieOf(tx, input.transactionId);
  const invoiceType = metaString(tx, 'invoice_type') ?? 'F1';
  const corrective = isCorrective(invoiceType);
  // A refund or void is reported by differences (TipoRectificativa I): negative amounts.
  const sign = corrective ? -1 : 1;
  // An IGIC or IPSI location's sale (../es/tax.ts) is reported whole as not subject to IVA
  // (xml.ts `notSubject`, key 08 from the validated metadata): no IVA lines, no exemption.
  const tax = taxOf(input.location);
  const otherTax = tax !== 'iva';
  const exemption = otherTax ? undefined : exemptionCodeOf(tx);
  const exempt = exemptBase(tx.items, exemption);
  const originalNumber = metaString(tx, 'original_invoice_number');
  const originalDate = metaString(tx, 'original_issue_date');
  const counterparty = NAMES_COUNTERPARTY.has(invoiceType) ? counterpartyOf(tx) : undefined;
  const issueDate = as?.id.issueDate ?? issueDateOf(tx, input.now);
  // The operation's own day, when it is not the issue date (../es/operation-date.ts).
  const operationDate = operationDateOf(tx, issueDate);
  const body = issuedInvoiceXml({
    exercise: as?.exercise ?? metaString(tx, 'exercise') ?? localDate(input.now, 'ES').year,
    period: as?.period ?? metaString(tx, 'period') ?? localDate(input.now, 'ES').month,
    id: as?.id ?? { issuerNif: issuerNif(input), numSerie: number, issueDate },
    invoiceType,
    operationDate: operationDate ?? undefined,
    corrects: originalNumber !== undefined && originalDate !== undefined ? { numSerie: originalNumber, issueDate: originalDate } : undefined,
    // An F3 names the tickets it replaces (../es/replacement.ts).
    replaces: invoiceType === 'F3' ? replacedInvoicesOf(tx).map((r) => ({ numSerie: r.number, issueDate: r.issue_date })) : undefined,
    regimeKey: metaString(tx, 'regime_key') ?? '01',
    description: metaString(tx, 'description') ?? 'Sale',
    total: signedTotal(tx, sign),
    counterparty,
    byOperation: needsBreakdownByOperation(invoiceType, counterparty),
    vat: otherTax ? [] : vatBreakdown(taxedLines(tx.items, exemption), sign),
    exempt: exempt === null || exemption === undefined ? undefined : { cause: exemption, base: sign * exempt },
    notSubject: otherTax ? signedTotal(tx, sign) : undefined,
  });
  return {
    body,
    contentType: 'application/xml',
    fiscalId: null,
    documentNumber: number,
    fingerprint: null,
    qrData: null,
    placeholder: false,
    // An exempt operation names its legal ground on the invoice (RD 1619/2012 art. 6.1.j).
    renderHints: [
      textHint('invoice_number', 'header', number),
      ...operationDateHints(operationDate),
      ...(exemption === undefined || exempt === null ? [] : [textHint('exemption', 'body', exemptionLegend(exemption, 'Ley 37/1992'))]),
      // The tax the invoice charges, which the SII record (an IVA book's) does not name:
      // printed, and read back by the receipt's tax summary (receipt.ts).
      ...(otherTax ? [textHint(TAX_NAME_HINT, 'body', TAX_NAMES[tax])] : []),
    ],
  };
}

/** The render hint naming an IGIC or IPSI invoice's tax (receipt.ts reads it). */
export const TAX_NAME_HINT = 'tax_name';

/**
 * The baja names the original invoice exactly as it was reported: issuer, the number it
 * was stored under (`documentNumber`), its issue date and its period.
 */
function buildBaja(input: BuildInput): FiscalRecord {
  const original = input.original;
  const origTx = original?.tx ?? input.tx;
  const issuedAt = original ? new Date(original.issuedAt) : input.now;
  const body = bajaXml({
    exercise: metaString(origTx, 'exercise') ?? localDate(issuedAt, 'ES').year,
    period: metaString(origTx, 'period') ?? localDate(issuedAt, 'ES').month,
    id: {
      issuerNif: issuerNif(input),
      numSerie: original?.documentNumber ?? numSerieOf(origTx, original?.transactionId ?? input.transactionId),
      issueDate: issueDateOf(origTx, issuedAt),
    },
  });
  return { body, contentType: 'application/xml', fiscalId: null, documentNumber: null, fingerprint: null, qrData: null, placeholder: false, renderHints: [] };
}

/** A `void` transaction: the baja of the invoice its metadata names, in that invoice's period. */
function buildVoid(input: BuildInput): FiscalRecord {
  const { tx } = input;
  const numSerie = metaString(tx, 'original_invoice_number');
  const issueDate = metaString(tx, 'original_issue_date');
  if (numSerie === undefined || issueDate === undefined) throw new Error('es-sii: a void needs original_invoice_number and original_issue_date (validated)');
  const body = bajaXml({
    exercise: metaString(tx, 'exercise') ?? issueDate.slice(6, 10),
    period: metaString(tx, 'period') ?? issueDate.slice(3, 5),
    id: { issuerNif: issuerNif(input), numSerie, issueDate },
  });
  return {
    body, contentType: 'application/xml', fiscalId: null, documentNumber: null, fingerprint: null, qrData: null, placeholder: false,
    renderHints: [textHint('voided_invoice_number', 'header', numSerie)],
  };
}

/** The validated `issue_date` (DD-MM-YYYY), else the Madrid date of `at`. */
const issueDateOf = (tx: TransactionDraft, at: Date): string => metaString(tx, 'issue_date') ?? dmyDate(localDate(at, 'ES'));

/** The Contraparte, for the types that name one (NAMES_COUNTERPARTY; also what the receipt prints: receipt.ts). */
export function counterpartyOf(tx: TransactionDraft): SiiParty | undefined {
  const name = metaString(tx, 'counterparty_name');
  if (name === undefined) return undefined;
  const nif = metaString(tx, 'counterparty_nif');
  if (nif !== undefined) return { name, nif };
  const idType = metaString(tx, 'counterparty_id_type');
  const country = metaString(tx, 'counterparty_country');
  const id = metaString(tx, 'counterparty_id');
  if (idType === undefined || country === undefined || id === undefined) return undefined;
  return { name, other: { idType, country, id } };
}
