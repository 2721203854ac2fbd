/**
 * The FatturaPA 1.2.2 document (FORMATS.md §4; Schema_del_file_xml_FatturaPA_v1.2.2.xsd)
 * of a transaction: one FatturaElettronicaBody. An FPA12 file (public administration) is
 * signed XAdES-BES enveloped with the location's key (`signingKey`, the core hands it
 * because of `capabilities.signsWithCertificate`); an FPR12 file is sent unsigned, as
 * SdI allows through a channel (docs/decisions.md "FPA12 signature"). SDI has no annulment:
 * cancelling issues a credit note (TD04) for the whole invoice (DECISIONS "Cancelling"),
 * or, for a credit note, a debit note (TD05) that reverses it (cancellationDocument).
 * The stored record is the XML; the fiscal id is the SdI file name the document is sent
 * under (`IT<IdCodice>_<progressivo>.xml`, FORMATS.md §4.3); SdI's own
 * IdentificativoSdI comes with its answer. Amounts are integer cents (decimal()).
 * A fattura semplificata (TD07, DPR 633/1972 art. 21-bis) is the simplified document
 * instead (Schema_VFSM10.xsd, FSM10: xml.ts `semplificataXml`), unsigned, under the same
 * file name and channel; metadata.ts keeps it within what the law and the format allow.
 */
import crypto from 'node:crypto';
import { conflict } from '../../core/errors.ts';
import type { BuildInput, FiscalRecord, TransactionDraft, TxLine } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { isoDate, localDate, localDateTimeWithOffset } from '../shared/dates.ts';
import { signXadesBes } from '../../signing/xades-bes.ts';
import { configString } from '../shared/config-fields.ts';
import { customerTaxId, metaString } from '../shared/metadata-fields.ts';
import { textHint } from '../shared/render-hints.ts';
import { MISSING_TAX_ID } from '../shared/issuer-tax-id.ts';
import { latin } from '../it/latin.ts';
import { BOLLO_AMOUNT, bolloDue } from './bollo.ts';
import { fatturaXml, semplificataXml, type Anagrafica, type BeneServizio, type FatturaFields, type IdFiscale, type Linea, type Riepilogo, type Sede } from './xml.ts';

/** NumeroType of FatturaPA 1.2.2: `(\p{IsBasicLatin}{1,20})`. */
export const NUMERO_MAX = 20;

/**
 * Why a line cannot be in a simplified document (Schema_VFSM10.xsd): its NaturaType stops at
 * N5 (no reverse charge, N6.x, nor N7), and DPR 633/1972 art. 21-bis c.2 lett. a excludes
 * intra-EU supplies (N3.2). Undefined: it can.
 */
export function semplificataExcludes(natura: string | undefined): 'reverse-charge' | 'intra-eu' | undefined {
  if (natura === undefined) return undefined;
  if (natura.startsWith('N6') || natura === 'N7') return 'reverse-charge';
  return natura === 'N3.2' ? 'intra-eu' : undefined;
}

/** The simplified documents (Schema_VFSM10.xsd TipoDocumentoType): invoice, credit note, debit note. */
export const SEMPLIFICATI: readonly string[] = ['TD07', 'TD08', 'TD09'];

/**
 * The document that cancels an invoice, by the original's TipoDocumento. SDI has no
 * annulment: an invoice (TD01 and the others) is reversed by a credit note, TD04 (nota di
 * credito, DPR 633/1972 art. 26); a credit note (TD04) is reversed by a debit note, TD05
 * (nota di debito), which restores what it credited. Crediting a credit note again would
 * file two credits. A simplified invoice (TD07) is reversed by the simplified credit note,
 * TD08, and that by the simplified debit note, TD09 (art. 21-bis c.1: "nonché la fattura
 * rettificativa di cui all'articolo 26" may be simplified, whatever its amount), in the same
 * format (FSM10) as the document it corrects; unless a line cannot be in that format
 * (`semplificataExcludes`: none of a TD07 the metadata rules let through), when the
 * ordinary note (TD04, TD05) does it, as the law also allows.
 */
export function cancellationDocument(originalTipo: string, items: readonly TxLine[] = []): { tipo: 'TD04' | 'TD05' | 'TD08' | 'TD09'; prefix: 'NC-' | 'ND-' } {
  const simplified = SEMPLIFICATI.includes(originalTipo)
    && items.every((l) => semplificataExcludes(typeof l.natura === 'string' ? l.natura : undefined) === undefined);
  const debit = originalTipo === 'TD04' || originalTipo === 'TD08';
  if (debit) return { tipo: simplified ? 'TD09' : 'TD05', prefix: 'ND-' };
  return { tipo: simplified ? 'TD08' : 'TD04', prefix: 'NC-' };
}

/** The default TipoDocumento: a sale is an invoice (TD01), a refund or void a credit note (TD04). */
export const defaultTipoDocumento = (tx: TransactionDraft): string => (tx.type === 'sale' ? 'TD01' : 'TD04');

/** A transaction's own TipoDocumento: its metadata's (the metadata rules store the default there), else the default. */
export const tipoDocumentoOf = (tx: TransactionDraft): string => metaString(tx, 'tipo_documento') ?? defaultTipoDocumento(tx);

/**
 * The TipoDocumento the build writes: the transaction's own, or for a cancellation (whose
 * draft is the original's) the document reversing the original's. The receipt names the
 * document by it (receipt.ts), so build and print cannot disagree.
 */
export const builtTipoDocumento = (cancellation: boolean, tx: TransactionDraft): string =>
  (cancellation ? cancellationDocument(tipoDocumentoOf(tx), tx.items).tipo : tipoDocumentoOf(tx));

/**
 * The cancelling document's number. Italian invoices are numbered by the merchant, and the
 * credit (or debit) note needs a number of its own: the original's number in a separate
 * `NC-` (`ND-`) sequence (one per cancelled document, so it is unique). Numero has at most
 * 20 characters (XSD NumeroType), and originals may have 20: when prefix and number do not
 * fit, the number's last characters are kept, with a 6-digit digest of the whole original
 * number after them (`NC-<last 10>-<digest>`, 20 characters): the same original always
 * gives the same number, two originals the same only by a digest collision (1 in 10^6
 * among originals ending alike), and it always holds a digit (SdI wants one in Numero).
 */
export function cancellationNumber(prefix: string, originalNumber: string): string {
  const plain = `${prefix}${originalNumber}`;
  if (Array.from(plain).length <= NUMERO_MAX) return plain;
  const digest = (BigInt(`0x${crypto.createHash('sha256').update(originalNumber, 'utf8').digest('hex').slice(0, 15)}`) % 1_000_000n)
    .toString().padStart(6, '0');
  // A separator the tail begins with is dropped (`NC-000000012-…`, not `NC--000000012-…`).
  const tail = Array.from(originalNumber).slice(-(NUMERO_MAX - prefix.length - 1 - digest.length)).join('').replace(/^[^A-Za-z0-9]+/, '');
  return `${prefix}${tail}-${digest}`;
}

/** Truncates to `max` characters (code points, as XSD maxLength counts them). */
const clip = (text: string, max: number): string => {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
};


/** RateType: the percent with exactly two decimals (`22.00`, `5.50`); rates have at most 2 decimals. */
export const rateText = (rate: number): string => decimal(Math.round(rate * 100));

/** QuantitaType: 2 to 8 decimals (`1.00`, `0.125`). */
export function quantityText(q: number): string {
  const fixed = Math.abs(q).toFixed(8).replace(/0+$/, '');
  const [units, decimals = ''] = fixed.split('.');
  return `${units}.${decimals.padEnd(2, '0')}`;
}

/**
 * ModalitaPagamento: cash MP01 (contanti), card MP08 (carta di pagamento), transfer MP05
 * (bonifico); `other` is not knowable, so MP01 as the neutral default.
 */
export const MODALITA_PAGAMENTO: Readonly<Record<string, string>> = { cash: 'MP01', card: 'MP08', transfer: 'MP05', other: 'MP01' };

/** The seller's partita IVA: resolved into the config at location creation (it/common.ts). */
const partitaIva = (input: BuildInput): string =>
  configString(input.location.config, 'partita_iva') ?? input.location.tax_id ?? MISSING_TAX_ID.padStart(11, '0');

/**
 * The file's progressivo (FORMATS.md §4.3: up to 5 alphanumerics, unique per
 * transmitter), also written as ProgressivoInvio. Invoices: the gapless per-transmitter
 * counter (`chain.number`, numberingKey in index.ts) in base 36, 5 characters
 * (`00001` … `MZZZZ`). Credit notes are built from the location's annulment chain
 * (`chain.seq`): `N` + 4 base-36 characters, a space invoices reach only after 38
 * million files.
 */
export function progressivoOf(input: BuildInput): string {
  const cancellation = input.kind === 'cancellation';
  const n = cancellation ? input.chain.seq : (input.chain.number ?? input.chain.seq);
  const digits = n.toString(36).toUpperCase();
  const width = cancellation ? 4 : 5;
  if (digits.length > width || (!cancellation && digits.length === 5 && digits >= 'N')) {
    throw conflict('the SdI file progressivo of this transmitter is exhausted');
  }
  return (cancellation ? 'N' : '') + digits.padStart(width, '0');
}

/**
 * ProgressivoInvio (String10): `country_config.progressivo_invio` (the spec's "sequence
 * prefix", 1-5 alphanumerics) followed by the file's 5-character progressivo; without a
 * prefix, the progressivo alone. The file name keeps the 5-character progressivo.
 */
export const progressivoInvio = (config: Record<string, unknown>, progressivo: string): string =>
  `${configString(config, 'progressivo_invio') ?? ''}${progressivo}`;

/** A config object's text field, trimmed, or undefined. */
const text = (obj: Record<string, unknown> | null | undefined, ...keys: string[]): string | undefined => {
  for (const k of keys) {
    const v = obj?.[k];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return undefined;
};

/**
 * The seller's Sede: country_config `indirizzo`, `cap`, `comune`, `provincia` (the
 * location address stands in for a missing `indirizzo`). CAP and Comune are mandatory
 * in the schema; on test keys a location without them gets `00000` and the location name;
 * live transactions without them are refused at creation (missingSedeFields, metadata.ts).
 */
/**
 * What the seller's Sede lacks for SdI: `cap` and `comune` have no real stand-in, and
 * `indirizzo` none when the location has no address either. Test keys write the
 * stand-ins; live transactions are refused at creation (metadata.ts).
 */
export function missingSedeFields(location: { address: string | null; config: Record<string, unknown> }): string[] {
  const c = location.config;
  const missing: string[] = [];
  if (text(c, 'indirizzo') === undefined && (location.address ?? '').trim() === '') missing.push('indirizzo');
  if (text(c, 'cap') === undefined) missing.push('cap');
  if (text(c, 'comune') === undefined) missing.push('comune');
  return missing;
}

function sedeCedente(input: BuildInput): Sede {
  const c = input.location.config;
  return {
    Indirizzo: latin(text(c, 'indirizzo') ?? input.location.address ?? input.location.name, 60),
    CAP: text(c, 'cap') ?? '00000',
    Comune: latin(text(c, 'comune') ?? input.location.name, 60),
    Provincia: text(c, 'provincia'),
    Nazione: 'IT',
  };
}

/**
 * The buyer's Sede from `customer_context.address` (an object: `street`/`indirizzo`,
 * `postal_code`/`cap`, `city`/`comune`, `province`/`provincia`, `country`/`nazione`).
 * A foreign buyer's CAP is `00000` (SdI's convention); missing parts are filled the
 * same way as the seller's.
 */
function sedeCessionario(tx: TransactionDraft, country: string): Sede {
  const raw = tx.customer_context?.address;
  const a = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : typeof raw === 'string' ? { street: raw } : {};
  const nazione = (text(a, 'country', 'nazione') ?? country).toUpperCase();
  const cap = text(a, 'postal_code', 'cap');
  const provincia = text(a, 'province', 'provincia');
  return {
    Indirizzo: latin(text(a, 'street', 'indirizzo') ?? '.', 60),
    CAP: nazione === 'IT' && cap !== undefined && /^[0-9]{5}$/.test(cap) ? cap : '00000',
    Comune: latin(text(a, 'city', 'comune') ?? '.', 60),
    Provincia: nazione === 'IT' && provincia !== undefined && /^[A-Z]{2}$/.test(provincia) ? provincia : undefined,
    Nazione: nazione,
  };
}

/**
 * CessionarioCommittente's identity. A company: `customer_context.tax_id` (or `nif`,
 * `partita_iva`), a VAT number with or without its country prefix (without one it is
 * taken as of `buyer_country`); a 16-character codice fiscale there is a person's. A
 * consumer: `customer_context.codice_fiscale`. The name: metadata `buyer_denomination`,
 * else `customer_context.legal_name` or `name`, else `first_name` + `last_name` (Nome,
 * Cognome).
 */
/**
 * The buyer's fiscal identity as the FatturaPA writes it: IdFiscaleIVA (a VAT number) and
 * CodiceFiscale, either or both absent. SdI refuses an invoice whose buyer has neither
 * (00417): live transactions are refused at creation (metadata.ts).
 */
export function buyerIdentity(tx: TransactionDraft, country: string): { IdFiscaleIVA: IdFiscale | undefined; CodiceFiscale: string | undefined } {
  const ctx = tx.customer_context ?? {};
  const taxId = (customerTaxId(tx) ?? text(ctx, 'partita_iva'))?.replace(/\s/g, '').toUpperCase();
  let IdFiscaleIVA: IdFiscale | undefined;
  let CodiceFiscale = text(ctx, 'codice_fiscale')?.toUpperCase();
  if (taxId !== undefined) {
    if (/^[A-Z0-9]{16}$/.test(taxId) && /[A-Z]/.test(taxId.slice(0, 6))) CodiceFiscale ??= taxId;
    else if (/^[A-Z]{2}/.test(taxId) && !/^[0-9]/.test(taxId)) IdFiscaleIVA = { IdPaese: taxId.slice(0, 2), IdCodice: clip(taxId.slice(2), 28) };
    else IdFiscaleIVA = { IdPaese: country, IdCodice: clip(taxId, 28) };
  }
  if (IdFiscaleIVA !== undefined && IdFiscaleIVA.IdCodice === '') IdFiscaleIVA = undefined;
  return { IdFiscaleIVA, CodiceFiscale: CodiceFiscale !== undefined && /^[A-Z0-9]{11,16}$/.test(CodiceFiscale) ? CodiceFiscale : undefined };
}


/** A refund's credit note names the invoice it corrects when the client gave it (metadata.ts `readOriginalInvoice`). */
function linkedInvoice(tx: TransactionDraft): { IdDocumento: string; Data?: string | undefined } | undefined {
  const number = metaString(tx, 'original_invoice_number');
  return number === undefined ? undefined : { IdDocumento: number, Data: metaString(tx, 'original_invoice_date') };
}
/**
 * DatiFatturaRettificata's ElementiRettificati of a cancellation (art. 21-bis c.1 lett. h:
 * "le indicazioni specifiche che vengono modificate"): the whole document, reversed.
 */
const STORNO_TOTALE: Readonly<Record<string, string>> = {
  TD07: 'Storno totale della fattura semplificata',
  TD08: 'Storno totale della nota di credito semplificata',
};

/**
 * A simplified credit note's DatiFatturaRettificata (TD08 of a refund, metadata.ts requires
 * both): the invoice it corrects (NumeroFR, DataFR) and what it changes (lett. h), the goods
 * or services credited, by their descriptions.
 */
function rettificata(tx: TransactionDraft): { NumeroFR: string; DataFR: string; ElementiRettificati: string } | undefined {
  const number = metaString(tx, 'original_invoice_number');
  const date = metaString(tx, 'original_invoice_date');
  if (number === undefined || date === undefined) return undefined;
  const credited = tx.items.map((l) => l.description.trim()).filter((d) => d !== '').join('; ');
  return { NumeroFR: number, DataFR: date, ElementiRettificati: latin(`Variazione in diminuzione (art. 26 DPR 633/1972): ${credited || 'importi'}`, 1000) };
}

/** The buyer's name as the client gave it (metadata `buyer_denomination`, `legal_name`/`name`, or first and last name); undefined when none. */
function buyerName(tx: TransactionDraft): Anagrafica | undefined {
  const ctx = tx.customer_context ?? {};
  const denominazione = metaString(tx, 'buyer_denomination') ?? text(ctx, 'legal_name', 'name');
  const nome = text(ctx, 'first_name');
  const cognome = text(ctx, 'last_name');
  if (denominazione === undefined && nome !== undefined && cognome !== undefined) return { Nome: latin(nome, 60), Cognome: latin(cognome, 60) };
  return denominazione === undefined ? undefined : { Denominazione: latin(denominazione, 80) };
}

function cessionario(tx: TransactionDraft, country: string) {
  const { IdFiscaleIVA, CodiceFiscale } = buyerIdentity(tx, country);
  const Anagrafica: Anagrafica = buyerName(tx) ?? { Denominazione: latin(CodiceFiscale ?? IdFiscaleIVA?.IdCodice ?? 'Cliente', 80) };
  return {
    IdFiscaleIVA,
    CodiceFiscale,
    Anagrafica,
    Sede: sedeCessionario(tx, country),
  };
}

/**
 * The simplified invoice's buyer (CessionarioCommittente of Schema_VFSM10.xsd): its fiscal
 * identifiers, which art. 21-bis c.1 lett. f asks for (partita IVA, or a consumer's codice
 * fiscale; live transactions without either are refused, metadata.ts), and its name and
 * address (AltriDatiIdentificativi) only when the client named the buyer: the law does not
 * ask for them, and a stand-in name would be false data.
 */
function cessionarioSemplificato(tx: TransactionDraft, country: string) {
  const { IdFiscaleIVA, CodiceFiscale } = buyerIdentity(tx, country);
  const name = buyerName(tx);
  return { IdFiscaleIVA, CodiceFiscale, altri: name === undefined ? undefined : { Anagrafica: name, Sede: sedeCessionario(tx, country) } };
}

/**
 * DatiBeniServizi of a simplified invoice: one per line, its amount VAT included (Importo:
 * the line's total, so the entries add up to the transaction's total exactly; the format
 * has no document total), and the VAT it includes as the transaction has it (Imposta) with
 * its rate (Aliquota), as art. 21-bis c.1 lett. g asks ("l'imposta incorporata, ovvero i
 * dati che permettono di calcolarla"); a 0 % line carries 0.00 and its Natura.
 */
function beniServizi(items: readonly TxLine[]): BeneServizio[] {
  return items.map((l) => ({
    Descrizione: latin(l.description, 1000),
    Importo: decimal(l.total_amount),
    Imposta: decimal(l.tax_amount),
    Aliquota: rateText(l.tax_rate),
    Natura: l.tax_rate === 0 && typeof l.natura === 'string' ? l.natura : undefined,
  }));
}

/** DettaglioLinee: net prices (PrezzoTotale = total - tax of the line), Natura on 0 % lines. */
function linee(items: readonly TxLine[]): Linea[] {
  return items.map((l, i) => ({
    NumeroLinea: i + 1,
    Descrizione: latin(l.description, 1000),
    Quantita: quantityText(l.quantity),
    PrezzoUnitario: decimal(l.unit_price),
    PrezzoTotale: decimal(l.total_amount - l.tax_amount),
    AliquotaIVA: rateText(l.tax_rate),
    Natura: l.tax_rate === 0 && typeof l.natura === 'string' ? l.natura : undefined,
  }));
}

/**
 * The VAT SdI accepts for a summary row (check 00421, "Imposta non calcolato secondo le
 * regole definite nelle specifiche tecniche"): ImponibileImporto × AliquotaIVA / 100 within
 * ±0.01 EUR (SdI "Elenco controlli", as read here: docs/decisions.md "FatturaPA VAT
 * summary"). The summary's VAT is the sum of the lines' VAT (the transaction's cents)
 * whenever that sum is within the tolerance, which it is unless many lines round the same
 * way (5 lines of 1.02 at 22 %: 5 × 0.22 = 1.10, but 5.10 × 22 % = 1.122). FatturaPA lines
 * carry no VAT of their own, so SdI only sees the summary: outside the tolerance, the
 * row's VAT is the product rounded half up (integer arithmetic), as an Italian invoice
 * computes it, and the document's total keeps the transaction's (see `buildSdi`).
 */
export function summaryTax(base: number, rate: number, linesTax: number): number {
  const rateHundredths = BigInt(Math.round(rate * 100));
  const exact = BigInt(base) * rateHundredths; // VAT in cents × 10,000
  const diff = BigInt(linesTax) * 10_000n - exact;
  if (diff >= -10_000n && diff <= 10_000n) return linesTax;
  return Number((exact + 5_000n) / 10_000n);
}

/**
 * DatiRiepilogo: one per rate and, at 0 %, per Natura, in order of first appearance;
 * `total` is the sum of the rows' taxable amounts and VAT.
 */
export function riepilogo(items: readonly TxLine[]): { rows: Riepilogo[]; total: number } {
  const groups = new Map<string, { rate: number; natura: string | undefined; base: number; tax: number }>();
  for (const l of items) {
    const natura = l.tax_rate === 0 && typeof l.natura === 'string' ? l.natura : undefined;
    const key = `${rateText(l.tax_rate)}|${natura ?? ''}`;
    const g = groups.get(key) ?? { rate: l.tax_rate, natura, base: 0, tax: 0 };
    g.base += l.total_amount - l.tax_amount;
    g.tax += l.tax_amount;
    groups.set(key, g);
  }
  let total = 0;
  const rows = [...groups.values()].map((g) => {
    const tax = summaryTax(g.base, g.rate, g.tax);
    total += g.base + tax;
    return {
      AliquotaIVA: rateText(g.rate),
      Natura: g.natura,
      ImponibileImporto: decimal(g.base),
      Imposta: decimal(tax),
      EsigibilitaIVA: 'I',
    };
  });
  return { rows, total };
}

export function buildSdi(input: BuildInput): FiscalRecord {
  const { location } = input;
  const cancellation = input.kind === 'cancellation';
  // A credit note repeats the cancelled invoice's lines and buyer.
  const tx = cancellation ? (input.original?.tx ?? input.tx) : input.tx;
  const originalNumber = metaString(tx, 'invoice_number') ?? '';
  // A credit note (TD04) is reversed by a debit note (TD05), anything else by a credit note;
  // stored metadata carries tipo_documento (metadata.ts), the fallback is its default.
  const reversal = cancellation ? cancellationDocument(tipoDocumentoOf(tx), tx.items) : undefined;
  const numero = reversal ? cancellationNumber(reversal.prefix, originalNumber) : originalNumber;
  const today = isoDate(localDate(input.now, 'IT'));
  const data = cancellation ? today : (metaString(tx, 'invoice_date') ?? today);
  const versione = configString(location.config, 'formato_trasmissione') === 'FPA12' ? 'FPA12' : 'FPR12';
  const piva = partitaIva(input);
  const progressivo = progressivoOf(input);
  const { rows, total } = riepilogo(tx.items);
  const buyerCountry = metaString(tx, 'buyer_country') ?? 'IT';
  const pec = metaString(tx, 'pec_destinatario');

  const tipo = builtTipoDocumento(cancellation, tx);
  const trasmissione: FatturaFields['trasmissione'] = {
    IdTrasmittente: { IdPaese: 'IT', IdCodice: piva },
    ProgressivoInvio: progressivoInvio(location.config, progressivo),
    CodiceDestinatario: metaString(tx, 'codice_destinatario') ?? (versione === 'FPA12' ? '999999' : '0000000'),
    PECDestinatario: pec,
  };
  const cedente: FatturaFields['cedente'] = {
    IdFiscaleIVA: { IdPaese: 'IT', IdCodice: piva },
    CodiceFiscale: configString(location.config, 'codice_fiscale'),
    Anagrafica: { Denominazione: latin(configString(location.config, 'legal_name') ?? location.name, 80) },
    RegimeFiscale: configString(location.config, 'regime_fiscale') ?? 'RF01',
    Sede: sedeCedente(input),
  };
  const fileName = `IT${piva}_${progressivo}.xml`;
  const record = (body: string): FiscalRecord => ({
    body,
    contentType: 'application/xml',
    fiscalId: fileName,
    documentNumber: numero,
    fingerprint: null,
    qrData: null,
    placeholder: false,
    renderHints: [textHint('invoice_number', 'header', numero)],
  });

  // A fattura semplificata (TD07) and its notes (TD08, TD09) exist only in the simplified
  // format (Schema_VFSM10.xsd): the 1.2.2 schema has none of them. Between private parties
  // only (FSM10's CodiceDestinatario has 7 characters; an FPA12 location's TD07 is refused at
  // creation, metadata.ts), sent unsigned through the same channel and under the same file
  // name as an FPR12 file.
  if (SEMPLIFICATI.includes(tipo)) {
    return record(semplificataXml({
      trasmissione,
      cedente,
      cessionario: cessionarioSemplificato(tx, buyerCountry),
      documento: { TipoDocumento: tipo, Divisa: tx.currency, Data: data, Numero: numero, BolloVirtuale: bolloDue(tx) ? 'SI' : undefined },
      rettificata: cancellation
        ? { NumeroFR: originalNumber, DataFR: metaString(tx, 'invoice_date') ?? data, ElementiRettificati: STORNO_TOTALE[tipoDocumentoOf(tx)] ?? STORNO_TOTALE.TD07! }
        : rettificata(tx),
      beni: beniServizi(tx.items),
    }));
  }

  const signed = versione === 'FPA12';
  if (signed && input.signingKey === undefined) {
    throw new Error('it-sdi: no signing key: FPA12 files are signed with the location certificate (capabilities.signsWithCertificate)');
  }
  const unsigned = fatturaXml({
    versione,
    signable: signed,
    trasmissione,
    cedente,
    cessionario: cessionario(tx, buyerCountry),
    documento: {
      TipoDocumento: tipo,
      Divisa: tx.currency,
      Data: data,
      Numero: numero,
      // Stamp duty (bollo.ts): shown, never added to the total below; a merchant who
      // recharges it to the buyer does so with a line of its own.
      ImportoBollo: bolloDue(tx) ? BOLLO_AMOUNT : undefined,
      // The total the buyer pays is the transaction's; where the summary's VAT had to be
      // recomputed (summaryTax), the cents it differs by are the document's Arrotondamento
      // (2.1.1.10), so ImportoTotaleDocumento = summary + Arrotondamento still holds.
      ImportoTotaleDocumento: decimal(tx.total_amount),
      Arrotondamento: tx.total_amount === total ? undefined : decimal(tx.total_amount - total),
    },
    collegata: cancellation
      ? { IdDocumento: originalNumber, Data: metaString(tx, 'invoice_date') }
      : linkedInvoice(tx),
    linee: linee(tx.items),
    riepilogo: rows,
    pagamento: {
      CondizioniPagamento: 'TP02',
      ModalitaPagamento: MODALITA_PAGAMENTO[tx.payment_method] ?? 'MP01',
      ImportoPagamento: decimal(tx.total_amount),
    },
  });
  const xml = signed
    ? signXadesBes({
        document: unsigned,
        key: input.signingKey!,
        // Rome local time with its offset; Ids from the transaction id, so a rebuild gives the same bytes.
        signingTime: localDateTimeWithOffset(input.now, 'IT'),
        idBase: input.transactionId.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100) || 'fatturapa',
      }).xml
    : unsigned;
  return record(xml);
}
