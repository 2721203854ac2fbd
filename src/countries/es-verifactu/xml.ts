/**
 * The VERI*FACTU invoice records, `RegistroAlta` and `RegistroAnulacion`, exactly as
 * SuministroInformacion.xsd (IDVersion 1.0) orders them, written as strings with the
 * C14N-safe helpers of ../../xml/escape.ts: no XML declaration, no whitespace between
 * elements, every element in the `sf` namespace (elementFormDefault="qualified").
 *
 * A record is self-contained (its root declares `xmlns:sf`), so it can be stored as the
 * fiscal record and later placed, unchanged, inside `RegFactuSistemaFacturacion/
 * RegistroFactura` (SuministroLR.xsd; see soap.ts).
 *
 * The huella is computed over the very strings written here (FORMATS.md §2.1: "hash
 * exactly the string you put in the XML"), before escaping: the XML carries the same text.
 */
import { el, optEl } from '../../xml/escape.ts';
import { huellaAlta, huellaAnulacion } from './huella.ts';

export const NS_SF =
  'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/tike/cont/ws/SuministroInformacion.xsd';

/** `<sf:name>text</sf:name>`, text escaped. */
const s = (name: string, text: string): string => el(`sf:${name}`, text);
/** `<sf:name>…</sf:name>` around already-built children. */
const w = (name: string, inner: string): string => `<sf:${name}>${inner}</sf:${name}>`;

/** The three fields that identify an invoice (IDFacturaExpedidaType and its relatives). */
export interface InvoiceId {
  IDEmisorFactura: string;
  NumSerieFactura: string;
  /** DD-MM-YYYY. */
  FechaExpedicionFactura: string;
}

/** A party: Spanish NIF, or another identifier (IDOtroType; IDType 02 = NIF-IVA). */
export type PartyId = { nif: string } | { idOtro: { codigoPais?: string | undefined; idType: string; id: string } };

export interface Party {
  nombreRazon: string;
  id: PartyId;
}

/** SistemaInformaticoType: who made the billing software and which installation this is. */
export interface SistemaInformatico {
  /** The producer of the software. */
  producer: Party;
  NombreSistemaInformatico: string;
  /** Two characters, chosen by the producer. */
  IdSistemaInformatico: string;
  Version: string;
  NumeroInstalacion: string;
  TipoUsoPosibleSoloVerifactu: 'S' | 'N';
  TipoUsoPosibleMultiOT: 'S' | 'N';
  IndicadorMultiplesOT: 'S' | 'N';
}

/** One `DetalleDesglose` (DetalleType): a tax rate with its base and quota (and surcharge). */
export interface DesgloseLine {
  /** 01 IVA, 02 IPSI, 03 IGIC (ImpuestoType). */
  Impuesto: string;
  /**
   * 01 general regime, 02 export, 18 recargo de equivalencia, 20 simplified regime (list
   * L8A for IVA, L8B for IGIC; 01 for IPSI: build.ts `IPSI_REGIME`).
   */
  ClaveRegimen?: string | undefined;
  /** S1 subject, not exempt, no reverse charge; or, for an exempt operation, OperacionExenta. */
  CalificacionOperacion?: string;
  /** E1–E6, or E1–E8 for IGIC (list L10B; ../es/exemption.ts): then no rate and no quota. */
  OperacionExenta?: string;
  TipoImpositivo?: string;
  BaseImponibleOimporteNoSujeto: string;
  CuotaRepercutida?: string;
  /** Recargo de equivalencia (../es/surcharge.ts): its rate (Tipo2.2Type) and quota. */
  TipoRecargoEquivalencia?: string | undefined;
  CuotaRecargoEquivalencia?: string | undefined;
}

/** The previous record of the chain: null for the first one (`PrimerRegistro` S). */
export type Encadenamiento = null | (InvoiceId & { Huella: string });

export interface AltaFields {
  id: InvoiceId;
  NombreRazonEmisor: string;
  /**
   * S: the record corrects one of the same IDFactura (Subsanacion, SubsanacionType); with
   * `RechazoPrevio` it is an "alta por rechazo" (build.ts `reissueFlags`). Left out: N.
   * Neither is in the huella (FORMATS.md §2.1).
   */
  Subsanacion?: 'S' | undefined;
  /**
   * RechazoPrevioType: X, AEAT holds no record of this IDFactura (its earlier alta was
   * refused); S, AEAT refused an earlier Subsanacion of a record it holds. Only with
   * `Subsanacion` S (AEAT 1153, 1161). Left out: N.
   */
  RechazoPrevio?: 'X' | 'S' | undefined;
  TipoFactura: string;
  /** Corrective invoices only: S (substitution) or I (differences). */
  TipoRectificativa?: 'S' | 'I' | undefined;
  FacturasRectificadas?: InvoiceId[] | undefined;
  /** F3 only: the simplified invoices it replaces (FacturasSustituidas, IDFacturaARType). */
  FacturasSustituidas?: InvoiceId[] | undefined;
  /**
   * DD-MM-YYYY (sf:fecha): the operation's day when it is not the issue date (RD 1619/2012
   * art. 6.1.f; ../es/operation-date.ts). Not in the huella (FORMATS.md §2.1).
   */
  FechaOperacion?: string | undefined;
  DescripcionOperacion: string;
  /** S when |ImporteTotal| ≥ 100,000,000.00 (AEAT 1139; amount-limits.ts); left out otherwise. */
  Macrodato?: 'S' | undefined;
  /** F1, F3, R1-R4 name the customer (AEAT 1189); F2 and R5 must not (1190). */
  Destinatarios?: Party[] | undefined;
  Desglose: DesgloseLine[];
  CuotaTotal: string;
  ImporteTotal: string;
  previous: Encadenamiento;
  sistema: SistemaInformatico;
  /** ISO 8601 with offset, to the second. */
  FechaHoraHusoGenRegistro: string;
}

export interface AnulacionFields {
  /** The cancelled invoice. */
  id: InvoiceId;
  previous: Encadenamiento;
  sistema: SistemaInformatico;
  FechaHoraHusoGenRegistro: string;
}

function partyXml(p: Party): string {
  const id =
    'nif' in p.id
      ? s('NIF', p.id.nif)
      : w('IDOtro', optEl('sf:CodigoPais', p.id.idOtro.codigoPais) + s('IDType', p.id.idOtro.idType) + s('ID', p.id.idOtro.id));
  return s('NombreRazon', p.nombreRazon) + id;
}

function encadenamientoXml(previous: Encadenamiento): string {
  const inner =
    previous === null
      ? s('PrimerRegistro', 'S')
      : w(
          'RegistroAnterior',
          s('IDEmisorFactura', previous.IDEmisorFactura) +
            s('NumSerieFactura', previous.NumSerieFactura) +
            s('FechaExpedicionFactura', previous.FechaExpedicionFactura) +
            s('Huella', previous.Huella),
        );
  return w('Encadenamiento', inner);
}

function sistemaXml(si: SistemaInformatico): string {
  return w(
    'SistemaInformatico',
    partyXml(si.producer) +
      s('NombreSistemaInformatico', si.NombreSistemaInformatico) +
      s('IdSistemaInformatico', si.IdSistemaInformatico) +
      s('Version', si.Version) +
      s('NumeroInstalacion', si.NumeroInstalacion) +
      s('TipoUsoPosibleSoloVerifactu', si.TipoUsoPosibleSoloVerifactu) +
      s('TipoUsoPosibleMultiOT', si.TipoUsoPosibleMultiOT) +
      s('IndicadorMultiplesOT', si.IndicadorMultiplesOT),
  );
}

const idFacturaXml = (id: InvoiceId): string =>
  s('IDEmisorFactura', id.IDEmisorFactura) + s('NumSerieFactura', id.NumSerieFactura) + s('FechaExpedicionFactura', id.FechaExpedicionFactura);

export interface BuiltRecord {
  xml: string;
  huella: string;
}

/** RegistroFacturacionAltaType, in schema order. */
export function registroAltaXml(f: AltaFields): BuiltRecord {
  const huella = huellaAlta({
    IDEmisorFactura: f.id.IDEmisorFactura,
    NumSerieFactura: f.id.NumSerieFactura,
    FechaExpedicionFactura: f.id.FechaExpedicionFactura,
    TipoFactura: f.TipoFactura,
    CuotaTotal: f.CuotaTotal,
    ImporteTotal: f.ImporteTotal,
    Huella: f.previous?.Huella ?? '',
    FechaHoraHusoGenRegistro: f.FechaHoraHusoGenRegistro,
  });
  const rectificadas =
    f.FacturasRectificadas !== undefined && f.FacturasRectificadas.length > 0
      ? w('FacturasRectificadas', f.FacturasRectificadas.map((r) => w('IDFacturaRectificada', idFacturaXml(r))).join(''))
      : '';
  const sustituidas =
    f.FacturasSustituidas !== undefined && f.FacturasSustituidas.length > 0
      ? w('FacturasSustituidas', f.FacturasSustituidas.map((r) => w('IDFacturaSustituida', idFacturaXml(r))).join(''))
      : '';
  const destinatarios =
    f.Destinatarios !== undefined && f.Destinatarios.length > 0
      ? w('Destinatarios', f.Destinatarios.map((d) => w('IDDestinatario', partyXml(d))).join(''))
      : '';
  const desglose = w(
    'Desglose',
    f.Desglose.map((d) =>
      w(
        'DetalleDesglose',
        s('Impuesto', d.Impuesto) +
          optEl('sf:ClaveRegimen', d.ClaveRegimen) +
          optEl('sf:CalificacionOperacion', d.CalificacionOperacion) +
          optEl('sf:OperacionExenta', d.OperacionExenta) +
          optEl('sf:TipoImpositivo', d.TipoImpositivo) +
          s('BaseImponibleOimporteNoSujeto', d.BaseImponibleOimporteNoSujeto) +
          optEl('sf:CuotaRepercutida', d.CuotaRepercutida) +
          optEl('sf:TipoRecargoEquivalencia', d.TipoRecargoEquivalencia) +
          optEl('sf:CuotaRecargoEquivalencia', d.CuotaRecargoEquivalencia),
      ),
    ).join(''),
  );
  const xml =
    `<sf:RegistroAlta xmlns:sf="${NS_SF}">` +
    s('IDVersion', '1.0') +
    w('IDFactura', idFacturaXml(f.id)) +
    s('NombreRazonEmisor', f.NombreRazonEmisor) +
    optEl('sf:Subsanacion', f.Subsanacion) +
    optEl('sf:RechazoPrevio', f.RechazoPrevio) +
    s('TipoFactura', f.TipoFactura) +
    optEl('sf:TipoRectificativa', f.TipoRectificativa) +
    rectificadas +
    sustituidas +
    // RegistroFacturacionAltaType: FechaOperacion after ImporteRectificacion (never written), before DescripcionOperacion.
    optEl('sf:FechaOperacion', f.FechaOperacion) +
    s('DescripcionOperacion', f.DescripcionOperacion) +
    optEl('sf:Macrodato', f.Macrodato) +
    destinatarios +
    desglose +
    s('CuotaTotal', f.CuotaTotal) +
    s('ImporteTotal', f.ImporteTotal) +
    encadenamientoXml(f.previous) +
    sistemaXml(f.sistema) +
    s('FechaHoraHusoGenRegistro', f.FechaHoraHusoGenRegistro) +
    s('TipoHuella', '01') +
    s('Huella', huella) +
    '</sf:RegistroAlta>';
  return { xml, huella };
}

/** RegistroFacturacionAnulacionType, in schema order (FORMATS.md §2.2, §2.4). */
export function registroAnulacionXml(f: AnulacionFields): BuiltRecord {
  const huella = huellaAnulacion({
    IDEmisorFacturaAnulada: f.id.IDEmisorFactura,
    NumSerieFacturaAnulada: f.id.NumSerieFactura,
    FechaExpedicionFacturaAnulada: f.id.FechaExpedicionFactura,
    Huella: f.previous?.Huella ?? '',
    FechaHoraHusoGenRegistro: f.FechaHoraHusoGenRegistro,
  });
  const xml =
    `<sf:RegistroAnulacion xmlns:sf="${NS_SF}">` +
    s('IDVersion', '1.0') +
    w(
      'IDFactura',
      s('IDEmisorFacturaAnulada', f.id.IDEmisorFactura) +
        s('NumSerieFacturaAnulada', f.id.NumSerieFactura) +
        s('FechaExpedicionFacturaAnulada', f.id.FechaExpedicionFactura),
    ) +
    encadenamientoXml(f.previous) +
    sistemaXml(f.sistema) +
    s('FechaHoraHusoGenRegistro', f.FechaHoraHusoGenRegistro) +
    s('TipoHuella', '01') +
    s('Huella', huella) +
    '</sf:RegistroAnulacion>';
  return { xml, huella };
}
