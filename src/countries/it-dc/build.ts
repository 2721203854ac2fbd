/**
 * The Documento Commerciale record: each sale, return (reso) and cancellation (annullo)
 * is a commercial document of its register (`pem_matricola`), sealed with the merchant's
 * electronic seal certificate (`seal_certificate_id`, capabilities.signsWithCertificate)
 * and chained to the register's previous document. The XML is xml.ts.
 *
 * Numbering "NNNN-NNNN", as printed on every documento commerciale: the register's daily
 * closure number ("numero di azzeramento", counting the Italian days on which the
 * register issued documents), then the document's progressive within that day. Both
 * follow from the previous document of the register, which the ledger hands us with its
 * `linkData` (day, closure, progressive): the chain is the register, appended one at a
 * time, so the numbers are gapless without a counter of their own. A day past 9,999
 * documents opens the next closure, as a register must; the closure counter wraps after
 * 9,999 to 0001 (the field has four digits).
 *
 * The chain: the signature covers a `ds:SignatureProperty` naming the register, the
 * document's sequence in it and the previous document's fingerprint, the SHA-256 (hex) of
 * its `ds:SignatureValue`. Removing, reordering or altering a document breaks the next
 * link; an auditor checks it with the seal certificate alone (docs/decisions.md).
 */
import { createHash } from 'node:crypto';
import type { BuildInput, FiscalRecord, TransactionDraft } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { isoDate, localDate, localDateTimeWithOffset } from '../shared/dates.ts';
import { configString } from '../shared/config-fields.ts';
import { textHint } from '../shared/render-hints.ts';
import { signXadesBes } from '../../signing/xades-bes.ts';
import { latin } from '../it/latin.ts';
import { chainPropertyXml, dcDocumentXml, type DcDocument, type ResoAnnullo, type TipoPagamento } from './xml.ts';

const MAX_PROGRESSIVE = 9999;

/** The register's numbering state after a document (kept as the record's `linkData`). */
export interface DcNumbering {
  /** The Italian day (YYYY-MM-DD) of the document. */
  day: string;
  closure: number;
  progressive: number;
}

const four = (n: number) => String(n).padStart(4, '0');
export const dcDocumentNumber = (n: Pick<DcNumbering, 'closure' | 'progressive'>): string => `${four(n.closure)}-${four(n.progressive)}`;

/** The next document's numbers on `day`, after the register's previous document (null: the first). */
export function nextDcNumbering(previous: DcNumbering | null, day: string): DcNumbering {
  if (previous === null) return { day, closure: 1, progressive: 1 };
  const nextClosure = previous.closure >= MAX_PROGRESSIVE ? 1 : previous.closure + 1;
  if (previous.day !== day || previous.progressive >= MAX_PROGRESSIVE) return { day, closure: nextClosure, progressive: 1 };
  return { day, closure: previous.closure, progressive: previous.progressive + 1 };
}

/** Reads the previous record's `linkData`; null when there is none (first document, or a record from before numbering was kept). */
export function readDcNumbering(linkData: Readonly<Record<string, string>> | null | undefined): DcNumbering | null {
  const closure = Number(linkData?.closure);
  const progressive = Number(linkData?.progressive);
  const day = linkData?.day;
  if (typeof day !== 'string' || !Number.isInteger(closure) || !Number.isInteger(progressive) || closure < 1 || progressive < 1) return null;
  return { day, closure, progressive };
}

/** A document's fingerprint: SHA-256 (lowercase hex) of its signature value's bytes. */
export const dcFingerprint = (signatureValueBase64: string): string =>
  createHash('sha256').update(Buffer.from(signatureValueBase64, 'base64')).digest('hex');

/**
 * IdCliente (1-16 letters and digits): the customer's lottery code when given (that is
 * what the lottery file carries), else their codice fiscale, else `ANONIMO`: a document
 * to an anonymous customer (docs/decisions.md).
 */
export const ANONYMOUS_CUSTOMER = 'ANONIMO';
function idCliente(meta: Record<string, unknown>): string {
  for (const field of ['lottery_code', 'customer_codice_fiscale']) {
    const v = meta[field];
    if (typeof v === 'string' && /^[A-Za-z0-9]{1,16}$/.test(v)) return v;
  }
  return ANONYMOUS_CUSTOMER;
}

const amount = (meta: Record<string, unknown>, field: string): number => {
  const v = meta[field];
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : 0;
};

/**
 * A sale's payments: cash (PC), electronic (PE), and "not collected" (NR) for meal
 * vouchers and whatever the split does not cover (payment method `other`): RT practice
 * files buoni pasto as corrispettivo non riscosso. At least one line, as the schema wants.
 */
export function dcPayments(tx: TransactionDraft): { tipo: TipoPagamento; importo: string }[] {
  const cash = amount(tx.metadata, 'cash_amount');
  const electronic = amount(tx.metadata, 'electronic_amount');
  const notCollected = Math.max(0, Math.abs(tx.total_amount) - cash - electronic);
  const lines: { tipo: TipoPagamento; importo: string }[] = [];
  if (cash > 0) lines.push({ tipo: 'PC', importo: decimal(cash) });
  if (electronic > 0) lines.push({ tipo: 'PE', importo: decimal(electronic) });
  if (notCollected > 0 || lines.length === 0) lines.push({ tipo: 'NR', importo: decimal(notCollected) });
  return lines;
}

/** What a reso or annullo names: from the cancelled record, or from the request's `original_*` metadata. */
function resoAnnulloOf(input: BuildInput, matricola: string): ResoAnnullo | null {
  if (input.kind === 'cancellation') {
    const o = input.original;
    return {
      tipologia: 'A',
      dataOra: o ? localDateTimeWithOffset(new Date(o.issuedAt), 'IT') : localDateTimeWithOffset(input.now, 'IT'),
      progressivo: o?.documentNumber ?? o?.fiscalId ?? '0000-0000',
      matricola,
    };
  }
  const m = input.tx.metadata;
  if (m.is_return !== true && m.is_cancellation !== true) return null;
  return {
    tipologia: m.is_cancellation === true ? 'A' : 'R',
    // The request gives the original's date only (spec: original_date, ISO date): midnight, no zone.
    dataOra: `${String(m.original_date)}T00:00:00`,
    progressivo: String(m.original_number),
    matricola: String(m.original_matricola),
  };
}

export function buildDc(input: BuildInput): FiscalRecord {
  const { location } = input;
  if (input.signingKey === undefined) {
    throw new Error('it-dc: no signing key: commercial documents are sealed with the seal certificate (capabilities.signsWithCertificate)');
  }
  const tx = input.kind === 'cancellation' && input.original ? input.original.tx : input.tx;
  const matricola = configString(location.config, 'pem_matricola') ?? '';
  const day = isoDate(localDate(input.now, 'IT'));
  const numbering = nextDcNumbering(readDcNumbering(input.chain.previous?.linkData), day);
  const number = dcDocumentNumber(numbering);
  const reso = resoAnnulloOf(input, matricola);
  const doc: DcDocument = {
    simulazione: input.environment === 'test',
    denominazione: latin(configString(location.config, 'legal_name') ?? location.name, 200),
    idCliente: idCliente(tx.metadata),
    dataOra: localDateTimeWithOffset(input.now, 'IT'),
    numeroProgressivo: number,
    ammontare: decimal(Math.abs(tx.total_amount)),
    body: reso === null ? { vendita: dcPayments(tx) } : { resoAnnullo: reso },
  };
  const link = { register: matricola, sequence: input.chain.seq, previous: input.chain.previous?.fingerprint ?? null };
  const signed = signXadesBes({
    document: dcDocumentXml(doc),
    key: input.signingKey,
    signingTime: doc.dataOra,
    // Ids from the transaction id, so a rebuild gives the same bytes.
    idBase: input.transactionId.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100) || 'dc',
    signedObject: { idSuffix: 'ChainLink', content: (signatureId) => chainPropertyXml(link, signatureId) },
  });
  return {
    body: signed.xml,
    contentType: 'application/xml',
    fiscalId: number,
    documentNumber: number,
    fingerprint: dcFingerprint(signed.signatureValue),
    linkData: { day: numbering.day, closure: String(numbering.closure), progressive: String(numbering.progressive) },
    qrData: null,
    placeholder: false,
    renderHints: [textHint('document_number', 'header', number)],
  };
}
