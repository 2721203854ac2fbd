import { XMLParser } from 'fast-xml-parser';
import type { Localized, ReceiptFacts, ReceiptTaxSummary, TransactionDraft } from '../types.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { textWithin } from '../shared/xml-text.ts';
import { centsOf, italianDay } from '../it/printed.ts';
import { dcPayments } from './build.ts';
import type { TipoPagamento } from './xml.ts';

const SALE: Localized = { it: 'DOCUMENTO COMMERCIALE di vendita o prestazione', en: 'COMMERCIAL DOCUMENT of sale or service' };
const RETURN: Localized = { it: 'DOCUMENTO COMMERCIALE emesso per RESO MERCE', en: 'COMMERCIAL DOCUMENT issued for a GOODS RETURN' };
const ANNULMENT: Localized = { it: 'DOCUMENTO COMMERCIALE emesso per ANNULLAMENTO', en: 'COMMERCIAL DOCUMENT issued for an ANNULMENT' };

/**
 * The amounts paid, each as the documento commerciale prints it (RT specifiche tecniche,
 * Provv. AdE 31 ottobre 2019: the document states what was paid in cash, what electronically
 * and what was not collected), by the DatiPagamento/Tipo the record carries; meal vouchers,
 * which the record files under NR and the day's corrispettivi count apart (Ticket/
 * PagatoTicket), print as such.
 */
const PAID: Readonly<Record<TipoPagamento | 'ticket', Localized>> = {
  PC: { it: 'Pagamento contante', en: 'Cash payment' },
  PE: { it: 'Pagamento elettronico', en: 'Electronic payment' },
  ticket: { it: 'Pagamento ticket', en: 'Meal voucher payment' },
  NR: { it: 'Non riscosso', en: 'Not collected' },
};

/** The record's NR split into the meal vouchers the sale declared (`ticket_amount`) and what was really not collected. */
function withTickets(paid: { tipo: TipoPagamento; importo: number }[], ticketAmount: unknown): { tipo: TipoPagamento | 'ticket'; importo: number }[] {
  const tickets = typeof ticketAmount === 'number' && Number.isSafeInteger(ticketAmount) && ticketAmount > 0 ? ticketAmount : 0;
  return paid.flatMap((p): { tipo: TipoPagamento | 'ticket'; importo: number }[] => {
    if (p.tipo !== 'NR' || tickets === 0) return [p];
    const ticket = Math.min(tickets, p.importo);
    return [{ tipo: 'ticket' as const, importo: ticket }, ...(p.importo > ticket ? [{ tipo: 'NR' as const, importo: p.importo - ticket }] : [])];
  });
}

/** The lines summed per rate, the 0 % ones apart per `natura` (metadata.ts requires one on every 0 % line), in the lines' order. */
export function dcTaxRows(tx: TransactionDraft): ReceiptTaxSummary['rows'] {
  const rows: ReceiptTaxSummary['rows'] = [];
  for (const l of tx.items) {
    const code = l.tax_rate === 0 && typeof l.natura === 'string' ? l.natura : undefined;
    const row = rows.find((r) => r.rate === l.tax_rate && r.code === code);
    const base = l.total_amount - l.tax_amount;
    if (row) {
      row.base += base;
      row.tax += l.tax_amount;
    } else rows.push({ rate: l.tax_rate, code, base, tax: l.tax_amount });
  }
  return rows;
}

const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false, trimValues: true });
type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});

/**
 * What the receipt reads back from the DocCommercialiLotteria a record holds (xml.ts): a
 * sale's payments (Vendita/DatiPagamento), or the register a reso or annullo names
 * (ResoAnnullo/Dispositivo/MatrTrasm). Undefined when the body is no such document.
 */
function readDocumento(body: string | null | undefined): { payments?: { tipo: TipoPagamento; importo: number }[]; register?: string } | undefined {
  if (typeof body !== 'string' || !/<(\w+:)?DocCommercialiLotteria[\s>]/.test(body)) return undefined;
  let documento: Obj;
  try {
    documento = obj(obj(obj(parser.parse(body)).DocCommercialiLotteria).DocumentoCommerciale);
  } catch {
    return undefined;
  }
  const register = obj(obj(documento.ResoAnnullo).Dispositivo).MatrTrasm;
  if (documento.Vendita === undefined) return { register: typeof register === 'string' ? register : undefined };
  const raw = obj(documento.Vendita).DatiPagamento;
  const payments: { tipo: TipoPagamento; importo: number }[] = [];
  for (const p of (Array.isArray(raw) ? raw : [raw]).map(obj)) {
    const importo = centsOf(p.Importo);
    if ((p.Tipo === 'PC' || p.Tipo === 'PE' || p.Tipo === 'NR') && importo !== undefined) payments.push({ tipo: p.Tipo, importo });
  }
  return { payments };
}

/**
 * The Documento Commerciale (DM 7 dicembre 2016, Agenzia delle Entrate specifiche
 * tecniche): titled "DOCUMENTO COMMERCIALE di vendita o prestazione", its number
 * (`document_number`, "numero progressivo") at the top; a return is "emesso per RESO
 * MERCE", an annulment "emesso per ANNULLAMENTO", the words every RT and AdE's own
 * "documento commerciale online" print. The kind is the document's own, from
 * its metadata (`is_return`, `is_cancellation`, which `type` refund/void sets:
 * metadata.ts), not from `type`: a sale whose metadata says is_return is a reso.
 */
export const DC_RECEIPT: ReceiptFacts = {
  language: 'it',
  title: (_hints, tx) => (tx.metadata.is_cancellation === true
    ? ANNULMENT
    : tx.metadata.is_return === true || (tx.type !== 'sale' && tx.metadata.is_return === undefined)
      ? RETURN
      : SALE),
  labels: { document_number: { it: 'Documento n.', en: 'Document no.' } },
  qr: {},
  // The VAT breakdown per rate and, at 0 %, per Natura (N2.2, N4…): an exempt or non-taxable
  // sale prints why it carries no VAT, as the daily corrispettivi file it (its Riepilogo has a
  // Natura, not an AliquotaIVA) and as the invoice copy (SDI_RECEIPT) prints it; DM 7 dicembre
  // 2016 art. 2 asks the documento commerciale for the VAT rate "o la natura" of the sale.
  // Before, two 0 % lines of different Natura printed as one "IVA 0 %" row with no code.
  taxSummary: ({ tx }) => ({ rows: dcTaxRows(tx) }),
  // The merchant as the sealed document names it (DatiTrasmissione/Denominazione: the legal
  // name, else the location's name, when it was issued; DM 7 dicembre 2016: the documento
  // commerciale names its issuer): a copy printed after the legal name changed shows the
  // document as issued, records stored before the core kept the issuer beside them included.
  issuerLegalName: ({ record }) => (record ? textWithin(record, 'DatiTrasmissione', 'Denominazione') : undefined),
  // A sale prints the payments its record declares (PC, PE, NR: "Pagamento contante",
  // "Pagamento elettronico", "Non riscosso"; of NR, the meal vouchers as "Pagamento
  // ticket"), as the daily corrispettivi count them (PagatoContanti, PagatoElettronico,
  // PagatoTicket); a reso or annullo declares none, and prints the payment method as before.
  // Without a readable record, the payments build.ts writes.
  payments: ({ tx, record }) => {
    const read = readDocumento(record);
    const corrective = tx.metadata.is_return === true || tx.metadata.is_cancellation === true || (tx.type !== 'sale' && tx.metadata.is_return === undefined);
    const paid = read ? read.payments : corrective ? undefined : dcPayments(tx).map((p) => ({ tipo: p.tipo, importo: centsOf(p.importo)! }));
    return paid && withTickets(paid, tx.metadata.ticket_amount).map((p) => ({ label: PAID[p.tipo], amount: p.importo }));
  },
  // A reso or annullo names the document it returns or annuls, as its ResoAnnullo does
  // (register, day, number): from the metadata, or, for POST …/cancel, from the original
  // (whose draft the cancellation carries: its is_return must not title the annullo a reso).
  // Amounts print positive, as Ammontare carries them.
  correction: {
    title: ({ kind }) => (kind === 'cancellation' ? ANNULMENT : undefined),
    references: ({ kind, tx, original, record }) => {
      let number: string | undefined;
      let day: string | undefined;
      let register: string | undefined;
      if (kind === 'cancellation') {
        number = original ? (original.hints.find((h) => h.key === 'document_number')?.value ?? original.documentNumber ?? original.fiscalId ?? undefined) : undefined;
        day = original ? isoDate(localDate(original.createdAt, 'IT')) : undefined;
        // The register the annullo names (its ResoAnnullo's MatrTrasm: the location's own).
        register = readDocumento(record)?.register;
      } else if (tx.metadata.is_return === true || tx.metadata.is_cancellation === true) {
        number = metaString(tx, 'original_number');
        day = metaString(tx, 'original_date');
        register = metaString(tx, 'original_matricola');
      }
      if (number === undefined) return [];
      // "Documento di riferimento:" then "N. 0005-0009 del 03-06-2020", as RTs and AdE print
      // it (two lines: together they overrun a 48-column roll).
      const when = day === undefined ? '' : ` del ${italianDay(day)}`;
      const whenEn = day === undefined ? '' : ` of ${italianDay(day)}`;
      return [
        { it: 'Documento di riferimento:', en: 'Reference document:' },
        { it: `N. ${number}${when}`, en: `No. ${number}${whenEn}` },
        ...(register === undefined ? [] : [{ it: `Matricola RT ${register}`, en: `Register (RT) ${register}` }]),
      ];
    },
  },
};
