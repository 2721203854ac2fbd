/**
 * VERI*FACTU records (FORMATS.md §2; SuministroInformacion.xsd): a `RegistroAlta` per
 * invoice and, for a cancellation, a `RegistroAnulacion`, both links of the issuer's
 * hash chain (huella). The record XML is the stored fiscal record; `submit` wraps it in
 * the SOAP request (soap.ts). The fiscal id is the CSV that AEAT returns, so it is null.
 */
import { conflict } from '../../core/errors.ts';
import type { BuildInput, FiscalRecord, TransactionDraft, TxLine } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { dmyDate, localDate, localDateTimeWithOffset } from '../shared/dates.ts';
import { customerTaxId, metaString } from '../shared/metadata-fields.ts';
import { MISSING_TAX_ID, issuerTaxId } from '../shared/issuer-tax-id.ts';
import { configString } from '../shared/config-fields.ts';
import { qrUrlHint, textHint } from '../shared/render-hints.ts';
import { type AnyExemptionCode, anyExemptionCodeOf, exemptionLegendFor } from '../es/exemption.ts';
import { givenCountry } from '../es/party.ts';
import { type SpanishTax, taxOf } from '../es/tax.ts';
import { breakdownGroups } from '../es/surcharge.ts';
import { type SpanishVatRegime, vatRegimeOf } from '../es/regime.ts';
import { replacedInvoicesOf } from '../es/replacement.ts';
import { operationDateHints, operationDateOf } from '../es/operation-date.ts';
import { NAMES_CUSTOMER, seriesOf } from './metadata.ts';
import { verifactuQrUrl } from './qr.ts';
import { isMacrodato } from './amount-limits.ts';
import { customerId, partyId } from './party-id.ts';
import {
  registroAltaXml,
  registroAnulacionXml,
  type DesgloseLine,
  type Encadenamiento,
  type InvoiceId,
  type Party,
  type SistemaInformatico,
} from './xml.ts';

/** `NumSerieFactura` is one field: our series and number joined by `-` (`A-42`). */
export const numSerieOf = (series: string, number: string): string => `${series}-${number}`;

/*
 * IdSistemaInformatico: a two-character code the producer gives each of its billing
 * systems (SistemaInformaticoType, TextMax2Type; AEAT error 1177 when malformed). This
 * service is one system.
 */
export const ID_SISTEMA_INFORMATICO = '01';

export function buildVerifactu(input: BuildInput): FiscalRecord {
  return input.kind === 'cancellation' ? buildAnulacion(input) : buildAlta(input);
}

/** Truncates to `max` characters (code points, as XSD maxLength counts them). */
const clip = (text: string, max: number): string => {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
};

/** Control characters XML cannot carry become spaces (free text from the request). */
const printable = (text: string): string => text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, ' ');

/**
 * The issuer NIF as the record writes it. A location may exist without a tax_id to try the
 * sandbox; its test records name the placeholder NIF. Live transactions of such a location
 * are refused at creation (metadata.ts), and the client never sends the placeholder live.
 */
const issuerNif = (input: BuildInput): string => issuerTaxId(input) ?? MISSING_TAX_ID;

/** NombreRazon of the obligated issuer (TextMax120Type): the configured legal name. */
export const issuerName = (input: Pick<BuildInput, 'location'>): string =>
  nombreRazon(configString(input.location.config, 'legal_name') ?? input.location.name);

/** A name as a NombreRazon (TextMax120Type): printable, at most 120 characters. */
export const nombreRazon = (name: string): string => clip(printable(name), 120);

/**
 * SistemaInformatico (FORMATS.md §2; Orden HAC/1177/2024 art. 12): the producer is named
 * by `country_config.software_nif` (required for verifactu); the installation by
 * `installation_number`, else the location id, which is unique per installation of this
 * service. This service only works in VERI*FACTU mode and serves many taxpayers.
 */
export function sistemaInformatico(input: Pick<BuildInput, 'location' | 'software'>): SistemaInformatico {
  const { config } = input.location;
  const producerNif = configString(config, 'software_nif') ?? input.software.vendorTaxId;
  return {
    // SoftwareIdentity has no producer legal name: the software name stands in for it.
    producer: { nombreRazon: clip(printable(input.software.name), 120), id: partyId(producerNif || MISSING_TAX_ID) },
    NombreSistemaInformatico: clip(printable(input.software.name), 30),
    IdSistemaInformatico: ID_SISTEMA_INFORMATICO,
    Version: clip(input.software.version, 50),
    NumeroInstalacion: clip(configString(config, 'installation_number') ?? input.location.id, 100),
    TipoUsoPosibleSoloVerifactu: 'S',
    TipoUsoPosibleMultiOT: 'S',
    IndicadorMultiplesOT: 'S',
  };
}

/**
 * The previous link of the chain (FORMATS.md §2.4): its huella and its invoice id, which
 * the previous record left as `linkData`. Without linkData (a core that does not keep it)
 * the issuer NIF and the previous issue date are known (the chain is per issuer) but not
 * its number; AEAT then refuses the record (1175) rather than us inventing a number.
 */
function previousLink(input: BuildInput, nif: string): Encadenamiento {
  const prev = input.chain.previous;
  if (prev === null || prev.fingerprint === null) return null;
  const link = prev.linkData ?? {};
  return {
    IDEmisorFactura: link.IDEmisorFactura ?? nif,
    NumSerieFactura: link.NumSerieFactura ?? '',
    FechaExpedicionFactura: link.FechaExpedicionFactura ?? issueDateOf(prev.issuedAt),
    Huella: prev.fingerprint,
  };
}

/** DD-MM-YYYY of an ISO instant, in Madrid; '' when the instant is unreadable. */
function issueDateOf(iso: string): string {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? '' : dmyDate(localDate(at, 'ES'));
}

const linkDataOf = (id: InvoiceId): Record<string, string> => ({
  IDEmisorFactura: id.IDEmisorFactura,
  NumSerieFactura: id.NumSerieFactura,
  FechaExpedicionFactura: id.FechaExpedicionFactura,
});

/** Tipo2.2Type: the rate in percent with two decimals (`21.00`, `5.50`). */
const rateText = (rate: number): string => decimal(Math.round(rate * 100));

/** `Impuesto` (ImpuestoType, AEAT list L1) of the location's tax (../es/tax.ts). */
const IMPUESTO: Readonly<Record<SpanishTax, string>> = { iva: '01', ipsi: '02', igic: '03' };

/**
 * IPSI's `ClaveRegimen` (Ceuta, Melilla): 01. AEAT's validation document (§15.6 of the
 * VERI*FACTU "Validaciones y errores", revision of November 2025) asks for one of 01, 08,
 * 11, 18, 19, 20 with `Impuesto` 02: without it a record is "Aceptada con errores" until
 * 31-12-2026 and rejected from 01-01-2027. Until that revision AEAT 1245 asked for it with
 * IVA and IGIC only, and session 21 wrote none. 01 (general regime) is the only one of those
 * keys this service's IPSI sales can be: no surcharge or special regime is taken with IPSI
 * (../es/surcharge.ts, ../es/regime.ts), and 08, 11 and 19 name other operations.
 */
const IPSI_REGIME = '01';

/**
 * `ClaveRegimen` of the exempt detail. IPSI: 01 (`IPSI_REGIME`; its list has no 02, and
 * AEAT 1199 below names IVA and IGIC only). IVA and IGIC: 02 "Exportación" for an export (E2) or an operation
 * treated as one (E3), since AEAT refuses E2 and E3 under 01 (error 1199: "Si Impuesto es
 * '01' (IVA), '03' (IGIC) o no se cumplimenta y ClaveRegimen es 01 no pueden marcarse la
 * OperacionExenta E2, E3", as reported in josemmo/Verifactu-PHP issue 55, where 02 was
 * accepted; Odoo's l10n_es_edi_verifactu sets 02 for E2 the same way); 01 otherwise. Key 02
 * is in both lists (L8A for IVA, L8B for IGIC).
 */
function exemptRegime(exemption: AnyExemptionCode, tax: SpanishTax): string {
  if (tax === 'ipsi') return IPSI_REGIME;
  return exemption === 'E2' || exemption === 'E3' ? '02' : '01';
}

/**
 * `ClaveRegimen` of a taxed (S1) detail. The issuer's own regime (../es/regime.ts) first:
 * 18 "Recargo de equivalencia" for a retailer in that regime, 20 "Régimen simplificado"
 * (AEAT list L8A, the keys of the regime the issuer's operation falls under, as in the SII's
 * ClaveRegimenEspecialOTrascendencia). AEAT's validation document accepts 18 without the
 * surcharge fields since its November 2025 revision (mdiago/VeriFactu issue 210: the rule
 * "ClaveRegimen 18 ⇒ TipoRecargoEquivalencia and CuotaRecargoEquivalencia required, and
 * only with 18" was withdrawn), and has no rule for 20 with IVA; Odoo's l10n_es_edi_verifactu
 * writes 20 for a company in the simplified regime. A general-regime issuer: 18 for a line
 * carrying the surcharge it charges a retailer (session 21; see docs/decisions.md: contested,
 * kept), else 01. IPSI: `IPSI_REGIME`.
 */
function taxedRegime(regime: SpanishVatRegime, surcharged: boolean): string {
  if (regime === 'recargo_equivalencia') return '18';
  if (regime === 'simplified') return '20';
  return surcharged ? '18' : '01';
}

/**
 * One DetalleDesglose per tax rate (and recargo de equivalencia rate), in the order they
 * first appear: the location's tax (`Impuesto` 01 IVA, 03 IGIC, 02 IPSI: ../es/tax.ts),
 * general regime (`ClaveRegimen` 01), subject and not exempt (S1). When the transaction
 * names an exemption cause its 0 % lines are one exempt detail instead (OperacionExenta, no
 * rate or quota: ../es/exemption.ts). A detail of surcharged lines (../es/surcharge.ts)
 * carries `TipoRecargoEquivalencia` and `CuotaRecargoEquivalencia` under `ClaveRegimen` 18
 * ("recargo de equivalencia", list L8A; as invopop/gobl's VERI*FACTU addon sets it for a
 * surcharged rate); CuotaTotal and ImporteTotal count the surcharge (AEAT 1216 and 1210:
 * they are checked against quota plus surcharge). IPSI: ClaveRegimen 01 (`IPSI_REGIME`).
 * A corrective invoice "by differences"
 * (TipoRectificativa I) carries the amounts it takes off, so they are negative.
 */
function desglose(items: TxLine[], sign: 1 | -1, exemption: AnyExemptionCode | undefined, tax: SpanishTax, regime: SpanishVatRegime = 'general'): { lines: DesgloseLine[]; cuota: number; total: number } {
  let cuota = 0;
  let total = 0;
  const impuesto = IMPUESTO[tax];
  const lines = breakdownGroups(items).map((g): DesgloseLine => {
    cuota += sign * (g.tax + g.surcharge);
    total += sign * (g.base + g.tax + g.surcharge);
    if (exemption !== undefined && g.rate === 0 && g.surchargeRate === undefined) {
      return { Impuesto: impuesto, ClaveRegimen: exemptRegime(exemption, tax), OperacionExenta: exemption, BaseImponibleOimporteNoSujeto: decimal(sign * g.base) };
    }
    const surcharged = g.surchargeRate !== undefined;
    return {
      Impuesto: impuesto,
      ClaveRegimen: tax === 'ipsi' ? IPSI_REGIME : taxedRegime(regime, surcharged),
      CalificacionOperacion: 'S1',
      TipoImpositivo: rateText(g.rate),
      BaseImponibleOimporteNoSujeto: decimal(sign * g.base),
      CuotaRepercutida: decimal(sign * g.tax),
      ...(surcharged ? { TipoRecargoEquivalencia: rateText(g.surchargeRate!), CuotaRecargoEquivalencia: decimal(sign * g.surcharge) } : {}),
    };
  });
  return { lines, cuota, total };
}

/** DescripcionOperacion (TextMax500Type, mandatory): metadata.description, else the lines. */
function description(tx: TransactionDraft): string {
  const given = metaString(tx, 'description');
  const text = given ?? tx.items.map((l) => l.description.trim()).filter((d) => d !== '').join(', ');
  const fallback = tx.type === 'sale' ? 'Venta' : 'Devolución';
  return clip(printable(text).trim() || fallback, 500);
}

/**
 * The DescripcionOperacion the request gave (metadata.description), as `description` writes
 * it; undefined where the record's is made from the lines (the receipt prints those already).
 */
export function givenDescription(tx: TransactionDraft): string | undefined {
  const given = metaString(tx, 'description');
  const text = given === undefined ? '' : printable(given).trim();
  return text === '' ? undefined : clip(text, 500);
}

/** The customer (IDDestinatario), for the types that name one (also what the receipt prints: receipt.ts). */
export function destinatario(tx: TransactionDraft): Party | undefined {
  const taxId = customerTaxId(tx);
  if (taxId === undefined) return undefined;
  const ctx = tx.customer_context ?? {};
  const named = [ctx.name, ctx.legal_name].find((v): v is string => typeof v === 'string' && v.trim() !== '');
  // NombreRazon is mandatory; without a name the tax id stands in (AEAT checks the NIF).
  return { nombreRazon: clip(printable(named?.trim() ?? taxId), 120), id: customerId(taxId, givenCountry(ctx)) };
}

const CORRECTIVE = new Set(['R1', 'R2', 'R3', 'R4', 'R5']);

/**
 * An invoice number issued again after AEAT refused its earlier record (the core lets a
 * refused number be used again: `BuildInput.earlierIssues`) goes as an "alta por rechazo":
 * `Subsanacion` S, `RechazoPrevio` X. AEAT's record design ("Diseño de registro de
 * facturación", the operations table: alta inicial N/N, subsanación S/N, alta por rechazo
 * S/X, alta por rechazo de una subsanación S/S) and SuministroInformacion.xsd
 * RechazoPrevioType X: "el registro de facturación no existe en la AEAT". X needs
 * Subsanacion S (AEAT 1153). None of the earlier records stands, so AEAT holds none of them:
 * X, never S. Only when an earlier one had this very IDFactura (same NumSerieFactura and
 * Madrid issue date: AEAT keys invoices by issuer, number and date); a number issued again
 * on another day is another invoice for AEAT, a plain alta. A record whose retries ran out
 * counts too: X says "whether or not AEAT refused it, it does not hold it".
 */
function reissueFlags(input: BuildInput, id: InvoiceId): { Subsanacion?: 'S'; RechazoPrevio?: 'X' } {
  const again = (input.earlierIssues ?? []).some((e) =>
    (e.documentNumber === null || e.documentNumber === id.NumSerieFactura) && issueDateOf(e.issuedAt) === id.FechaExpedicionFactura);
  return again ? { Subsanacion: 'S', RechazoPrevio: 'X' } : {};
}

/**
 * What makes an alta a subsanación of a record AEAT holds (correction.ts): its IDFactura,
 * its issuer's NombreRazonEmisor as the corrected record wrote it, and its flags.
 */
export interface AltaAs {
  id: InvoiceId;
  issuerName: string;
  flags: { Subsanacion: 'S'; RechazoPrevio?: 'S' | undefined };
}

export function buildAlta(input: BuildInput, as?: AltaAs): FiscalRecord {
  const { tx } = input;
  const nif = issuerNif(input);
  const series = seriesOf(tx);
  const number = metaString(tx, 'invoice_number') ?? String(input.chain.number ?? input.chain.seq);
  const id: InvoiceId = as?.id ?? {
    IDEmisorFactura: nif,
    NumSerieFactura: numSerieOf(series, number),
    FechaExpedicionFactura: dmyDate(localDate(input.now, 'ES')),
  };
  const tipo = metaString(tx, 'invoice_type') ?? 'F2';
  const corrective = CORRECTIVE.has(tipo);
  const exemption = anyExemptionCodeOf(tx);
  const tax = taxOf(input.location);
  const { lines, cuota, total } = desglose(tx.items, corrective ? -1 : 1, exemption, tax, vatRegimeOf(input.location));
  const customer = NAMES_CUSTOMER.has(tipo) ? destinatario(tx) : undefined;
  const rectified = corrective ? rectifiedInvoice(input, nif) : undefined;
  // An F3 names the simplified invoices it replaces, issued by the same issuer (../es/replacement.ts).
  const replaced = tipo === 'F3'
    ? replacedInvoicesOf(tx).map((r): InvoiceId => ({ IDEmisorFactura: nif, NumSerieFactura: r.number, FechaExpedicionFactura: r.issue_date }))
    : undefined;
  // The operation's own day, against the invoice's issue date (a subsanación's is the original's).
  const operationDate = operationDateOf(tx, id.FechaExpedicionFactura);
  const { xml, huella } = registroAltaXml({
    id,
    NombreRazonEmisor: as?.issuerName ?? issuerName(input),
    ...(as?.flags ?? reissueFlags(input, id)),
    TipoFactura: tipo,
    TipoRectificativa: corrective ? 'I' : undefined,
    FacturasRectificadas: rectified ? [rectified] : undefined,
    FacturasSustituidas: replaced,
    FechaOperacion: operationDate ?? undefined,
    DescripcionOperacion: description(tx),
    // 100,000,000.00 EUR or more: AEAT refuses the record without it (1139; amount-limits.ts).
    Macrodato: isMacrodato(total) ? 'S' : undefined,
    Destinatarios: customer ? [customer] : undefined,
    Desglose: lines,
    CuotaTotal: decimal(cuota),
    ImporteTotal: decimal(total),
    previous: previousLink(input, nif),
    sistema: sistemaInformatico(input),
    FechaHoraHusoGenRegistro: localDateTimeWithOffset(input.now, 'ES'),
  });
  // The QR names the invoice as the record does (FORMATS.md §2.6: importe = ImporteTotal).
  const qr = verifactuQrUrl(input.environment, {
    nif,
    numSerie: id.NumSerieFactura,
    fecha: id.FechaExpedicionFactura,
    importe: decimal(total),
  });
  return {
    body: xml,
    contentType: 'application/xml',
    fiscalId: null,
    documentNumber: id.NumSerieFactura,
    fingerprint: huella,
    linkData: linkDataOf(id),
    qrData: qr,
    placeholder: false,
    // Print rules (AEAT QR specification, as implementations cite it): "QR tributario:"
    // above the code, and the "VERI*FACTU" legend next to it.
    // An exempt operation names its legal ground on the invoice (RD 1619/2012 art. 6.1.j).
    renderHints: [
      ...operationDateHints(operationDate),
      ...(exemption === undefined ? [] : [textHint('exemption', 'body', exemptionLegendFor(exemption, tax))]),
      textHint('qr_label', 'footer_bottom', 'QR tributario:'),
      qrUrlHint('qr', 'footer_bottom', qr),
      textHint('verifactu_legend', 'footer_bottom', 'VERI*FACTU'),
    ],
  };
}

/**
 * The invoice a corrective one corrects (FacturasRectificadas): the original record when
 * the core hands one, else metadata original_invoice_number / original_issue_date.
 * Unknown → left out (the block is optional in the schema).
 */
function rectifiedInvoice(input: BuildInput, nif: string): InvoiceId | undefined {
  const o = input.original;
  if (o?.documentNumber) {
    return { IDEmisorFactura: nif, NumSerieFactura: o.documentNumber, FechaExpedicionFactura: issueDateOf(o.issuedAt) };
  }
  const number = metaString(input.tx, 'original_invoice_number');
  const date = metaString(input.tx, 'original_issue_date');
  return number !== undefined && date !== undefined ? { IDEmisorFactura: nif, NumSerieFactura: number, FechaExpedicionFactura: date } : undefined;
}

/** RegistroAnulacion: names the cancelled invoice and is chained like an alta (FORMATS §2.2, §2.4). */
function buildAnulacion(input: BuildInput): FiscalRecord {
  const nif = issuerNif(input);
  const original = input.original;
  const documentNumber = original?.documentNumber;
  if (original === undefined || documentNumber === null || documentNumber === undefined || documentNumber === '') {
    // NumSerieFacturaAnulada is mandatory (TextoIDFacturaType, 1-60 characters).
    throw conflict('the cancelled transaction has no VERI*FACTU invoice number to annul');
  }
  const id: InvoiceId = {
    IDEmisorFactura: nif,
    NumSerieFactura: documentNumber,
    FechaExpedicionFactura: issueDateOf(original.issuedAt),
  };
  const { xml, huella } = registroAnulacionXml({
    id,
    previous: previousLink(input, nif),
    sistema: sistemaInformatico(input),
    FechaHoraHusoGenRegistro: localDateTimeWithOffset(input.now, 'ES'),
  });
  return {
    body: xml,
    contentType: 'application/xml',
    fiscalId: null,
    documentNumber: null,
    fingerprint: huella,
    // The next record's RegistroAnterior names this record by the invoice it annuls.
    linkData: linkDataOf(id),
    qrData: null,
    placeholder: false,
    renderHints: [],
  };
}
