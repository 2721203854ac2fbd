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
  /**
   * The fields fiscal systems add to a line (`FiscalSystem.lineFields`, read at the edge as
   * their `LineField` says), under their own names after the core's; each system narrows
   * and validates its own.
   */
  readonly [systemField: string]: unknown;
}

/**
 * A field a fiscal system adds to the request's lines (`FiscalSystem.lineFields`). The
 * request's normalization (core/transaction-request.ts) reads the fields of every
 * registered system on every line, before the location is known, as `type` says:
 * - `string`: optional (missing, null or blank after trimming: absent); anything but a
 *   string is refused with `<line>.<name> must be a string`; stored trimmed, upper-cased
 *   when `upperCase`.
 * - `surcharge`: a levy on the line beside its tax (`SurchargeLineField`).
 * A present field is stored on the line under `name`, after the core's fields, in the
 * order the registry lists them.
 */
export type LineField = StringLineField | SurchargeLineField;

export interface StringLineField {
  name: string;
  type: 'string';
  upperCase?: boolean | undefined;
}

/**
 * A surcharge a system levies on a line on top of its tax, at a rate of its own: the rate
 * field `name` (a percentage, as `tax_rate`; in the guide form hundredths of a percent, as
 * `vat_rate`) and the amount field `amount`, in minor units, computed as `tax_amount` is:
 * round-half-up(quantity × unit_price × rate / 100). The amount may be sent (it is then
 * checked) or left to the service; an amount without its rate is refused. Both are
 * stored on the line (rate and amount as numbers). The surcharge is not part of the
 * line's `total_amount` (net + tax, as for every line) but is part of what the customer
 * pays: the request's `total_amount` is `pretax_amount + tax_amount` plus the lines'
 * surcharge amounts. Only a location whose system declares the field takes it
 * (`undeclaredSurcharges`): any other system's record could not carry the amount its
 * total includes.
 */
export interface SurchargeLineField {
  name: string;
  type: 'surcharge';
  amount: string;
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
