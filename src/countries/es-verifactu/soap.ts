/**
 * The submission request of the VERI*FACTU web service (SistemaFacturacion.wsdl, binding
 * `sfVerifactu`, operation RegFactuSistemaFacturacion): SOAP 1.1, document/literal,
 * `soapAction=""`. The body is `sfLR:RegFactuSistemaFacturacion` (SuministroLR.xsd): a
 * `Cabecera` naming the obligated issuer (CabeceraType/ObligadoEmision: NombreRazon, NIF)
 * and 1 to 1000 `RegistroFactura`, each holding one `sf:RegistroAlta` or
 * `sf:RegistroAnulacion` as built by xml.ts (FORMATS.md §2.5, §2.7).
 */
import { el } from '../../xml/escape.ts';
import { NS_SF } from './xml.ts';

export const NS_SOAP = 'http://schemas.xmlsoap.org/soap/envelope/';
export const NS_SFLR =
  'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/tike/cont/ws/SuministroLR.xsd';
export const NS_SFR =
  'https://www2.agenciatributaria.gob.es/static_files/common/internet/dep/aplicaciones/es/aeat/tike/cont/ws/RespuestaSuministro.xsd';

/** SuministroLR.xsd: `RegistroFactura maxOccurs="1000"`. */
export const MAX_RECORDS_PER_REQUEST = 1000;

export interface ObligadoEmision {
  nif: string;
  nombreRazon: string;
}

export interface CabeceraOptions {
  /**
   * The records are sent after a technical incident kept them from going in time:
   * `RemisionVoluntaria/Incidencia` S (incident.ts). Left out otherwise.
   */
  incidencia?: boolean | undefined;
}

/**
 * `RegFactuSistemaFacturacion` with its namespaces declared on itself, so the element is
 * a complete document too (what the schema tests validate, and what a SOAP body holds).
 */
export function regFactuRequest(obligado: ObligadoEmision, records: readonly string[], options: CabeceraOptions = {}): string {
  if (records.length === 0 || records.length > MAX_RECORDS_PER_REQUEST) {
    throw new RangeError(`RegFactuSistemaFacturacion holds 1 to ${MAX_RECORDS_PER_REQUEST} records, not ${records.length}`);
  }
  for (const r of records) {
    // The records are ours (xml.ts): anything else is a stored placeholder or a bug.
    if (!/^<sf:Registro(Alta|Anulacion)[ >]/.test(r)) throw new TypeError('not a VERI*FACTU RegistroAlta or RegistroAnulacion');
  }
  const cabecera =
    '<sfLR:Cabecera><sf:ObligadoEmision>' +
    el('sf:NombreRazon', obligado.nombreRazon) +
    el('sf:NIF', obligado.nif) +
    '</sf:ObligadoEmision>' +
    // CabeceraType: ObligadoEmision, Representante?, RemisionVoluntaria? (FechaFinVeriFactu?,
    // Incidencia?), RemisionRequerimiento?; local elements, so in the sf namespace.
    (options.incidencia ? '<sf:RemisionVoluntaria><sf:Incidencia>S</sf:Incidencia></sf:RemisionVoluntaria>' : '') +
    '</sfLR:Cabecera>';
  return (
    `<sfLR:RegFactuSistemaFacturacion xmlns:sf="${NS_SF}" xmlns:sfLR="${NS_SFLR}">` +
    cabecera +
    records.map((r) => `<sfLR:RegistroFactura>${r}</sfLR:RegistroFactura>`).join('') +
    '</sfLR:RegFactuSistemaFacturacion>'
  );
}

/** The SOAP 1.1 envelope around a request body (empty Header, as AEAT's examples). */
export function soapEnvelope(body: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="${NS_SOAP}"><soapenv:Header></soapenv:Header><soapenv:Body>${body}</soapenv:Body></soapenv:Envelope>`;
}

/** The whole submission of records for one obligated issuer. */
export const submissionEnvelope = (obligado: ObligadoEmision, records: readonly string[], options: CabeceraOptions = {}): string =>
  soapEnvelope(regFactuRequest(obligado, records, options));
