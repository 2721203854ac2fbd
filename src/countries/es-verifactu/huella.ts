import crypto from 'node:crypto';

/**
 * The VERI*FACTU huella (FORMATS.md §2.1-2.2; AEAT hash specification v0.1.2): SHA-256
 * over `name=value` pairs joined by `&`, in a fixed order, values exactly as written in
 * the XML (trimmed), the previous record's huella empty for the first record; 64
 * uppercase hex characters (TipoHuella 01).
 */
export interface AltaHuellaFields {
  IDEmisorFactura: string;
  NumSerieFactura: string;
  FechaExpedicionFactura: string;
  TipoFactura: string;
  CuotaTotal: string;
  ImporteTotal: string;
  /** The previous record's huella; empty for the first record. */
  Huella: string;
  FechaHoraHusoGenRegistro: string;
}

export interface AnulacionHuellaFields {
  IDEmisorFacturaAnulada: string;
  NumSerieFacturaAnulada: string;
  FechaExpedicionFacturaAnulada: string;
  Huella: string;
  FechaHoraHusoGenRegistro: string;
}

const ALTA_ORDER = ['IDEmisorFactura', 'NumSerieFactura', 'FechaExpedicionFactura', 'TipoFactura', 'CuotaTotal', 'ImporteTotal', 'Huella', 'FechaHoraHusoGenRegistro'] as const;
const ANULACION_ORDER = ['IDEmisorFacturaAnulada', 'NumSerieFacturaAnulada', 'FechaExpedicionFacturaAnulada', 'Huella', 'FechaHoraHusoGenRegistro'] as const;

function hash(order: readonly string[], fields: Record<string, string>): string {
  const text = order.map((name) => `${name}=${(fields[name] ?? '').trim()}`).join('&');
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex').toUpperCase();
}

export const huellaAlta = (f: AltaHuellaFields): string => hash(ALTA_ORDER, f as unknown as Record<string, string>);
export const huellaAnulacion = (f: AnulacionHuellaFields): string => hash(ANULACION_ORDER, f as unknown as Record<string, string>);
