/**
 * The receipt's QR symbols, made by the `qrcode` package with the parameters the
 * country fixes (`ReceiptQrSpec`): byte mode (the content as UTF-8, as TicketBAI and AT
 * ask), the error-correction level, and the smallest version from `minVersion` up that
 * holds the content (AT: 9 at least).
 */
import QRCode from 'qrcode';
import { qrModulesPng } from '../core/png.ts';
import type { ReceiptQrSpec } from '../countries/types.ts';

/** Quiet zone around a symbol, in modules (ISO/IEC 18004: 4). */
export const QUIET_ZONE = 4;

export interface QrSymbol {
  /** Modules per side (quiet zone excluded). */
  size: number;
  version: number;
  dark(row: number, col: number): boolean;
}

const MAX_VERSION = 40;

export function qrSymbol(content: string, spec: ReceiptQrSpec): QrSymbol {
  const segments = [{ data: Buffer.from(content, 'utf8'), mode: 'byte' as const }];
  let symbol: QRCode.QRCode | undefined;
  // qrcode takes an exact version and throws when the content does not fit it: the first
  // version from the minimum that holds it (without a minimum, qrcode picks the smallest).
  for (let v = spec.minVersion ?? 0; v <= MAX_VERSION && symbol === undefined; v++) {
    try {
      symbol = QRCode.create(segments, { errorCorrectionLevel: spec.errorCorrectionLevel, ...(v > 0 ? { version: v } : {}) });
    } catch (err) {
      if (v === 0 || v === MAX_VERSION) throw err;
    }
  }
  const m = symbol!.modules;
  return { size: m.size, version: symbol!.version, dark: (r, c) => Boolean(m.get(r, c)) };
}

/** Pixels per module of a QR image on its own (GET …/qr.png): a printer scales it to the size its country asks. */
const QR_IMAGE_SCALE = 4;

/** The QR symbol as a PNG on its own, with the country's parameters: what a POS that cannot draw QR codes prints. */
export function qrPng(content: string, spec: ReceiptQrSpec): Buffer {
  const symbol = qrSymbol(content, spec);
  return qrModulesPng(symbol.size, symbol.dark, QR_IMAGE_SCALE, QUIET_ZONE);
}

