/**
 * Receipt render hints (DECISIONS "Fiscal record and receipt data"): what a POS prints,
 * in the spec's entry shape. `value` is the item itself (an id, a URL, QR data); the key
 * tells the POS what it is, and the order of the list is the printing order.
 */
import type { RenderHint, RenderPlacement } from '../types.ts';

export const textHint = (key: string, placement: RenderPlacement, value: string, mandatory = true): RenderHint => ({
  key,
  placement,
  mandatory,
  kind: 'text',
  value,
});

/** A QR code whose content is a URL (TicketBAI, VERI*FACTU, myDATA). */
export const qrUrlHint = (key: string, placement: RenderPlacement, value: string, mandatory = true): RenderHint => ({
  key,
  placement,
  mandatory,
  kind: 'qr_url',
  value,
});

/** A QR code whose content is data, not a URL (the SAF-T PT `A:…*B:…` string). */
export const qrDataHint = (key: string, placement: RenderPlacement, value: string, mandatory = true): RenderHint => ({
  key,
  placement,
  mandatory,
  kind: 'qr_data',
  value,
});
