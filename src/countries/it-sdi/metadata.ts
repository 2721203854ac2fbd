/**
 * Italy SDI transaction rules: the spec's "Italy SDI" metadata table, DECISIONS'
 * `tipo_documento` override, and the Natura rule on 0 % lines.
 */
import { badRequest } from '../../core/errors.ts';
import type { CorrectedSaleLookup, LocationForFiscal, TransactionContext, TransactionDraft } from '../types.ts';
import { isIsoDate, isoDate, localDate } from '../shared/dates.ts';
import { baseMetadata, optionalBoolean, optionalChoice, optionalText, withoutUndefined } from '../shared/metadata-fields.ts';
import { checkNatura } from '../it/natura.ts';
import { checkItalianAmounts } from '../it/amounts.ts';
import { decimal } from '../shared/amounts.ts';
import { configString } from '../shared/config-fields.ts';
import { partitaIvaCheckDigitValid } from '../it/partita-iva.ts';
import { codiceFiscaleValid } from '../it/codice-fiscale.ts';
import { buyerIdentity, defaultTipoDocumento, missingSedeFields, semplificataExcludes } from './build.ts';

/** TipoDocumento codes offered (FatturaPA 1.2.2): invoice, advance, credit note, fee note, debit note of a fee, deferred invoice. */
export const TIPI_DOCUMENTO = ['TD01', 'TD02', 'TD04', 'TD06', 'TD07', 'TD24'] as const;

/**
 * `Numero` (FatturaPA String20, basic Latin) must contain a digit: SdI refuses a number
 * without one (00425).
 */
const NUMERO = /^(?=.*[0-9])[\x20-\x7E]{1,20}$/;

export function validateSdiTransaction(tx: TransactionDraft, ctx: TransactionContext): Record<string, unknown> {
  const meta = baseMetadata(tx, 'IT');
  checkAliquote(tx);
  checkNatura(tx);
  checkNaturaSubcode(tx);
  checkItalianAmounts(tx);

  const invoice_number = optionalText(
    meta,
    'invoice_number',
    'metadata.invoice_number must be 1-20 characters and contain at least one digit',
    NUMERO,
    true,
  );
  if (invoice_number === undefined) throw badRequest('invoice_number is required in metadata for Italian transactions');

  const today = isoDate(localDate(ctx.now, 'IT'));
  const invoice_date = optionalText(meta, 'invoice_date', 'metadata.invoice_date must be a date in the form YYYY-MM-DD') ?? today;
  if (!isIsoDate(invoice_date)) throw badRequest('metadata.invoice_date must be a date in the form YYYY-MM-DD');
  // SdI refuses an invoice dated after it receives it (00403).
  if (invoice_date > today) throw badRequest('metadata.invoice_date must not be in the future');

  const requested = requestedTipo(meta) ?? defaultTipoDocumento(tx);
  // TD07 on a refund or void asks for the simplified form of its credit note: the TD08
  // stored is the document built (DECISIONS keeps the request's values; `semplificataTipo`).
  const tipo_documento = semplificataTipo(requested, tx);
  if (tipo_documento === 'TD07' || tipo_documento === 'TD08') checkSemplificata(tx, ctx, tipo_documento);

  // Denominazione: String80 (Latin).
  const buyer_denomination = optionalText(
    meta,
    'buyer_denomination',
    'metadata.buyer_denomination must be a string of at most 80 characters',
    /^[\s\S]{1,80}$/,
  );
  const buyer_country =
    optionalText(meta, 'buyer_country', 'metadata.buyer_country must be an ISO 3166-1 alpha-2 code (e.g. IT)', /^[A-Z]{2}$/) ?? 'IT';

  // PECDestinatario (EmailType, at most 256): the buyer's certified mail when it has no channel code.
  const pec_destinatario = optionalText(
    meta,
    'pec_destinatario',
    'metadata.pec_destinatario must be an email address of at most 256 characters',
    /^(?=.{1,256}$)[^\s@"]+@[^\s@"]+\.[^\s@"]+$/,
  );
  const codice_destinatario = readCodiceDestinatario(meta, ctx.location.config.formato_trasmissione, buyer_country, pec_destinatario);

  checkPecDestinatario(codice_destinatario, pec_destinatario);
  checkBuyerIds(tx, buyer_country);
  checkNotSelfInvoice(tx, ctx, tipo_documento, buyer_country);

  const { original_invoice_number, original_invoice_date } = readOriginalInvoice(meta, tipo_documento, invoice_date);
  // DatiFatturaRettificata names the invoice by NumeroFR and DataFR, both required
  // (Schema_VFSM10.xsd), as art. 21-bis c.1 lett. h asks of a simplified variation note.
  if (tipo_documento === 'TD08' && (original_invoice_number === undefined || original_invoice_date === undefined)) {
    throw badRequest(
      'metadata.original_invoice_number and metadata.original_invoice_date are required for a simplified credit note (TD07 on a refund or void, issued as TD08): it names the invoice it corrects (DPR 633/1972 art. 21-bis c.1 lett. h)',
    );
  }

  if (ctx.environment === 'live') requireLiveParties(tx, ctx, buyer_country);
  // A test key's invoice sent to SdI's own test service (X-Svc-Sandbox: authority) is
  // checked by SdI as a live one: a buyer without an id would come back discarded (00417)
  // after the 201. The stub keeps the spec's minimal request working.
  else if (ctx.sandboxMode === 'authority') requireBuyerId(tx, buyer_country, AUTHORITY_TEST_INVOICES);
  // The seller's own codice fiscale, on the way to SdI (live, or its test service): the spec
  // takes 11-16 alphanumerics at registration, which the stub keeps taking.
  if (ctx.environment === 'live' || ctx.sandboxMode === 'authority') checkSellerCodiceFiscale(ctx);

  return withoutUndefined({
    ...meta,
    pec_destinatario,
    invoice_number,
    invoice_date,
    codice_destinatario,
    buyer_denomination,
    buyer_country,
    tipo_documento,
    original_invoice_number,
    original_invoice_date,
    // Forces (true) or suppresses (false) the stamp duty the lines would decide (bollo.ts).
    bollo_virtuale: optionalBoolean(meta, 'bollo_virtuale'),
  });
}

/**
 * The invoice a credit note corrects (DatiFattureCollegate 2.1.6: IdDocumento, Data): DPR
 * 633/1972 art. 26 wants a variation note to name the invoice it varies, and a refund is
 * a TD04. The names are SII's (`original_invoice_number`, `original_issue_date` there, in
 * DD-MM-YYYY; here the ISO date every Italian date takes). A cancellation names its
 * original itself; a refund can only name it through these.
 */
function readOriginalInvoice(meta: Record<string, unknown>, tipo: string, invoiceDate: string): { original_invoice_number?: string; original_invoice_date?: string } {
  const number = optionalText(
    meta,
    'original_invoice_number',
    'metadata.original_invoice_number must be 1-20 characters and contain at least one digit',
    NUMERO,
    true,
  );
  const date = optionalText(meta, 'original_invoice_date', 'metadata.original_invoice_date must be a date in the form YYYY-MM-DD');
  if (date !== undefined && !isIsoDate(date)) throw badRequest('metadata.original_invoice_date must be a date in the form YYYY-MM-DD');
  if (number === undefined) {
    if (date !== undefined) throw badRequest('metadata.original_invoice_date needs metadata.original_invoice_number');
    return {};
  }
  if (tipo !== 'TD04' && tipo !== 'TD08') throw badRequest('metadata.original_invoice_number applies to credit notes (TD04)');
  // SdI refuses a document dated before the invoice it refers to (00418).
  if (date !== undefined && date > invoiceDate) throw badRequest('metadata.original_invoice_date must not be after metadata.invoice_date');
  return { original_invoice_number: number, ...(date !== undefined ? { original_invoice_date: date } : {}) };
}

/** The TipoDocumento the request names (TIPI_DOCUMENTO), if any. */
const requestedTipo = (meta: Record<string, unknown>): string | undefined =>
  optionalChoice(meta, 'tipo_documento', TIPI_DOCUMENTO, 'metadata.tipo_documento must be one of TD01, TD02, TD04, TD06, TD07, TD24');

/** A simplified invoice's ceiling, in cents: 400 euro (DPR 633/1972 art. 21-bis c.1, as raised by DM 10 maggio 2019). */
export const SEMPLIFICATA_MAX_TOTAL = 40_000;

/**
 * The TipoDocumento a transaction is issued as, from the one its request names (TIPI_DOCUMENTO,
 * the values DECISIONS lists): TD07 on a refund or void is the simplified credit note, TD08
 * (nota di credito semplificata, Schema_VFSM10.xsd). DPR 633/1972 art. 21-bis c.1 lets "la
 * fattura rettificativa di cui all'articolo 26" be issued in the simplified form (lett. h: it
 * names the invoice it corrects and what it changes); the request asks for that form as it
 * asks for the simplified invoice, with TD07, rather than with a value DECISIONS does not
 * list. Everything else as requested.
 */
export const semplificataTipo = (requested: string, tx: TransactionDraft): string =>
  (requested === 'TD07' && tx.type !== 'sale' ? 'TD08' : requested);

/**
 * What a fattura semplificata (TD07, Schema_VFSM10.xsd), or its credit note (TD08), may be,
 * refused at creation with a 400 rather than by SdI days later (docs/decisions.md "Italy SDI:
 * the simplified invoice", "TD08"):
 * - between private parties: the format has no FPA12 form (CodiceDestinatario of 7
 *   characters only);
 * - an invoice: at most 400 euro in total (art. 21-bis c.1, DM 10 maggio 2019; SdI check
 *   00460), except for a seller in the flat-rate regime (RF19), whom L. 190/2014 art. 1 (as
 *   amended from 2025) lets issue it above the limit, as SdI's check does. A credit note has
 *   no ceiling: art. 21-bis c.1 allows the "fattura rettificativa" in the simplified form
 *   whatever its amount (circolari AdE 13/E/2013 and 18/E/2014), and SdI's 00460 spares a
 *   document with DatiFatturaRettificata;
 * - no line the format cannot carry (`semplificataExcludes`).
 */
function checkSemplificata(tx: TransactionDraft, ctx: TransactionContext, tipo: 'TD07' | 'TD08'): void {
  const refusal = semplificataRefusal(tx, ctx, tipo);
  if (refusal !== null) throw badRequest(refusal);
}

/** Why the transaction cannot be the simplified document `tipo` (`checkSemplificata`'s 400), or null. */
function semplificataRefusal(tx: TransactionDraft, ctx: TransactionContext, tipo: 'TD07' | 'TD08'): string | null {
  const what = tipo === 'TD07'
    ? 'metadata.tipo_documento TD07 (fattura semplificata)'
    : 'metadata.tipo_documento TD07 on a refund or void (nota di credito semplificata, TD08)';
  if (ctx.location.config.formato_trasmissione === 'FPA12') {
    return `${what} cannot be sent to a public administration (FPA12): the simplified format is for private parties only`;
  }
  if (tipo === 'TD07' && tx.total_amount > SEMPLIFICATA_MAX_TOTAL && ctx.location.config.regime_fiscale !== 'RF19') {
    return `${what} is allowed up to 400.00 EUR in total (DPR 633/1972 art. 21-bis, limit of DM 10 maggio 2019): total_amount is ${decimal(tx.total_amount)} EUR; issue an ordinary invoice (TD01)`;
  }
  const name = tipo === 'TD07' ? 'a fattura semplificata (TD07)' : 'a nota di credito semplificata (TD08)';
  const ordinary = tipo === 'TD07' ? 'an ordinary invoice (TD01)' : 'an ordinary credit note (TD04)';
  for (const [i, line] of tx.items.entries()) {
    const natura = typeof line.natura === 'string' ? line.natura : undefined;
    const excluded = semplificataExcludes(natura);
    if (excluded === 'reverse-charge') return `items[${i}].natura ${natura!} cannot be in ${name}: reverse charge needs ${ordinary}`;
    if (excluded === 'intra-eu') return `items[${i}].natura N3.2 cannot be in ${name}: DPR 633/1972 art. 21-bis c.2 excludes intra-EU supplies`;
  }
  return null;
}

/**
 * CodiceDestinatario: the recipient's SdI channel, uppercase letters and digits (SdI
 * reads lowercase as a different, unknown code). 7 characters between private parties
 * (FPR12), `0000000` when the buyer receives by PEC or is a consumer; 6 for a public
 * administration (FPA12: the IPA office code). SdI refuses a 7-character code on an
 * FPA12 invoice and a 6-character one on FPR12 (00427), so for FPA12 there is no
 * default: the office code is required.
 */
function readCodiceDestinatario(meta: Record<string, unknown>, formato: unknown, buyerCountry: string, pec: string | undefined): string {
  if (formato === 'FPA12') {
    const message = 'metadata.codice_destinatario must be the 6-character IPA office code (uppercase letters or digits) for FPA12';
    const code = optionalText(meta, 'codice_destinatario', message, /^[A-Z0-9]{6}$/);
    if (code === undefined) {
      throw badRequest('metadata.codice_destinatario is required for public administration invoices (FPA12): the 6-character IPA office code');
    }
    return code;
  }
  return (
    optionalText(meta, 'codice_destinatario', 'metadata.codice_destinatario must be 7 uppercase letters or digits', /^[A-Z0-9]{7}$/) ??
    defaultCodiceDestinatario(buyerCountry, pec)
  );
}

/**
 * The FPR12 default channel code when the client gives none. `0000000` (the spec's default)
 * is the code of an Italian buyer reached by PEC or through its reserved area on the Agenzia's
 * portal; a buyer outside Italy has neither, and the SdI technical rules (Specifiche tecniche
 * FatturaPA, field 1.1.4) ask for `XXXXXXX` on an invoice to a non-resident, which is also
 * what makes the invoice count as the cross-border report (esterometro, art. 1 c.3-bis d.lgs.
 * 127/2015 as amended by L. 178/2020). San Marino is the exception: since 1 October 2021 its
 * invoices travel through SdI to the Ufficio Tributario under code `2R4GTO8` (DM 21 June 2021,
 * Provvedimento AdE 5 August 2021). A PEC address keeps `0000000` (00426 allows it with no
 * other code). An explicit codice_destinatario is always kept.
 */
function defaultCodiceDestinatario(buyerCountry: string, pec: string | undefined): string {
  if (pec !== undefined || buyerCountry === 'IT') return '0000000';
  return buyerCountry === 'SM' ? '2R4GTO8' : 'XXXXXXX';
}

/**
 * AliquotaIVA (RateType, `[0-9]{1,3}\.[0-9]{2}`) is the percentage with two decimals: a rate
 * with more would be written rounded, unlike the VAT the lines carry (and 0.001 % would be
 * written `0.00` without a Natura: SdI 00400/00429). SdI reads a rate between 0 and 1 as a
 * fraction given for a percentage and refuses it (00424, "l'aliquota IVA deve essere indicata
 * in termini percentuali": 0 or at least 1.00). No Italian VAT rate is either.
 */
function checkAliquote(tx: TransactionDraft): void {
  tx.items.forEach((line, i) => {
    const rate = line.tax_rate;
    if (rate > 0 && rate < 1) {
      throw badRequest(`items[${i}].tax_rate must be 0 or at least 1 %: SdI reads AliquotaIVA as a percentage (22.00 for 22 %) and refuses a rate between 0 and 1 (00424)`);
    }
    if (Math.abs(Math.round(rate * 100) - rate * 100) > 1e-6) {
      throw badRequest(`items[${i}].tax_rate must have at most 2 decimals: FatturaPA writes AliquotaIVA as a percentage with two`);
    }
  });
}

/**
 * PECDestinatario goes with CodiceDestinatario `0000000` only: SdI refuses a PEC address beside
 * any other code (00426, "1.1.6 <PECDestinatario> valorizzato a fronte di 1.1.4
 * <CodiceDestinatario> con valore diverso da 0000000"), a public administration's 6-character
 * office code included, and a foreign buyer's `XXXXXXX`.
 */
function checkPecDestinatario(codice: string, pec: string | undefined): void {
  if (pec !== undefined && codice !== '0000000') {
    throw badRequest(`metadata.pec_destinatario goes with codice_destinatario 0000000 only (here ${codice}): SdI refuses a PEC address beside another recipient code (00426); give one or the other`);
  }
}

/** The customer_context key the buyer's tax id was read from (buyerIdentity reads them in this order). */
const buyerTaxIdField = (tx: TransactionDraft): string | undefined =>
  ['nif', 'tax_id', 'partita_iva'].find((k) => {
    const v = tx.customer_context?.[k];
    return typeof v === 'string' && v.trim() !== '';
  });

/**
 * The buyer's identifiers as the FatturaPA writes them (`buyerIdentity`), checked as SdI checks
 * them: an Italian VAT number (IdPaese IT) must be a partita IVA SdI finds in the registry
 * (00305), a codice fiscale must be valid (00306). The check digit and character catch the
 * typing errors; a number never issued only SdI can tell. A foreign VAT number without its
 * country prefix was read as Italian (buyer_country defaults to IT): the message says so.
 * Every key: the stub must not deliver what SdI refuses for certain. A codice fiscale that is
 * not one was dropped from the document before (the buyer then had no id on test keys).
 */
function checkBuyerIds(tx: TransactionDraft, buyerCountry: string): void {
  const cf = tx.customer_context?.codice_fiscale;
  if (typeof cf === 'string' && cf.trim() !== '' && !codiceFiscaleValid(cf.trim().toUpperCase())) {
    throw badRequest('customer_context.codice_fiscale is not a valid codice fiscale (16 characters with their check character, or 11 digits with their check digit): SdI refuses it (00306)');
  }
  const field = buyerTaxIdField(tx);
  if (field === undefined) return;
  const raw = String(tx.customer_context![field]).replace(/\s/g, '').toUpperCase();
  if (/^[A-Z0-9]{16}$/.test(raw) && /[A-Z]/.test(raw.slice(0, 6))) {
    if (!codiceFiscaleValid(raw)) {
      throw badRequest(`customer_context.${field} is not a valid codice fiscale (16 characters with their check character): SdI refuses it (00306)`);
    }
    return;
  }
  const { IdFiscaleIVA } = buyerIdentity(tx, buyerCountry);
  if (IdFiscaleIVA?.IdPaese === 'IT' && !partitaIvaCheckDigitValid(IdFiscaleIVA.IdCodice)) {
    throw badRequest(`customer_context.${field} is not a valid Italian partita IVA (11 digits with their check digit): SdI refuses it (00305); a foreign VAT number takes its country prefix (DE123456789) or metadata.buyer_country`);
  }
}

/**
 * The TipoDocumento values SdI refuses when the cedente and the cessionario are the same subject
 * (00471: TD01, TD02, TD03, TD06, TD16-TD20, TD24, TD25, TD28), of those a request may name.
 */
const NOT_TO_ONESELF: readonly string[] = ['TD01', 'TD02', 'TD06', 'TD24'];

/**
 * SdI 00471: an invoice (TD01, an advance TD02, a fee note TD06, a deferred invoice TD24) to
 * oneself is refused; what a business takes for its own use or gives away is a self-invoice
 * (TD27), and a VAT-ceiling regularisation TD21 (AdE "Guida alla compilazione delle fatture
 * elettroniche", TD21/TD27), which this service does not issue. Same subject: the buyer's
 * IdFiscaleIVA is the seller's (IT + its partita IVA), or the buyer's codice fiscale is the
 * seller's. (FatturaElettronica.NET's check asks for both to match; SdI's exact comparison is
 * not published in what we read, and either alone names the seller: docs/decisions.md.)
 */
function checkNotSelfInvoice(tx: TransactionDraft, ctx: TransactionContext, tipo: string, buyerCountry: string): void {
  if (!NOT_TO_ONESELF.includes(tipo)) return;
  const buyer = buyerIdentity(tx, buyerCountry);
  const piva = configString(ctx.location.config, 'partita_iva') ?? ctx.location.tax_id ?? undefined;
  const cf = configString(ctx.location.config, 'codice_fiscale');
  const sameVat = buyer.IdFiscaleIVA !== undefined && buyer.IdFiscaleIVA.IdPaese === 'IT' && buyer.IdFiscaleIVA.IdCodice === piva;
  const sameCf = buyer.CodiceFiscale !== undefined && buyer.CodiceFiscale === cf;
  if (sameVat || sameCf) {
    throw badRequest(`customer_context names this location's own ${sameVat ? 'partita IVA' : 'codice fiscale'}: SdI refuses a ${tipo} whose buyer is the seller itself (00471); goods taken for own use or given away are a self-invoice (TD27), not issued here`);
  }
}

/** The generic codes SdI has refused since 1 January 2021 (00445/00448): only their sub-codes. */
const GENERIC_NATURA: Readonly<Record<string, string>> = { N2: 'N2.1 or N2.2', N3: 'N3.1 to N3.6', N6: 'N6.1 to N6.9' };

/**
 * SdI refuses an invoice that uses N2, N3 or N6 without a sub-code, and which sub-code
 * applies is a tax decision we cannot make for the merchant: a 400 asks for it
 * (docs/decisions.md "Italy").
 */
function checkNaturaSubcode(tx: TransactionDraft): void {
  tx.items.forEach((line, i) => {
    const sub = typeof line.natura === 'string' ? GENERIC_NATURA[line.natura] : undefined;
    if (sub !== undefined) {
      throw badRequest(`items[${i}].natura ${String(line.natura)} is no longer accepted by SdI: give its sub-code (${sub})`);
    }
  });
}

/** The partita IVA's spec message style ("partita_iva is required"), naming each missing field. */
const listOf = (names: string[]): string =>
  names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;

/**
 * What SdI refuses for certain, refused on live keys before anything is stored
 * (docs/decisions.md "Italy", "Live: seller Sede and buyer id"); test keys keep the
 * stand-ins so the spec's minimal request (only `invoice_number`) works in the sandbox:
 * - the seller's Sede without CAP or Comune (or without any address): the FatturaPA needs
 *   them (IndirizzoType), and `00000` or the location name would be false data;
 * - a buyer with neither a VAT number nor a codice fiscale (SdI 00417), a consumer too:
 *   an Italian private buyer is identified by the codice fiscale.
 */
function requireLiveParties(tx: TransactionDraft, ctx: TransactionContext, buyerCountry: string): void {
  const missing = missingSedeFields(ctx.location);
  if (missing.length > 0) {
    const fields = missing.map((f) => `country_config.${f}`);
    throw badRequest(`${listOf(fields)} ${fields.length === 1 ? 'is' : 'are'} required for live SDI invoices: the seller's address (Sede) in the FatturaPA`);
  }
  requireBuyerId(tx, buyerCountry, 'live SDI invoices');
}

export const SELLER_CODICE_FISCALE_INVALID =
  'country_config.codice_fiscale is not a valid codice fiscale (11 digits with their check digit, or 16 characters with their check character): SdI refuses an invoice whose seller has one (00302); PATCH the location with the right one';

/**
 * SdI 00302: the CedentePrestatore's CodiceFiscale must be a valid one (check digit or
 * character; whether it was ever issued only SdI's registry knows). Registration takes the
 * spec's 11-16 alphanumerics (its pattern and message), so a typing error is caught here,
 * before a record is numbered, instead of a Notifica di Scarto days later.
 */
function checkSellerCodiceFiscale(ctx: TransactionContext): void {
  const cf = configString(ctx.location.config, 'codice_fiscale');
  if (cf !== undefined && !codiceFiscaleValid(cf)) throw badRequest(SELLER_CODICE_FISCALE_INVALID);
}

const AUTHORITY_TEST_INVOICES = 'SDI invoices sent to the SdI test service (X-Svc-Sandbox: authority)';

/** SdI 00417: the buyer is identified by a VAT number or a codice fiscale, a consumer too. */
function requireBuyerId(tx: TransactionDraft, buyerCountry: string, invoices: string): void {
  const buyer = buyerIdentity(tx, buyerCountry);
  if (buyer.IdFiscaleIVA === undefined && buyer.CodiceFiscale === undefined) {
    throw badRequest(`customer_context.tax_id (partita IVA) or customer_context.codice_fiscale is required for ${invoices}: SdI refuses a buyer without either (00417)`);
  }
}

/**
 * FiscalSystem.issuedDocument: SdI refuses an invoice that repeats one it holds (00404:
 * the same cedente, TipoDocumento, year of Data and Numero), so a number is issued once per
 * document type and year (DPR 633/1972 art. 21: progressive numbering, which may restart
 * each calendar year). Caught at creation as a 409 instead of a rejection days later.
 */
export function sdiIssuedDocument(tx: TransactionDraft, location: LocationForFiscal): { document: string; message: string; scope: string; alias: string } | null {
  const number = tx.metadata.invoice_number;
  const date = tx.metadata.invoice_date;
  if (typeof number !== 'string' || typeof date !== 'string') return null;
  const tipo = typeof tx.metadata.tipo_documento === 'string' ? tx.metadata.tipo_documento : defaultTipoDocumento(tx);
  const year = date.slice(0, 4);
  return {
    document: issuedDocumentKey(tipo, year, number),
    scope: issuerScope(location),
    // A refund may name the invoice by its number alone (`sdiCorrectedSale`).
    alias: number,
    message: `metadata.invoice_number ${number} was already issued as ${tipo} in ${year}: SdI refuses a duplicate invoice (00404)`,
  };
}

/** SdI's duplicate key of a document (00404): its TipoDocumento, the year of its Data, its Numero. */
const issuedDocumentKey = (tipo: string, year: string, number: string): string => `${tipo} ${year} ${number}`;

/**
 * Where an issued number is unique: SdI's key is the cedente's (its IdFiscaleIVA, the
 * partita IVA), so every location of one partita IVA in the account shares it. The partita
 * IVA is the config's (`resolvePartitaIva` stores it there, equal to `tax_id` when that is
 * given; build.ts writes it as IdFiscaleIVA): a location with no `tax_id` shares it too
 * (migration 0054 moved what such locations registered under their own id before).
 */
const issuerScope = (location: LocationForFiscal): string =>
  `it-sdi:${location.account_id}:${configString(location.config, 'partita_iva') ?? location.tax_id ?? location.id}`;

/** The invoices a refund or void may correct: every type a request may name but the credit note. */
const INVOICE_TIPI: readonly string[] = TIPI_DOCUMENTO.filter((t) => t !== 'TD04');

/**
 * FiscalSystem.correctedSale: a refund or void of a fattura semplificata (TD07) is the
 * nota di credito semplificata (TD08) without the client asking for it (docs/decisions.md
 * "Italy SDI: a refund of a TD07 is a TD08 without the override"). The request names the
 * invoice by `original_invoice_number`, with or without `original_invoice_date`; the core
 * looks the number up among the ones this issuer issued (`sdiIssuedDocument`'s register:
 * type, year, number), at any location of the account with the refund's partita IVA
 * (`issuerScope`: SdI numbers an issuer's invoices per partita IVA, not per shop). The
 * refund becomes the TD08 that `tipo_documento: TD07` would have asked for, built by the
 * same rules (`validateSdiTransaction`), NumeroFR and DataFR as the TD07 holds them, when:
 * - the request names no `tipo_documento` (one it names wins, TD04 included);
 * - exactly one invoice stands under that number (and date, when named), and it is a TD07
 *   (a TD01 under the same number too: which one it corrects is unclear, and the ordinary
 *   credit note corrects either). Without a date every year is read (by the register's
 *   alias, the bare number): SdI numbers may restart each year, so a number alone is
 *   ambiguous when two invoices of different years hold it, and the refund stays TD04;
 * - the refund can be simplified (`semplificataRefusal`: not FPA12, no N6.x/N7/N3.2 line),
 *   and is not dated before the TD07 (SdI 00418); otherwise it is the ordinary TD04, as
 *   art. 21-bis allows and as a TD07's cancellation does.
 */
export const sdiCorrectedSale: CorrectedSaleLookup = {
  named({ tx, request, location }) {
    if (tx.type === 'sale' || requestedTipo(request.metadata) !== undefined) return null;
    const number = tx.metadata.original_invoice_number;
    const date = tx.metadata.original_invoice_date;
    if (tx.metadata.tipo_documento !== 'TD04' || typeof number !== 'string') return null;
    if (typeof date !== 'string') return { scope: issuerScope(location), documents: [], alias: number };
    const year = date.slice(0, 4);
    return { scope: issuerScope(location), documents: INVOICE_TIPI.map((tipo) => issuedDocumentKey(tipo, year, number)) };
  },
  resolve({ tx, request, ctx }, sales) {
    const number = tx.metadata.original_invoice_number;
    const date = tx.metadata.original_invoice_date;
    const named = sales.filter(
      (s) => s.tx.type === 'sale' && s.tx.metadata.invoice_number === number && (date === undefined || s.tx.metadata.invoice_date === date),
    );
    const [sale] = named;
    if (named.length !== 1 || sale!.tx.metadata.tipo_documento !== 'TD07') return tx.metadata;
    const saleDate = sale!.tx.metadata.invoice_date;
    if (typeof saleDate !== 'string' || saleDate > String(tx.metadata.invoice_date)) return tx.metadata;
    if (semplificataRefusal(tx, ctx, 'TD08') !== null) return tx.metadata;
    // What the request would have said asking for the simplified form, the invoice named as the sale holds it.
    const metadata = {
      ...request.metadata,
      tipo_documento: 'TD07',
      original_invoice_number: sale!.tx.metadata.invoice_number,
      original_invoice_date: saleDate,
    };
    return validateSdiTransaction({ ...request, metadata }, ctx);
  },
};
