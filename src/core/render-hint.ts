export type RenderPlacement = 'header' | 'body' | 'footer_top' | 'footer_bottom' | 'footer_right';

/** What a POS prints, whatever the country (DECISIONS "Fiscal record and receipt data"). */
export interface RenderHint {
  key: string;
  placement: RenderPlacement;
  mandatory: boolean;
  /**
   * `image_url`: `value` is the API path of an image to print as it is (a QR code drawn by
   * the plug-in, GET /v1/transactions/{id}/qr.png), fetched with the same key. A path, not
   * the bytes: drawing a QR symbol costs more than the rest of a create, and most POS
   * draw the `qr_data` content themselves.
   */
  kind: 'text' | 'qr_url' | 'qr_data' | 'image_url';
  value: string;
}
