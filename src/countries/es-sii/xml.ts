/**
 * The SII 1.1 records of the issued-invoice book (libro registro de facturas expedidas),
 * per AEAT's `SuministroLR.xsd` and `SuministroInformacion.xsd` (shared/schemas/es/sii,
 * IDVersionSii 1.1):
 *
 * - `RegistroLRFacturasEmitidas` (type `siiLR:LRfacturasEmitidasType`): one invoice, sent
 *   inside `SuministroLRFacturasEmitidas` with TipoComunicacion A0 (A1 when it modifies
 *   one AEAT holds: correction.ts);
 * - `RegistroLRBajaExpedidas` (type `siiLR:LRBajaExpedidasType`): the "baja" that removes
 *   an invoice from the book, sent inside `BajaLRFacturasEmitidas`.
 *
 * Namespaces follow the schemas' `elementFormDefault="qualified"`: the elements declared
 * in SuministroLR.xsd (`IDFactura`, `FacturaExpedida`) are in the `siiLR` namespace, the
 * ones of the types they use (SuministroInformacion.xsd: `PeriodoLiquidacion` from
 * `sii:RegistroSii`, everything inside IDFactura and FacturaExpedida) in `sii`.
 *
 * Each record element declares both namespaces itself, so the stored record is a
 * well-formed document on its own and is copied byte for byte into the SOAP body.
 * No XML declaration: the record is a fragment of the SOAP message.
 */
import { XMLBuilder } from 'fast-xml-parser';
import { XML_FORBIDDEN, XmlCharacterError } from '../../xml/escape.ts';
import { decimal } from '../shared/amounts.ts';
import type { TransactionDraft, TxLine } from '../types.ts';
import { breakdownGroups } from '../es/surcharge.ts';

/** Where AEAT publishes the SII schemas: every SII namespace is `${SII_NS_BASE}/<schema file>`. */
export const SII_NS_BASE = 'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/ssii/fact/ws';
export const NS = {
  siiLR: `${SII_NS_BASE}/SuministroLR.xsd`,
  sii: `${SII_NS_BASE}/SuministroInformacion.xsd`,
  siiR: `${SII_NS_BASE}/RespuestaSuministro.xsd`,
} as const;

/** `IDVersionSii` (sii:VersionSiiType allows only 1.1). */
export const SII_VERSION = '1.1';

const NS_ATTRS = { '@_xmlns:siiLR': NS.siiLR, '@_xmlns:sii': NS.sii };

/** The builder every SII document uses: two-space indentation, text escaped, stable bytes. */
export const siiXmlBuilder = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  format: true,
  indentBy: '  ',
  suppressEmptyNode: false,
});

export type XmlNode = Record<string, unknown>;

/**
 * Serializes one element (`{ 'prefix:Name': content }`) without a trailing newline. The
 * builder escapes markup but passes characters XML cannot carry (a control character in a
 * description) through: such a document would be stored and refused by AEAT forever, so
 * it is a 400 here (XmlCharacterError) instead.
 */
export const renderXml = (node: XmlNode): string => {
  const xml = siiXmlBuilder.build(node).replace(/\n+$/, '');
  const bad = XML_FORBIDDEN.exec(xml);
  if (bad) throw new XmlCharacterError(bad[0]);
  return xml;
};

/** The invoice as SII identifies it: issuer NIF, series+number, issue date (DD-MM-YYYY). */
export interface SiiInvoiceId {
  issuerNif: string;
  numSerie: string;
  issueDate: string;
}

export interface SiiParty {
  name: string;
  nif?: string | undefined;
  /** IDOtro (foreign party): AEAT list L4 id type, ISO country, id. */
  other?: { idType: string; country: string; id: string } | undefined;
}

export interface SiiIssuedInvoice {
  exercise: string;
  period: string;
  id: SiiInvoiceId;
  /** F1, F2, F3, R1…R5 (sii:ClaveTipoFacturaType). */
  invoiceType: string;
  /** The invoices a corrective one corrects (FacturasRectificadas), when known. */
  corrects?: { numSerie: string; issueDate: string } | undefined;
  /**
   * F3 only: the simplified invoices it replaces, each as reported (FacturasAgrupadas, "el ID
   * de los tickets agrupados ... en el caso de agrupación de tickets en factura": the only
   * block of sii:FacturaType that lists tickets an invoice takes the place of).
   */
  replaces?: { numSerie: string; issueDate: string }[] | undefined;
  /**
   * DD-MM-YYYY: the operation's day when it is not the issue date (FechaOperacion, after
   * ImporteRectificacion and before ClaveRegimenEspecialOTrascendencia in sii:FacturaType).
   */
  operationDate?: string | undefined;
  regimeKey: string;
  description: string;
  /** Minor units, signed (negative for a credit by differences). */
  total: number;
  counterparty?: SiiParty | undefined;
  /**
   * One entry per VAT rate (and recargo de equivalencia rate) of the taxed (S1) lines,
   * amounts signed in minor units; empty when all are exempt.
   */
  vat: SiiVatDetail[];
  /** The exempt lines (../es/exemption.ts): their cause and signed base. */
  exempt?: { cause: string; base: number } | undefined;
  /**
   * An IGIC or IPSI sale (../es/tax.ts), signed minor units: the whole operation, not subject
   * to IVA by the location rules (NoSujeta/ImporteTAIReglasLocalizacion; see `issuedInvoiceXml`).
   */
  notSubject?: number | undefined;
  /** `DesgloseTipoOperacion/Entrega` instead of `DesgloseFactura` (see `needsBreakdownByOperation`). */
  byOperation?: boolean | undefined;
}

/** One `DetalleIVA` (DetalleIVAEmitidaType): rate, base, quota and the recargo de equivalencia the lines carry. */
export interface SiiVatDetail {
  rateHundredths: number;
  base: number;
  tax: number;
  surcharge?: { rateHundredths: number; amount: number } | undefined;
}

/**
 * AEAT's SII validation: an issued invoice other than F2/F4 whose counterparty is named by
 * IDOtro, or by a NIF starting with N (non-resident entities), must break its taxes down by
 * operation type (DesgloseTipoOperacion), never by invoice (DesgloseFactura); the record is
 * refused otherwise. As OCA l10n-spain's `_is_sii_type_breakdown_required` does, the whole
 * breakdown goes under `Entrega` (the transaction does not say goods or services). Until
 * session 18 a foreign counterparty got DesgloseFactura (the session-18 document audit).
 */
export const needsBreakdownByOperation = (invoiceType: string, counterparty: SiiParty | undefined): boolean =>
  invoiceType !== 'F2' && counterparty !== undefined && (counterparty.other !== undefined || /^N/i.test(counterparty.nif ?? ''));

const id = (invoice: SiiInvoiceId): XmlNode => ({
  'sii:IDEmisorFactura': { 'sii:NIF': invoice.issuerNif },
  'sii:NumSerieFacturaEmisor': invoice.numSerie,
  'sii:FechaExpedicionFacturaEmisor': invoice.issueDate,
});

const period = (exercise: string, p: string): XmlNode => ({ 'sii:Ejercicio': exercise, 'sii:Periodo': p });

/** Corrective types (RD 1619/2012 art. 15; sii:ClaveTipoFacturaType R1-R5). */
export const isCorrective = (invoiceType: string): boolean => /^R[1-5]$/.test(invoiceType);

/**
 * `RegistroLRFacturasEmitidas`: element order is the XSD sequence of `sii:FacturaType`
 * then `sii:FacturaExpedidaType` (TipoFactura, TipoRectificativa, FacturasAgrupadas, FacturasRectificadas,
 * FechaOperacion, ClaveRegimen…, ImporteTotal, DescripcionOperacion, Contraparte, TipoDesglose).
 */
export function issuedInvoiceXml(inv: SiiIssuedInvoice): string {
  const corrective = isCorrective(inv.invoiceType);
  const factura: XmlNode = { 'sii:TipoFactura': inv.invoiceType };
  // "I" (por diferencias): the corrective carries the difference, here the refunded
  // amounts with a negative sign; "S" (sustitutiva) would also need ImporteRectificacion.
  if (corrective) factura['sii:TipoRectificativa'] = 'I';
  if (inv.invoiceType === 'F3' && inv.replaces !== undefined && inv.replaces.length > 0) {
    factura['sii:FacturasAgrupadas'] = {
      'sii:IDFacturaAgrupada': inv.replaces.map((r) => ({ 'sii:NumSerieFacturaEmisor': r.numSerie, 'sii:FechaExpedicionFacturaEmisor': r.issueDate })),
    };
  }
  if (corrective && inv.corrects) {
    factura['sii:FacturasRectificadas'] = {
      'sii:IDFacturaRectificada': {
        'sii:NumSerieFacturaEmisor': inv.corrects.numSerie,
        'sii:FechaExpedicionFacturaEmisor': inv.corrects.issueDate,
      },
    };
  }
  if (inv.operationDate !== undefined) factura['sii:FechaOperacion'] = inv.operationDate;
  factura['sii:ClaveRegimenEspecialOTrascendencia'] = inv.regimeKey;
  factura['sii:ImporteTotal'] = decimal(inv.total);
  factura['sii:DescripcionOperacion'] = inv.description;
  if (inv.counterparty) factura['sii:Contraparte'] = party(inv.counterparty);
  // Subject operations (DesgloseFactura, not DesgloseTipoOperacion: the breakdown of a
  // domestic operation): the exempt lines with their cause (SujetaType: Exenta first),
  // then the taxed ones, S1 (not exempt, no reverse charge).
  const sujeta: XmlNode = {};
  if (inv.exempt) {
    sujeta['sii:Exenta'] = { 'sii:DetalleExenta': { 'sii:CausaExencion': inv.exempt.cause, 'sii:BaseImponible': decimal(inv.exempt.base) } };
  }
  if (inv.vat.length > 0) {
    sujeta['sii:NoExenta'] = {
      'sii:TipoNoExenta': 'S1',
      'sii:DesgloseIVA': {
        // DetalleIVAEmitidaType: the recargo de equivalencia (../es/surcharge.ts) after the quota.
        'sii:DetalleIVA': inv.vat.map((v) => ({
          'sii:TipoImpositivo': decimal(v.rateHundredths),
          'sii:BaseImponible': decimal(v.base),
          'sii:CuotaRepercutida': decimal(v.tax),
          ...(v.surcharge === undefined
            ? {}
            : { 'sii:TipoRecargoEquivalencia': decimal(v.surcharge.rateHundredths), 'sii:CuotaRecargoEquivalencia': decimal(v.surcharge.amount) }),
        })),
      },
    };
  }
  /*
   * A sale made in the Canary Islands, Ceuta or Melilla, which charges IGIC or IPSI, is made
   * outside the territory where IVA applies (TAI: LIVA art. 3 excludes them), so the IVA
   * book reports it as not subject by the location rules: `ImporteTAIReglasLocalizacion`
   * ("operaciones no sujetas en el TAI por reglas de localización", as OCA l10n-spain names
   * the field), not `ImportePorArticulos7_14_Otros` (LIVA arts. 7 and 14, operations inside
   * the TAI outside the tax), with key 08 "operaciones sujetas al IPSI/IGIC". VERI*FACTU
   * pairs the same key with N2, "no sujeta por reglas de localización" (its error on key 08
   * without N2, reported in OCA l10n-spain PR 4499). The amount is the invoice's total,
   * IGIC included: the IVA book carries no IGIC quota, and the breakdown then adds up to
   * ImporteTotal.
   */
  const desglose: XmlNode = {};
  if (inv.notSubject === undefined || Object.keys(sujeta).length > 0) desglose['sii:Sujeta'] = sujeta;
  if (inv.notSubject !== undefined) desglose['sii:NoSujeta'] = { 'sii:ImporteTAIReglasLocalizacion': decimal(inv.notSubject) };
  factura['sii:TipoDesglose'] = inv.byOperation
    ? { 'sii:DesgloseTipoOperacion': { 'sii:Entrega': desglose } }
    : { 'sii:DesgloseFactura': desglose };
  return renderXml({
    'siiLR:RegistroLRFacturasEmitidas': {
      ...NS_ATTRS,
      'sii:PeriodoLiquidacion': period(inv.exercise, inv.period),
      'siiLR:IDFactura': id(inv.id),
      'siiLR:FacturaExpedida': factura,
    },
  });
}

/** `sii:PersonaFisicaJuridicaType`: NombreRazon, then NIF or IDOtro. */
function party(p: SiiParty): XmlNode {
  if (p.nif !== undefined) return { 'sii:NombreRazon': p.name, 'sii:NIF': p.nif };
  const other = p.other!;
  return { 'sii:NombreRazon': p.name, 'sii:IDOtro': { 'sii:CodigoPais': other.country, 'sii:IDType': other.idType, 'sii:ID': other.id } };
}

/** `RegistroLRBajaExpedidas`: the period and the id of the invoice taken off the book. */
export function bajaXml(b: { exercise: string; period: string; id: SiiInvoiceId }): string {
  return renderXml({
    'siiLR:RegistroLRBajaExpedidas': {
      ...NS_ATTRS,
      'sii:PeriodoLiquidacion': period(b.exercise, b.period),
      'siiLR:IDFactura': id(b.id),
    },
  });
}

/**
 * The VAT breakdown per rate (DesgloseIVA, at most 6 DetalleIVA): the line bases
 * (total minus tax) and taxes summed per rate, and per recargo de equivalencia rate
 * (surcharged lines are a DetalleIVA of their own). Integer minor units only. `sign` -1
 * for a corrective by differences (a refund lowers the base and the tax).
 */
export function vatBreakdown(lines: readonly TxLine[], sign: 1 | -1): SiiIssuedInvoice['vat'] {
  return breakdownGroups(lines)
    .sort((a, b) => b.rate - a.rate)
    .map((g) => ({
      rateHundredths: rateHundredths(g.rate),
      base: sign * g.base,
      tax: sign * g.tax,
      ...(g.surchargeRate === undefined ? {} : { surcharge: { rateHundredths: rateHundredths(g.surchargeRate), amount: sign * g.surcharge } }),
    }));
}

/** A percent rate (21, 5.5) in hundredths (2100, 550): `TipoImpositivo` has 2 decimals. */
export const rateHundredths = (rate: number): number => Math.round(rate * 100);

/** The draft's signed total: a corrective by differences subtracts. */
export const signedTotal = (tx: TransactionDraft, sign: 1 | -1): number => sign * tx.total_amount;
