/**
 * The TicketBAI documents, unsigned: `TicketBai` (ticketbaiv1-2-2.xsd, an invoice) and
 * `AnulaTicketBai` (anula_ticketbaiv1-2-2.xsd, its cancellation), in schema order.
 *
 * They are written already in canonical form (inclusive C14N 1.0) with ../../xml/escape.ts:
 * no XML declaration, no whitespace between elements, no self-closing tags, and every
 * namespace declared on the root, the signature's `ds` and `xades` included
 * (../../signing/namespaces.ts). So the XAdES signer digests these very bytes.
 *
 * Only the root is namespaced (`T:`): the schemas leave `elementFormDefault` unset, so
 * their local elements are unqualified, as in the official samples.
 */
import type { BuildInput, TransactionDraft } from '../types.ts';
import { el, optEl } from '../../xml/escape.ts';
import { signableRootStartTag } from '../../signing/namespaces.ts';
import { decimal } from '../shared/amounts.ts';
import { dmyDate, isDmyDate, localDate, localDateTimeWithOffset } from '../shared/dates.ts';
import { customerTaxId, metaString } from '../shared/metadata-fields.ts';
import { configString } from '../shared/config-fields.ts';
import { readSpanishInvoiceType, type SpanishInvoiceType } from '../es/invoice.ts';
import { replacedInvoicesOf } from '../es/replacement.ts';
import { type ExemptionCode, exemptBase, exemptionCodeOf, taxedLines } from '../es/exemption.ts';
import { NIF_SHAPE, seriesOf } from './metadata.ts';
import { breakdownGroups } from '../es/surcharge.ts';
import { type SpanishVatRegime, vatRegimeOf } from '../es/regime.ts';
import { foreignPartyId, givenCountry } from '../es/party.ts';
import { type DetalleAmounts, detalleAmounts } from './quota.ts';
import { customerAddressOf, firstText } from '../es/customer-address.ts';
// FechaOperacion: the stored operation_date when another day than the issue (../es/operation-date.ts).
import { operationDateOf } from '../es/operation-date.ts';

export const NS_EMISION = 'urn:ticketbai:emision';
export const NS_ANULACION = 'urn:ticketbai:anulacion';
/** `IDVersionTBAI`: the only value the 1.2.x schemas allow. */
export const TBAI_VERSION = '1.2';

// ---- the documents' facts --------------------------------------------------------

/** An invoice as the chain and the cancellation name it (IDFacturaRectificadaSustituidaType and kin). */
export interface InvoiceRef {
  series: string | null;
  number: string;
  /** DD-MM-YYYY. */
  date: string;
}

export type CustomerId = { nif: string } | { idOtro: { country: string | null; idType: string; id: string } };

export interface Customer {
  id: CustomerId;
  name: string;
  postalCode: string | null;
  address: string | null;
}

export interface InvoiceLine {
  description: string;
  quantity: string;
  unitPrice: string;
  /** Line total, VAT included (the samples: (200 - 20) × 1.21 = 217.80). */
  total: string;
}

/** One `DetalleIVA`: a rate with its base and quota, and the recargo de equivalencia it carries. */
export interface VatDetail {
  base: string;
  rate: string;
  quota: string;
  /** TipoRecargoEquivalencia and CuotaRecargoEquivalencia (../es/surcharge.ts), when the lines carry one. */
  surcharge?: { rate: string; quota: string } | undefined;
}

export interface SoftwareFields {
  license: string;
  developerNif: string;
  name: string;
  version: string;
}

export interface InvoiceFields {
  issuer: { nif: string; name: string };
  customer: Customer | null;
  invoice: InvoiceRef;
  /** `FechaOperacion` (DD-MM-YYYY) when the operation took place on another day than the issue; else null. */
  operationDate: string | null;
  /** HH:MM:SS, local. */
  time: string;
  simplified: boolean;
  corrective: { code: SpanishInvoiceType; type: 'S' | 'I'; rectified: InvoiceRef[] } | null;
  /**
   * An F3 (../es/replacement.ts): the simplified invoices it is issued in place of
   * (`FacturaEmitidaSustitucionSimplificada` S, each listed in FacturasRectificadasSustituidas,
   * the block that names "facturas rectificadas o sustituidas"); null for any other invoice.
   */
  replaces: InvoiceRef[] | null;
  description: string;
  lines: InvoiceLine[];
  total: string;
  /** `Claves/IDClave/ClaveRegimenIvaOpTrascendencia`, one to three. */
  regimeKeys: string[];
  /**
   * `OperacionEnRecargoDeEquivalenciaORegimenSimplificado` of every DetalleIVA: S when the
   * issuer is in recargo de equivalencia or the simplified regime (../es/regime.ts).
   */
  specialRegime: boolean;
  /** `DesgloseTipoOperacion/Entrega` instead of `DesgloseFactura` (foreign customer). */
  byOperation: boolean;
  /** The taxed (S1) breakdown, per rate; empty when every line is exempt. */
  vat: VatDetail[];
  /** The exempt lines' base and cause (../es/exemption.ts), or null. */
  exempt: { cause: ExemptionCode; base: string } | null;
  previous: (InvoiceRef & { signatureExcerpt: string }) | null;
  software: SoftwareFields;
}

// ---- writing -------------------------------------------------------------------------

const wrap = (name: string, inner: string): string => `<${name}>${inner}</${name}>`;

const emisorXml = (issuer: { nif: string; name: string }): string =>
  wrap('Emisor', el('NIF', issuer.nif) + el('ApellidosNombreRazonSocial', issuer.name));

function destinatarioXml(c: Customer): string {
  const id =
    'nif' in c.id
      ? el('NIF', c.id.nif)
      : wrap('IDOtro', optEl('CodigoPais', c.id.idOtro.country) + el('IDType', c.id.idOtro.idType) + el('ID', c.id.idOtro.id));
  return wrap(
    'IDDestinatario',
    id + el('ApellidosNombreRazonSocial', c.name) + optEl('CodigoPostal', c.postalCode) + optEl('Direccion', c.address),
  );
}

const invoiceRefXml = (r: InvoiceRef): string =>
  optEl('SerieFactura', r.series) + el('NumFactura', r.number) + el('FechaExpedicionFactura', r.date);

const softwareXml = (s: SoftwareFields): string =>
  wrap(
    'Software',
    el('LicenciaTBAI', s.license) + wrap('EntidadDesarrolladora', el('NIF', s.developerNif)) + el('Nombre', s.name) + el('Version', s.version),
  );

function desgloseXml(f: InvoiceFields): string {
  const detalles = f.vat
    .map((v) =>
      wrap(
        'DetalleIVA',
        el('BaseImponible', v.base) +
          el('TipoImpositivo', v.rate) +
          el('CuotaImpuesto', v.quota) +
          (v.surcharge === undefined ? '' : el('TipoRecargoEquivalencia', v.surcharge.rate) + el('CuotaRecargoEquivalencia', v.surcharge.quota)) +
          // S when the issuer itself is a retailer in recargo de equivalencia or in the
          // simplified regime (the field says "factura expedida por un o una contribuyente en
          // régimen simplificado o en régimen de recargo de equivalencia"), else N; a
          // surcharge charged to the customer is the two fields above, whatever the issuer's
          // regime (as invopop/gobl.ticketbai writes it).
          el('OperacionEnRecargoDeEquivalenciaORegimenSimplificado', f.specialRegime ? 'S' : 'N'),
      ),
    )
    .join('');
  // Exempt lines first (SujetaType: Exenta, then NoExenta), then S1: subject and not
  // exempt, no reverse charge (TipoOperacionSujetaNoExentaType).
  const exenta = f.exempt === null ? '' : wrap('Exenta', wrap('DetalleExenta', el('CausaExencion', f.exempt.cause) + el('BaseImponible', f.exempt.base)));
  const noExenta = f.vat.length === 0 ? '' : wrap('NoExenta', wrap('DetalleNoExenta', el('TipoNoExenta', 'S1') + wrap('DesgloseIVA', detalles)));
  const sujeta = wrap('Sujeta', exenta + noExenta);
  return wrap('TipoDesglose', f.byOperation ? wrap('DesgloseTipoOperacion', wrap('Entrega', sujeta)) : wrap('DesgloseFactura', sujeta));
}

/** The unsigned `T:TicketBai` (ticketbaiv1-2-2.xsd), canonical. */
export function ticketBaiXml(f: InvoiceFields): string {
  const destinatarios = f.customer === null ? '' : wrap('Destinatarios', destinatarioXml(f.customer));
  const sustituidas =
    f.replaces === null || f.replaces.length === 0
      ? ''
      : wrap('FacturasRectificadasSustituidas', f.replaces.map((r) => wrap('IDFacturaRectificadaSustituida', invoiceRefXml(r))).join(''));
  const rectificativa =
    f.corrective === null
      ? sustituidas
      : wrap('FacturaRectificativa', el('Codigo', f.corrective.code) + el('Tipo', f.corrective.type)) +
        (f.corrective.rectified.length === 0
          ? ''
          : wrap(
              'FacturasRectificadasSustituidas',
              f.corrective.rectified.map((r) => wrap('IDFacturaRectificadaSustituida', invoiceRefXml(r))).join(''),
            ));
  const cabecera = wrap(
    'CabeceraFactura',
    invoiceRefXml(f.invoice) +
      el('HoraExpedicionFactura', f.time) +
      el('FacturaSimplificada', f.simplified ? 'S' : 'N') +
      el('FacturaEmitidaSustitucionSimplificada', f.replaces === null ? 'N' : 'S') +
      rectificativa,
  );
  const detalles = f.lines
    .map((l) =>
      wrap('IDDetalleFactura', el('DescripcionDetalle', l.description) + el('Cantidad', l.quantity) + el('ImporteUnitario', l.unitPrice) + el('ImporteTotal', l.total)),
    )
    .join('');
  const datos = wrap(
    'DatosFactura',
    // DatosFacturaType: FechaOperacion first, before DescripcionFactura.
    optEl('FechaOperacion', f.operationDate) +
      el('DescripcionFactura', f.description) +
      wrap('DetallesFactura', detalles) +
      el('ImporteTotalFactura', f.total) +
      wrap('Claves', f.regimeKeys.map((k) => wrap('IDClave', el('ClaveRegimenIvaOpTrascendencia', k))).join('')),
  );
  const encadenamiento =
    f.previous === null
      ? ''
      : wrap(
          'EncadenamientoFacturaAnterior',
          optEl('SerieFacturaAnterior', f.previous.series) +
            el('NumFacturaAnterior', f.previous.number) +
            el('FechaExpedicionFacturaAnterior', f.previous.date) +
            el('SignatureValueFirmaFacturaAnterior', f.previous.signatureExcerpt),
        );
  return (
    signableRootStartTag('T:TicketBai', { T: NS_EMISION }) +
    wrap('Cabecera', el('IDVersionTBAI', TBAI_VERSION)) +
    wrap('Sujetos', emisorXml(f.issuer) + destinatarios + el('VariosDestinatarios', 'N') + el('EmitidaPorTercerosODestinatario', 'N')) +
    wrap('Factura', cabecera + datos + desgloseXml(f)) +
    wrap('HuellaTBAI', encadenamiento + softwareXml(f.software)) +
    '</T:TicketBai>'
  );
}

export interface AnnulmentFields {
  issuer: { nif: string; name: string };
  invoice: InvoiceRef;
  software: SoftwareFields;
}

/** The unsigned `T:AnulaTicketBai` (anula_ticketbaiv1-2-2.xsd), canonical. */
export function anulaTicketBaiXml(f: AnnulmentFields): string {
  return (
    signableRootStartTag('T:AnulaTicketBai', { T: NS_ANULACION }) +
    wrap('Cabecera', el('IDVersionTBAI', TBAI_VERSION)) +
    wrap('IDFactura', emisorXml(f.issuer) + wrap('CabeceraFactura', invoiceRefXml(f.invoice))) +
    wrap('HuellaTBAI', softwareXml(f.software)) +
    '</T:AnulaTicketBai>'
  );
}

// ---- from the build input -----------------------------------------------------------

/**
 * `SignatureValueFirmaFacturaAnterior`: the first 100 characters of the previous
 * invoice's SignatureValue (TicketBAI spec v1.1; FORMATS.md §1.5, checked on the official
 * samples 01 → 02).
 */
export const signatureExcerpt = (signatureValue: string): string => signatureValue.slice(0, 100);

/** At most `max` characters (XSD maxLength counts characters, i.e. code points). */
function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
}

/** Cantidad (ImporteSgn12.8Type): the request allows 6 decimals; at least 2 are written. */
export function quantityText(q: number): string {
  const fixed = q.toFixed(6).replace(/0+$/, '');
  return fixed.endsWith('.') ? `${fixed}00` : fixed.split('.')[1]!.length < 2 ? `${fixed}0` : fixed;
}

/** TipoImpositivo (Tipo3.2Type: up to 3 digits, 2 decimals). */
function rateText(rate: number): string {
  const text = rate.toFixed(2);
  if (Number(text) !== rate) throw new Error(`es-ticketbai: tax rate ${rate} has more than 2 decimals`);
  return text;
}

export function issuerOf(input: BuildInput): { nif: string; name: string } {
  const nif = input.location.tax_id?.trim();
  // The TBAI identifier and every record name the issuer by NIF (FORMATS.md §1.1).
  if (nif === undefined || nif === '') throw new Error(`es-ticketbai: location ${input.location.id} has no tax_id; TicketBAI names the issuer by NIF`);
  return { nif, name: clip(configString(input.location.config, 'legal_name') ?? input.location.name, 120) };
}

export function softwareOf(input: BuildInput): SoftwareFields {
  const license = configString(input.location.config, 'tbai_license');
  if (license === undefined) throw new Error(`es-ticketbai: location ${input.location.id} has no tbai_license`);
  return { license, developerNif: input.software.vendorTaxId, name: input.software.name, version: input.software.version };
}



/**
 * The customer, when `customer_context` gives a tax id (`nif` or `tax_id`):
 * - a Spanish NIF (an `ES` VAT prefix dropped), unless `country` names another country;
 * - otherwise `IDOtro` with IDType 02 (NIF-IVA) and CodigoPais: the given `country`, or
 *   the two letters an EU VAT number starts with.
 * `name` (or `legal_name`) is required with the tax id; the address: `customerAddressOf`.
 */
export function customerOf(tx: TransactionDraft): Customer | null {
  const taxId = customerTaxId(tx);
  if (taxId === undefined) return null;
  const ctx = tx.customer_context ?? {};
  const compact = taxId.toUpperCase().replace(/[\s.-]/g, '');
  const country = givenCountry(ctx);
  const nif = compact.startsWith('ES') && NIF_SHAPE.test(compact.slice(2)) ? compact.slice(2) : compact;
  let id: CustomerId;
  if ((country === null || country === 'ES') && NIF_SHAPE.test(nif)) id = { nif };
  else {
    // 02 NIF-IVA for an EU VAT number, 04 for a tax id of a country outside the EU
    // (../es/party.ts); metadata.ts asks for the country when nothing gives it. A stored
    // transaction from before that rule keeps the old reading (02, the prefix's letters).
    const foreign = foreignPartyId(taxId, country);
    const prefix = /^[A-Z]{2}/.exec(compact)?.[0] ?? null;
    id = { idOtro: { country: foreign?.country ?? country ?? prefix, idType: foreign?.idType ?? '02', id: clip(taxId, 20) } };
  }
  // IDDestinatario requires ApellidosNombreRazonSocial, and a full invoice names its
  // customer (RD 1619/2012 art. 6.1.d): metadata.ts refuses a tax id without a name (400),
  // so only a transaction that skipped validation gets here without one.
  const name = firstText(ctx, 'name', 'legal_name');
  if (name === null) throw new Error('es-ticketbai: customer_context gives a tax id but no name; IDDestinatario needs ApellidosNombreRazonSocial');
  const { address, postalCode } = customerAddressOf(ctx);
  return { id, name: clip(name, 120), postalCode: postalCode === null ? null : clip(postalCode, 20), address: address === null ? null : clip(address, 250) };
}

/** The invoice type the validated metadata carries (es/invoice.ts), recomputed if absent. */
export const invoiceTypeOf = (tx: TransactionDraft): SpanishInvoiceType =>
  (metaString(tx, 'invoice_type') as SpanishInvoiceType | undefined) ?? readSpanishInvoiceType(tx, tx.metadata);

/** The invoice a refund corrects, when metadata names it (`original_invoice_number`, `original_issue_date` DD-MM-YYYY, optional `original_series`). */
function rectifiedOf(tx: TransactionDraft): InvoiceRef[] {
  // metadata.ts validates these at the API edge (TextMax20Obligatorio, FechaType); the
  // checks below only keep a record built from older stored metadata inside the schema.
  const number = metaString(tx, 'original_invoice_number')?.trim();
  const date = metaString(tx, 'original_issue_date')?.trim();
  if (!number || date === undefined || !isDmyDate(date) || Array.from(number).length > 20) return [];
  const series = metaString(tx, 'original_series')?.trim();
  return [{ series: series && Array.from(series).length <= 20 ? series : null, number, date }];
}

/** One DetalleIVA as the record writes it, unsigned minor units, beside the lines' own sums. */
export interface TaxedGroup {
  rate: number;
  surchargeRate: number | undefined;
  /** The lines' sums: net (total less tax), tax and surcharge, as the receipt's lines add up. */
  lines: { base: number; tax: number; surcharge: number };
  /** What the record writes (./quota.ts `detalleAmounts`): the same sums, or the paid amount split again. */
  written: DetalleAmounts;
}

/**
 * The taxed lines per DetalleIVA (one per rate and recargo de equivalencia rate: surcharged
 * lines are a DetalleIVA of their own), highest rate first, with the amounts the record
 * writes: each quota within 0.01 of its base × rate (Araba 10-74, 10-77) and base + quotas
 * equal to what the lines charged (./quota.ts). The receipt prints the same (./receipt.ts).
 */
export function taxedGroupsOf(tx: TransactionDraft): TaxedGroup[] {
  return breakdownGroups(taxedLines(tx.items, exemptionCodeOf(tx)))
    .sort((a, b) => b.rate - a.rate)
    .map((g) => ({
      rate: g.rate,
      surchargeRate: g.surchargeRate,
      lines: { base: g.base, tax: g.tax, surcharge: g.surcharge },
      written: detalleAmounts(g.base, g.rate, g.tax, g.surchargeRate, g.surcharge),
    }));
}

/** The DesgloseIVA of the taxed lines, with the record's sign (a rectificativa por diferencias is negative). */
function vatOf(tx: TransactionDraft, sign: 1 | -1): VatDetail[] {
  const groups = taxedGroupsOf(tx);
  // DesgloseIVAType: at most 12 DetalleIVA.
  if (groups.length > 12) throw new Error('es-ticketbai: an invoice carries at most 12 different tax rates');
  return groups.map(({ rate, surchargeRate, written }) => ({
    base: decimal(sign * written.base),
    rate: rateText(rate),
    quota: decimal(sign * written.quota),
    ...(surchargeRate === undefined ? {} : { surcharge: { rate: rateText(surchargeRate), quota: decimal(sign * written.surcharge) } }),
  }));
}

/**
 * `ClaveRegimenIvaOpTrascendencia` (IdOperacionesTrascendenciaTributariaType) follows the
 * issuer's own regime (../es/regime.ts): 51 "Operaciones en recargo de equivalencia" for a
 * retailer in that regime, 52 "Operaciones en régimen simplificado", else 01 (general).
 *
 * A surcharge the issuer charges a retailer does not make the sale a 51: the key names the
 * issuer's regime, and the Haciendas Forales warn on a 51 or 52 without a DetalleIVA whose
 * OperacionEnRecargoDeEquivalenciaORegimenSimplificado is S (business validation 196,
 * reported in OCA/l10n-spain issue 3500). invopop/gobl.ticketbai writes 51 only for a
 * retailer's resale lines and 52 for the simplified scheme; OCA/l10n-spain PR 2919 moved
 * the supplier's "recargo de equivalencia" fiscal position from 51 to 01 for that reason.
 * (Session 21 wrote [01, 51] or [51] for a general-regime issuer's surcharged lines: changed.)
 *
 * An export (E2, Norma Foral del IVA art. 21) or an operation treated as one (E3, art. 22)
 * is keyed 02 "Exportación": Araba refuses E2 or E3 under key 01 alone (validation 10-174),
 * asks for an exempt breakdown with key 02 (10-181) and, with 02 alone, nothing taxed
 * (10-180). So every line exempt: [02]; taxed lines beside: [01, 02], the pair its
 * compatibility table (10-131) allows with 01 first. VERI*FACTU keys the same exemptions 02
 * (AEAT 1199; es-verifactu/build.ts). A special-regime issuer takes no exemption
 * (../es/regime.ts `checkIssuerRegime`).
 */
function regimeKeysOf(regime: SpanishVatRegime, exemption: ExemptionCode | undefined, taxed: boolean): string[] {
  if (regime === 'recargo_equivalencia') return ['51'];
  if (regime === 'simplified') return ['52'];
  if (exemption === 'E2' || exemption === 'E3') return taxed ? ['01', '02'] : ['02'];
  return ['01'];
}

/** The exempt lines as one DetalleExenta (a transaction names one cause), or null. */
function exemptOf(tx: TransactionDraft, sign: 1 | -1): InvoiceFields['exempt'] {
  const code = exemptionCodeOf(tx);
  const base = exemptBase(tx.items, code);
  return code === undefined || base === null ? null : { cause: code, base: decimal(sign * base) };
}

/** What the build input says about the invoice, as the document writes it. */
export function invoiceFields(input: BuildInput, number: string): InvoiceFields {
  const { tx, location } = input;
  const type = invoiceTypeOf(tx);
  const regime = vatRegimeOf(location);
  const corrective = type.startsWith('R');
  // A refund or void is a corrective invoice "por diferencias" (Tipo I): it carries the
  // difference, so its amounts are negative (ImporteSgn12.2Type allows the sign).
  const sign: 1 | -1 = corrective ? -1 : 1;
  const customer = customerOf(tx);
  const previous = input.chain.previous;
  let chained: InvoiceFields['previous'] = null;
  if (previous !== null) {
    const link = previous.linkData;
    if (previous.fingerprint === null || link?.number === undefined || link.date === undefined) {
      throw new Error('es-ticketbai: the previous record of the chain left no SignatureValue, number and date to chain to');
    }
    chained = { series: link.series === undefined || link.series === '' ? null : link.series, number: link.number, date: link.date, signatureExcerpt: signatureExcerpt(previous.fingerprint) };
  }
  const vat = vatOf(tx, sign);
  const description =
    metaString(tx, 'description')?.trim() || tx.items.map((l) => l.description.trim()).filter((d) => d !== '').join(', ');
  const issueDate = dmyDate(localDate(input.now, 'ES'));
  return {
    issuer: issuerOf(input),
    customer,
    invoice: { series: seriesOf(tx, location), number, date: issueDate },
    operationDate: operationDateOf(tx, issueDate),
    time: localDateTimeWithOffset(input.now, 'ES').slice(11, 19),
    simplified: type === 'F2' || type === 'R5',
    corrective: corrective ? { code: type, type: 'I', rectified: rectifiedOf(tx) } : null,
    replaces: type === 'F3' ? replacedInvoicesOf(tx).map((r) => ({ series: r.series ?? null, number: r.number, date: r.issue_date })) : null,
    // TextMax250: the lines' own text is the description when metadata gives none.
    description: clip(description === '' ? 'Venta' : description, 250),
    lines: tx.items.map((l) => ({
      description: clip(l.description, 250),
      quantity: quantityText(l.quantity),
      unitPrice: decimal(sign * l.unit_price),
      total: decimal(sign * l.total_amount),
    })),
    total: decimal(sign * tx.total_amount),
    // 01 general regime (02 for an export), 51 / 52 for an issuer in recargo de equivalencia / the simplified regime.
    regimeKeys: regimeKeysOf(regime, exemptionCodeOf(tx), vat.length > 0),
    specialRegime: regime !== 'general',
    byOperation: customer !== null && 'idOtro' in customer.id,
    vat,
    exempt: exemptOf(tx, sign),
    previous: chained,
    software: softwareOf(input),
  };
}
