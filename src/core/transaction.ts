export type TransactionType = 'sale' | 'refund' | 'void';
export type PaymentMethod = 'cash' | 'card' | 'transfer' | 'other';

/** One line of the canonical request: amounts in integer minor units, tax_rate in percent. */
export interface TxLine {
  description: string;
  quantity: number;
  /** Pretax unit price, minor units. */
  unit_price: number;
  /** Percent, may be fractional (21, 5.5). */
  tax_rate: number;
  tax_amount: number;
  total_amount: number;
  /** Italian exemption nature (N1…N6 and subcodes), required when an Italian line's tax_rate is 0. */
  natura?: string;
}

/** The canonical (quickstart) request after normalization at the edge. */
export interface TransactionDraft {
  type: TransactionType;
  location_id: string;
  timestamp: string;
  currency: string;
  payment_method: PaymentMethod;
  items: TxLine[];
  pretax_amount: number;
  tax_amount: number;
  total_amount: number;
  customer_context: Record<string, unknown> | null;
  metadata: Record<string, unknown>;
}
