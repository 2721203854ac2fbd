/**
 * The receipt as a list of blocks, whatever the output format (html.ts, text.ts,
 * escpos.ts, pdf.ts, png.ts draw it): the merchant, the title, the lines, the totals,
 * then every render hint in its placement and order (DECISIONS "Fiscal record and receipt
 * data": a receipt is printed from `render_hints`), introduced as the system's `receipt`
 * facts say. Pure: no I/O, no clock.
 *
 * Mandatory hints are never dropped: a text hint is always printed whole (wrapped, never
 * cut), a QR hint always drawn (or, in plain text, its content printed). Dropped on
 * purpose, and only when not mandatory: an `image_url` hint (an image of a QR this
 * renderer draws itself from its `qr_*` hint) and a text hint whose value another
 * printed hint repeats (Portugal's `hash_extract`, inside the certified-program line).
 */
import type { Country } from '../core/country.ts';
import type {
  FiscalSystem, Localized, ReceiptCorrectionInput, ReceiptFacts, ReceiptLanguage, ReceiptQrSpec, ReceiptTaxSummary, RenderHint, RenderPlacement, SoftwareIdentity, TransactionDraft,
} from '../countries/types.ts';
import { COUNTRY_TIME_ZONES } from '../countries/shared/dates.ts';
import { WORDS, type ReceiptWords } from './i18n.ts';

/** A QR symbol drawn with no rule of the country's: level M at 30 mm, as TicketBAI, VERI*FACTU and AT ask. */
export const DEFAULT_QR: ReceiptQrSpec = { errorCorrectionLevel: 'M', sizeMm: 30 };

export type Block =
  /** A line of text; `key` names the render hint it prints, if any; `oneLine`: condensed rather than wrapped where the printer can. */
  | { kind: 'text'; text: string; align: 'left' | 'center'; bold: boolean; key?: string | undefined; oneLine?: boolean | undefined }
  /** Text on the left, an amount on the right. */
  | { kind: 'pair'; left: string; right: string; bold: boolean }
  | { kind: 'rule' }
  | { kind: 'qr'; key: string; content: string; spec: ReceiptQrSpec };

export type SectionName = 'merchant' | 'title' | 'lines' | 'totals' | RenderPlacement;

export interface Receipt {
  lang: ReceiptLanguage;
  title: string;
  sections: { name: SectionName; blocks: Block[] }[];
}

/** What a receipt is made from: a stored transaction, its location, its system. */
export interface ReceiptSource {
  transaction: {
    id: string;
    type: string;
    environment: 'test' | 'live';
    country: Country;
    created_at: Date;
    /** The transaction's `fiscal_id` and its record's document number (FiscalRecord.documentNumber). */
    fiscal_id: string | null;
    document_number: string | null;
    normalized: TransactionDraft;
    render_hints: readonly RenderHint[];
    /** A numbered duplicate (from 1) of a system with `receipt.duplicate`; absent: the original. */
    copy?: number | undefined;
    /** The transaction's status now: a document since cancelled prints so. */
    status?: string | undefined;
    /** A cancellation's original, as stored (`ReceiptCorrectionInput.original`); absent or null otherwise. */
    original?: ReceiptCorrectionInput['original'] | undefined;
    /** The transaction's fiscal record's body (`ReceiptCorrectionInput.record`); absent or null: none known. */
    record?: string | null | undefined;
    /** A cancelled document's standing cancellation, as stored (`ReceiptCorrectionInput.cancelledBy`); absent or null otherwise. */
    cancelledBy?: ReceiptCorrectionInput['cancelledBy'] | undefined;
  };
  /**
   * The issuer: name, address and legal name as the document was issued where its record
   * kept them (services/record-issuer.ts), else the location's current ones; the location's tax id.
   */
  location: { name: string; address: string | null; tax_id: string | null; legal_name: string | null };
  system: Pick<FiscalSystem, 'receipt'> | undefined;
  software: SoftwareIdentity;
}

/** The languages a receipt of this system is offered in: the country's, then English. */
export function receiptLanguages(facts: ReceiptFacts | undefined): ReceiptLanguage[] {
  return facts ? [facts.language, 'en'] : ['en'];
}

const PLACEMENTS: readonly RenderPlacement[] = ['header', 'body', 'footer_top', 'footer_bottom', 'footer_right'];

export function buildReceipt(src: ReceiptSource, lang: ReceiptLanguage): Receipt {
  const facts = src.system?.receipt;
  const w = WORDS[lang];
  const say = (text: Localized): string => text[lang] ?? text.en;
  const tx = src.transaction.normalized;
  const hints = src.transaction.render_hints;
  const cancelled = src.transaction.status === 'cancelled';
  const isCancellation = src.transaction.type === 'cancellation';
  // A correction (refund, void, cancellation) prints as its system says (ReceiptFacts.correction):
  // the plug-in tells a correction from a sale (Italy DC: a sale whose metadata says is_return).
  const correction: ReceiptCorrectionInput = {
    kind: isCancellation ? 'cancellation' : tx.type, tx, original: src.transaction.original ?? null, hints, fiscalId: src.transaction.fiscal_id,
    record: src.transaction.record ?? null, cancelledBy: cancelled ? (src.transaction.cancelledBy ?? null) : null,
  };
  const fix = facts?.correction;
  const sign = fix?.negative?.(correction) === true ? -1 : 1;
  // Amounts with the record's sign; a unit price stays a price ("2 x 3,00").
  const money = (minor: number): string => amount(sign * minor, w);
  const price = (minor: number): string => amount(minor, w);

  const merchant: Block[] = [];
  // The location's name and address as the document recorded them, where its system keeps them
  // in the record (a duplicate shows the document as issued); else `src.location` (kept beside the record).
  const place = facts?.issuerLocation?.(correction) ?? { name: src.location.name, address: src.location.address };
  // The legal name as the document names it, where its system reads it from the record; else the location's.
  const legalName = facts?.issuerLegalName?.(correction) ?? src.location.legal_name;
  const name = legalName ?? place.name;
  merchant.push(text(name, 'center', true));
  if (legalName !== null && legalName !== place.name) merchant.push(text(place.name, 'center'));
  if (place.address) merchant.push(text(place.address, 'center'));
  // The issuer's tax id as its document names it, where its system reads it from the record; else the location's.
  const taxId = facts?.issuerTaxId?.(correction) ?? src.location.tax_id;
  if (taxId) {
    const label = facts?.taxIdLabel?.(taxId);
    merchant.push(text(`${label ? say(label) : w.taxId}: ${taxId}`, 'center'));
  }

  const ownTitle = fix?.title?.(correction);
  const title = ownTitle ? say(ownTitle) : facts ? say(facts.title(hints, tx)) : 'Receipt';
  const titleBlocks: Block[] = [{ kind: 'rule' }, text(title, 'center', true)];
  if (isCancellation && !ownTitle) titleBlocks.push(text(w.cancellation, 'center', true));
  if (src.transaction.copy !== undefined && facts?.duplicate) titleBlocks.push(text(say(facts.duplicate.label(src.transaction.copy)), 'center', true));
  if (cancelled) {
    // Where the law has no annulment of the document, its system names what offsets it instead.
    const notice = facts?.cancelledNotice?.(correction);
    titleBlocks.push(text(notice ? say(notice) : w.cancelled, 'center', true));
  }
  if (src.transaction.environment === 'test') titleBlocks.push(text(w.test, 'center', true));
  // The document's own date where its record carries one (a day, no time), else when it was made.
  const day = facts?.documentDate?.(correction);
  titleBlocks.push(text(`${w.date}: ${day !== undefined ? printedDay(day) : localDateTime(src.transaction.created_at, src.transaction.country)}`, 'left'));

  // The record's own VAT summary where its system gives it (rows per exemption code, a recomputed tax, a rounding,
  // another tax's name, surcharges), else the lines' sums per rate.
  const summary: ReceiptTaxSummary = facts?.taxSummary?.(correction) ?? { rows: [...taxBreakdown(tx)].map(([rate, t]) => ({ rate, ...t })) };
  const taxWord = summary.taxName ?? w.tax;

  const lines: Block[] = [{ kind: 'rule' }];
  // What the law wants printed of a line beyond its amounts (ReceiptFacts.itemNotes), under it.
  const notes = facts?.itemNotes?.(correction) ?? [];
  tx.items.forEach((l, i) => {
    lines.push({ kind: 'pair', left: l.description, right: money(l.total_amount), bold: false });
    const qty = l.quantity === 1 ? '' : `${number(l.quantity, w)} x ${price(l.unit_price)} `;
    lines.push(text(`  ${qty}${taxWord} ${number(l.tax_rate, w)} %`, 'left'));
    const note = notes[i];
    if (note) lines.push(text(`  ${say(note)}`, 'left'));
  });

  const totals: Block[] = [{ kind: 'rule' }];
  totals.push({ kind: 'pair', left: w.subtotal, right: money(summary.subtotal ?? tx.pretax_amount), bold: false });
  for (const r of summary.rows) {
    const code = r.code ? ` ${r.code}` : '';
    totals.push({ kind: 'pair', left: `${taxWord} ${number(r.rate, w)} %${code} (${money(r.base)})`, right: money(r.tax), bold: false });
  }
  for (const c of summary.surcharges ?? []) {
    totals.push({ kind: 'pair', left: `${say(c.label)} ${number(c.rate, w)} % (${money(c.base)})`, right: money(c.amount), bold: false });
  }
  if (summary.rounding) totals.push({ kind: 'pair', left: w.rounding, right: money(summary.rounding), bold: false });
  totals.push({ kind: 'pair', left: `${w.total} ${tx.currency}`, right: money(tx.total_amount), bold: true });
  const paid = facts?.payments?.(correction);
  if (paid) for (const p of paid) totals.push({ kind: 'pair', left: say(p.label), right: money(p.amount), bold: false });
  else totals.push(text(`${w.payment}: ${w.methods[tx.payment_method]}`, 'left'));

  const byPlacement = new Map<RenderPlacement, Block[]>(PLACEMENTS.map((p) => [p, []]));
  const docNumber = facts?.number?.value({ documentNumber: src.transaction.document_number, fiscalId: src.transaction.fiscal_id, tx });
  // Printed first in the header, unless a hint already says it.
  if (docNumber && !hints.some((h) => h.value === docNumber)) byPlacement.get('header')!.push(text(joinLabel(say(facts!.number!.label), docNumber), 'left'));
  // The document a correction corrects (and the law's notices about it).
  const references = fix?.references?.(correction).map((r) => text(say(r), 'left')) ?? [];
  const printed = hints.filter((h) => h.kind === 'text' || h.kind === 'qr_url' || h.kind === 'qr_data');
  for (const h of hints) {
    const out = byPlacement.get(h.placement) ?? byPlacement.get('body')!;
    if (h.kind === 'qr_url' || h.kind === 'qr_data') {
      const content = facts?.qrContent?.(h.key, h.value, { cancelled }) ?? h.value;
      out.push({ kind: 'qr', key: h.key, content, spec: facts?.qr[h.key] ?? DEFAULT_QR });
      continue;
    }
    if (!h.mandatory) {
      if (h.kind === 'image_url') continue;
      if (printed.some((o) => o !== h && o.kind === 'text' && o.value !== h.value && o.value.includes(h.value))) continue;
    }
    const label = facts?.labelFor?.(h.key, correction) ?? facts?.labels[h.key];
    const oneLine = facts?.singleLine?.includes(h.key) ? { oneLine: true } : {};
    out.push({ ...text(label ? joinLabel(say(label), h.value) : h.value, 'left', false), key: h.key, ...oneLine });
  }
  // At the end of the header: after the correction's own number (the header's hints are document numbers).
  byPlacement.get('header')!.push(...references);
  for (const l of facts?.lines?.({ software: src.software, location: { name: place.name, country: src.transaction.country, tax_id: src.location.tax_id, address: place.address }, tx, record: correction.record }) ?? []) {
    byPlacement.get(l.placement)!.push(text(say(l.text), 'left'));
  }

  const sections: Receipt['sections'] = [
    { name: 'merchant', blocks: merchant },
    { name: 'title', blocks: titleBlocks },
    { name: 'header', blocks: byPlacement.get('header')! },
    { name: 'lines', blocks: lines },
    { name: 'totals', blocks: totals },
  ];
  for (const p of PLACEMENTS.slice(1)) sections.push({ name: p, blocks: byPlacement.get(p)! });
  return { lang, title, sections: sections.filter((s) => s.blocks.length > 0) };
}

/** `ATCUD:` is followed by its value directly (Portaria 195/2020's printed form); other labels by a space. */
const joinLabel = (label: string, value: string): string => (label.endsWith(':') ? `${label}${value}` : `${label} ${value}`);

const text = (t: string, align: 'left' | 'center', bold = false): Block & { kind: 'text' } => ({ kind: 'text', text: t, align, bold });

/** Minor units in the language's form: `1210` → `12,10` (no grouping: receipts are narrow). */
export function amount(minor: number, w: ReceiptWords): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  return `${sign}${Math.floor(abs / 100)}${w.decimalSeparator}${String(abs % 100).padStart(2, '0')}`;
}

/** A quantity or a rate (`5.5` → `5,5`). */
const number = (n: number, w: ReceiptWords): string => String(n).replace('.', w.decimalSeparator);

/** Base and tax per rate, in the order rates first appear. */
function taxBreakdown(tx: TransactionDraft): Map<number, { base: number; tax: number }> {
  const out = new Map<number, { base: number; tax: number }>();
  for (const l of tx.items) {
    const t = out.get(l.tax_rate) ?? { base: 0, tax: 0 };
    t.base += l.total_amount - l.tax_amount;
    t.tax += l.tax_amount;
    out.set(l.tax_rate, t);
  }
  return out;
}

/** `2026-01-14` → `14/01/2026`, as `localDateTime` writes the day. */
const printedDay = (iso: string): string => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  return m ? `${m[3]}/${m[2]}/${m[1]}` : iso;
};

/** `15/01/2026 11:00`, in the country's legal time zone (countries/shared/dates.ts). */
export function localDateTime(at: Date, country: Country): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: COUNTRY_TIME_ZONES[country], year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  }).formatToParts(at);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('day')}/${get('month')}/${get('year')} ${get('hour')}:${get('minute')}`;
}
