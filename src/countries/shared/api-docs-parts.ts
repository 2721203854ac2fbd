/** Small builders the systems' api-docs.ts files share (documentation schemas and examples). */
import type { SystemKey } from '../types.ts';

export type JsonSchema = Record<string, unknown>;

export interface SystemApiDocs {
  key: SystemKey;
  /** Human title, e.g. "Spain: TicketBAI (Gipuzkoa)". */
  title: string;
  /** The location's `country_config` (documentation; validation is the system's own). */
  configSchema: JsonSchema;
  /** A complete POST /v1/locations body. */
  location: Record<string, unknown>;
  /** A complete POST /v1/transactions body; `location_id` is a placeholder to replace. */
  sale: Record<string, unknown>;
  /** Fields of a line item only this system reads (documentation of the create body). */
  itemProperties?: Record<string, JsonSchema>;
  /** What this system reads from `metadata`, in a sentence (the create body's metadata description). */
  metadata?: string;
}

/** The placeholder location id of the sale examples. */
export const EXAMPLE_LOCATION_ID = '7f1c2a9e-4b1d-4c3e-9a55-2f6d8e0b1c34';


export const str = (description: string, extra: JsonSchema = {}): JsonSchema => ({ type: 'string', description, ...extra });

/** A closed object schema: the systems refuse unknown config fields. */
export const configObject = (title: string, required: string[], properties: Record<string, JsonSchema>): JsonSchema => ({
  title, type: 'object', required, properties, additionalProperties: false,
});

/** A canonical sale (integer minor units, tax_rate a percentage): two lines at the given rates. */
export function twoLineSale(
  locationId: string,
  currency: string,
  lines: [{ description: string; unit_price: number; quantity: number; tax_rate: number }, { description: string; unit_price: number; quantity: number; tax_rate: number }],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const items = lines.map((l) => {
    const net = l.quantity * l.unit_price;
    // Round half up, as the service does (DECISIONS "Money and the transaction request").
    const tax = Math.floor((net * l.tax_rate) / 100 + 0.5);
    return { ...l, tax_amount: tax, total_amount: net + tax };
  });
  const pretax = items.reduce((s, i) => s + i.quantity * i.unit_price, 0);
  const tax = items.reduce((s, i) => s + i.tax_amount, 0);
  return {
    location_id: locationId,
    timestamp: '2026-03-02T09:30:00Z',
    currency,
    payment_method: 'card',
    items,
    pretax_amount: pretax,
    tax_amount: tax,
    total_amount: pretax + tax,
    ...extra,
  };
}
