export type RenderPlacement = 'header' | 'body' | 'footer_top' | 'footer_bottom' | 'footer_right';

/** What a POS prints, whatever the country (DECISIONS "Fiscal record and receipt data"). */
export interface RenderHint {
  key: string;
  placement: RenderPlacement;
  mandatory: boolean;
  /** `image`: `value` is a `data:` URL of the image to print as it is (e.g. a QR code drawn by the plug-in). */
  kind: 'text' | 'qr_url' | 'qr_data' | 'image';
  value: string;
}
