export type RenderPlacement = 'header' | 'body' | 'footer_top' | 'footer_bottom' | 'footer_right';

/** What a POS prints, whatever the country (DECISIONS "Fiscal record and receipt data"). */
export interface RenderHint {
  key: string;
  placement: RenderPlacement;
  mandatory: boolean;
  kind: 'text' | 'qr_url' | 'qr_data';
  value: string;
}
