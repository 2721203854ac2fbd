import type { LineField, PaymentMethod, StringLineField, SurchargeLineField, TransactionDraft, TransactionType, TxLine } from './transaction.ts';
import { badRequest, ValidationError } from './errors.ts';
import { isUuid } from './ids.ts';
import { isMinorUnits, lineNet, lineTax, toDecimal, type Decimal } from './money.ts';

/**
 * The transaction request, validated and normalized at the edge (pure).
 *
 * Two forms are accepted (DECISIONS "Money and the transaction request"):
 * - canonical (the quickstart): `items[]` with integer minor-unit amounts and `tax_rate`
 *   in percent, request totals `pretax_amount`, `tax_amount`, `total_amount`;
 * - guide: `amount` and `line_items[]` with `vat_rate` in hundredths of a percent
 *   (2100 = 21 %), normalized here into the canonical form.
 * Line tax = round-half-up(quantity × unit_price × tax_rate / 100); line total = net + tax;
 * request totals = sums of the lines; pretax + tax = total. Every rule has its own
 * message naming the field. Country rules come after, in each fiscal system; the fields
 * fiscal systems add to lines (`lineFields`, the registry's union) are read here as their
 * declaration says, without knowing what they mean.
 */
export const MAX_ITEMS = 1000;
const TYPES: readonly TransactionType[] = ['sale', 'refund', 'void'];
const PAYMENT_METHODS: readonly PaymentMethod[] = ['cash', 'card', 'transfer', 'other'];

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const required = (field: string) => badRequest(`Key: 'CreateRequest.${goName(field)}' Error:Field validation for '${goName(field)}' failed on the 'required' tag`);
const goName = (snake: string) => snake.split('_').map((p) => (p === 'id' ? 'ID' : p.charAt(0).toUpperCase() + p.slice(1))).join('');
const minorUnitsMessage = (field: string) => `${field} must be an integer amount in minor units (e.g. 1250 for 12.50)`;
/**
 * An integer below zero is a whole amount, just not allowed here: say that, not "integer"
 * (a discount sent as a negative line read as a unit error). A refund is a transaction of
 * its own type with positive amounts.
 */
const nonNegativeMessage = (field: string) => `${field} must not be negative (a refund is a transaction of type refund, with positive amounts)`;
const amountMessage = (field: string, v: unknown) => (isMinorUnits(v) ? nonNegativeMessage(field) : minorUnitsMessage(field));

/**
 * A 400 whose message lists tax rates, written so it can list them in either form's unit:
 * `render` is given how to write one rate (a percent) and returns the message. Its message
 * is the canonical one (percent, as `tax_rate` takes it); `inGuideForm` asks it again in
 * hundredths of a percent (`vat_rate`), so the values are never found back in the text.
 */
export class RateListError extends ValidationError {
  constructor(readonly render: (rate: (percent: number) => string) => string) {
    super(render(String));
  }
}

/** The guide form's unit for a rate: hundredths of a percent (21 → 2100). */
const inHundredths = (percent: number) => String(Math.round(percent * 100));

/**
 * The canonical fields a message may name, and what a guide-form caller sent instead:
 * `items[i]` → `line_items[i]`, `tax_rate` → `vat_rate` (wherever it stands), a request-level
 * `total_amount` → `amount` (a line's `total_amount` has the same name in both forms).
 */
const GUIDE_NAMES: readonly [RegExp, string][] = [
  [/(?<![\w.\]])items\[(\d+)\]/g, 'line_items[$1]'],
  [/(?<![\w-])tax_rate(?![\w-])/g, 'vat_rate'],
  [/(?<![\w.\]-])total_amount(?![\w-])/g, 'amount'],
];

/**
 * A validation error about a guide-form request, said in the caller's terms: the fields it
 * sent (`line_items[0].vat_rate`, `amount`) and, where the message lists rates, in
 * hundredths of a percent (`2400, 1300, …`). Checks after normalization (each fiscal
 * system's rules, the document builders) read the canonical draft and name its fields;
 * the transaction service, which knows the form, passes their errors through here. The
 * answer is a copy of the error with its class and status; only its message differs.
 * Canonical-form messages never pass here (docs/decisions.md "Guide-form errors").
 */
export function inGuideForm<E>(err: E): E {
  if (!(err instanceof ValidationError)) return err;
  const text = err instanceof RateListError ? err.render(inHundredths) : err.message;
  const message = GUIDE_NAMES.reduce((m, [from, to]) => m.replace(from, to), text);
  if (message === err.message) return err;
  // A copy (same class, status, headers): the thrown error is left as it was.
  return Object.assign(Object.create(Object.getPrototypeOf(err) as object) as E & ValidationError, err, { message });
}

export interface NormalizedRequest {
  draft: TransactionDraft;
  form: 'canonical' | 'guide';
}

export function normalizeTransactionRequest(body: unknown, now: Date, lineFields: readonly LineField[]): NormalizedRequest {
  if (!isObj(body)) throw badRequest('request body must be a JSON object');
  const guide = body.items === undefined && (body.line_items !== undefined || body.amount !== undefined);
  return guide ? { draft: fromGuide(body, now, lineFields), form: 'guide' } : { draft: fromCanonical(body, lineFields), form: 'canonical' };
}

function commonFields(body: Obj, defaults: { timestamp?: string; payment_method?: PaymentMethod; currency?: string }) {
  if (body.location_id === undefined || body.location_id === null || body.location_id === '') throw required('location_id');
  if (typeof body.location_id !== 'string') throw badRequest('location_id must be a string');
  // Not an id at all is an invalid required field (spec: the Key: form names location_id);
  // a well-formed id we do not know is `location not found`.
  if (!isUuid(body.location_id)) throw badRequest(`Key: 'CreateRequest.LocationID' Error:Field validation for 'LocationID' failed on the 'uuid' tag`);

  const type = body.type ?? 'sale';
  if (typeof type !== 'string' || !TYPES.includes(type as TransactionType)) throw badRequest('type must be one of sale, refund, void');

  const timestamp = body.timestamp ?? defaults.timestamp;
  if (timestamp === undefined || timestamp === null || timestamp === '') throw required('timestamp');
  if (typeof timestamp !== 'string' || !isCalendarDateTime(timestamp)) {
    throw badRequest('timestamp must be an ISO 8601 date-time with a time zone (e.g. 2026-01-15T10:30:00Z)');
  }

  const currency = body.currency ?? defaults.currency;
  if (currency === undefined || currency === null || currency === '') throw required('currency');
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) throw badRequest('currency must be a 3-letter ISO 4217 code in upper case (e.g. EUR)');

  const payment = body.payment_method ?? defaults.payment_method;
  if (payment === undefined || payment === null || payment === '') throw required('payment_method');
  if (typeof payment !== 'string' || !PAYMENT_METHODS.includes(payment as PaymentMethod)) throw badRequest('payment_method must be one of cash, card, transfer, other');

  const customer = body.customer_context ?? null;
  if (customer !== null && !isObj(customer)) throw badRequest('customer_context must be an object');
  const metadata = body.metadata ?? {};
  if (!isObj(metadata)) throw badRequest('metadata must be an object');

  return {
    type: type as TransactionType,
    location_id: body.location_id,
    timestamp: new Date(timestamp).toISOString(),
    currency,
    payment_method: payment as PaymentMethod,
    customer_context: customer as Obj | null,
    metadata: metadata as Obj,
  };
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):?(\d{2}))$/;

/**
 * An ISO 8601 date-time with a zone that names a real instant: each field in its range
 * (hour 00-23, no leap second, offset up to 23:59) and the day in its month. `Date.parse`
 * alone rolled impossible dates over (2026-02-30 → 2026-03-02, T24:00 → the next day), so
 * the sale was stored under a date the client never sent.
 */
function isCalendarDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second, offH, offM] = m.slice(1).map((v) => (v === undefined ? 0 : Number(v)));
  const daysInMonth = new Date(Date.UTC(2000, month!, 0)).getUTCDate() - (month === 2 && !isLeapYear(year!) ? 1 : 0);
  return month! >= 1 && month! <= 12 && day! >= 1 && day! <= daysInMonth && hour! <= 23 && minute! <= 59 && second! <= 59 && offH! <= 23 && offM! <= 59
    && !Number.isNaN(Date.parse(value));
}

const isLeapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

function quantityOf(raw: unknown, path: string): Decimal {
  const d = typeof raw === 'number' && raw > 0 ? toDecimal(raw) : null;
  if (!d) throw badRequest(`${path}.quantity must be a positive number with at most 6 decimals`);
  return d;
}

function rateOf(raw: unknown, path: string, field: string, scale = 1): Decimal {
  const value = typeof raw === 'number' ? raw / scale : Number.NaN;
  const d = value >= 0 && value <= 100 ? toDecimal(value) : null;
  if (!d) throw badRequest(scale === 1 ? `${path}.${field} must be a percentage from 0 to 100` : `${path}.${field} must be an integer in hundredths of a percent (2100 = 21 %), from 0 to 10000`);
  return d;
}

function descriptionOf(raw: unknown, path: string): string {
  // A number or an object is a wrong type, not a missing field (docs/decisions.md "Errors").
  if (raw !== undefined && raw !== null && typeof raw !== 'string') throw badRequest(`${path}.description must be a string`);
  if (typeof raw !== 'string' || raw.trim() === '') throw badRequest(`${path}.description is required`);
  if (raw.length > 1000) throw badRequest(`${path}.description must be at most 1000 characters`);
  return raw.trim();
}

/** A system's string line field, read as declared; undefined when absent (see `LineField`). */
function lineFieldOf(raw: unknown, path: string, field: StringLineField): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') throw badRequest(`${path}.${field.name} must be a string`);
  const value = field.upperCase === true ? raw.trim().toUpperCase() : raw.trim();
  return value === '' ? undefined : value;
}

/** How a form writes a rate: the canonical form in percent, the guide form in hundredths of a percent. */
interface RateUnit {
  /** 1: percent; 100: hundredths of a percent. */
  scale: 1 | 100;
  /** The amount's formula in the caller's terms. */
  term: (rateField: string) => string;
}
const PERCENT: RateUnit = { scale: 1, term: (f) => `${f} / 100` };
const HUNDREDTHS: RateUnit = { scale: 100, term: (f) => `${f} / 10000` };

/**
 * A system's surcharge on a line (`SurchargeLineField`): its rate, read as `tax_rate` is
 * (as `vat_rate` in the guide form), and its amount, computed as the line's tax is; a given
 * amount is checked. Absent (no rate, no amount): nothing.
 */
function surchargeOf(raw: Obj, path: string, field: SurchargeLineField, quantity: Decimal, unitPrice: number, unit: RateUnit): Record<string, number> {
  const rawRate = raw[field.name];
  const rawAmount = raw[field.amount];
  if (rawRate === undefined || rawRate === null) {
    if (rawAmount !== undefined && rawAmount !== null) throw badRequest(`${path}.${field.amount} is given without ${path}.${field.name}`);
    return {};
  }
  if (unit.scale === 100 && !Number.isInteger(rawRate)) throw badRequest(`${path}.${field.name} must be an integer in hundredths of a percent (520 = 5.2 %), from 0 to 10000`);
  const rate = rateOf(rawRate, path, field.name, unit.scale);
  const amount = lineTax(quantity, unitPrice, rate);
  if (rawAmount !== undefined && rawAmount !== null) {
    if (!isMinorUnits(rawAmount)) throw badRequest(minorUnitsMessage(`${path}.${field.amount}`));
    if (rawAmount !== amount) throw badRequest(`${path}.${field.amount} must be ${amount} (quantity × unit_price × ${unit.term(field.name)}, rounded half up)`);
  }
  return { [field.name]: (rawRate as number) / unit.scale, [field.amount]: amount };
}

/** The systems' fields present on a line, in declaration order. */
function lineFieldsOf(raw: Obj, path: string, fields: readonly LineField[], quantity: Decimal, unitPrice: number, unit: RateUnit): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const field of fields) {
    if (field.type === 'surcharge') {
      Object.assign(out, surchargeOf(raw, path, field, quantity, unitPrice, unit));
      continue;
    }
    const value = lineFieldOf(raw[field.name], path, field);
    if (value !== undefined) out[field.name] = value;
  }
  return out;
}

/** The surcharge amounts of a line (`SurchargeLineField`), summed. */
const lineSurcharge = (l: TxLine, fields: readonly LineField[]): number =>
  fields.reduce((sum, f) => sum + (f.type === 'surcharge' && typeof l[f.amount] === 'number' ? (l[f.amount] as number) : 0), 0);

/** The surcharge fields some line of the request carries. */
const surchargesUsed = (items: readonly TxLine[], fields: readonly LineField[]): SurchargeLineField[] =>
  fields.filter((f): f is SurchargeLineField => f.type === 'surcharge' && items.some((l) => l[f.name] !== undefined));

/**
 * The first surcharge a line carries that the location's system does not declare (its
 * record could not carry the amount the request's total includes), as a 400; null when
 * every surcharge is the system's. `declared`: the system's line fields; `system`: its key,
 * for the message. Called once the location is known (services/transactions.ts).
 */
export function undeclaredSurcharges(draft: TransactionDraft, declared: readonly LineField[], all: readonly LineField[], system: string): ValidationError | null {
  for (const f of surchargesUsed(draft.items, all)) {
    if (declared.some((d) => d.type === 'surcharge' && d.name === f.name)) continue;
    const i = draft.items.findIndex((l) => l[f.name] !== undefined);
    return badRequest(`items[${i}].${f.name} is not taken at this location: its fiscal system (${system}) charges no line surcharge`);
  }
  return null;
}

/** Builds one line from quantity, unit price and rate; checks the client's line totals when given. */
function line(raw: Obj, path: string, rate: Decimal, taxRateValue: number, fields: readonly LineField[], unit: RateUnit = PERCENT): TxLine {
  const quantity = quantityOf(raw.quantity, path);
  if (!isMinorUnits(raw.unit_price) || raw.unit_price < 0) throw badRequest(amountMessage(`${path}.unit_price`, raw.unit_price));
  const net = lineNet(quantity, raw.unit_price);
  const tax = lineTax(quantity, raw.unit_price, rate);
  const rateTerm = unit.term(unit.scale === 1 ? 'tax_rate' : 'vat_rate');
  if (raw.tax_amount !== undefined) {
    if (!isMinorUnits(raw.tax_amount)) throw badRequest(minorUnitsMessage(`${path}.tax_amount`));
    if (raw.tax_amount !== tax) throw badRequest(`${path}.tax_amount must be ${tax} (quantity × unit_price × ${rateTerm}, rounded half up)`);
  }
  if (raw.total_amount !== undefined) {
    if (!isMinorUnits(raw.total_amount)) throw badRequest(minorUnitsMessage(`${path}.total_amount`));
    if (raw.total_amount !== net + tax) throw badRequest(`${path}.total_amount must be ${net + tax} (quantity × unit_price + tax_amount)`);
  }
  const systemFields = lineFieldsOf(raw, path, fields, quantity, raw.unit_price, unit);
  return {
    description: descriptionOf(raw.description, path),
    quantity: Number(raw.quantity),
    unit_price: raw.unit_price,
    tax_rate: taxRateValue,
    tax_amount: tax,
    total_amount: net + tax,
    ...systemFields,
  };
}

function itemsOf(raw: unknown, field: string): Obj[] {
  if (!Array.isArray(raw) || raw.length === 0) throw badRequest(`${field} must be a non-empty array`);
  if (raw.length > MAX_ITEMS) throw badRequest(`${field} must have at most ${MAX_ITEMS} lines`);
  raw.forEach((it) => {
    // The spec's one message for "empty or invalid items" (400 `items must be a non-empty array`):
    // an entry that is not a line object makes the array an invalid one.
    if (!isObj(it)) throw badRequest(`${field} must be a non-empty array`);
  });
  return raw as Obj[];
}

function fromCanonical(body: Obj, fields: readonly LineField[]): TransactionDraft {
  const common = commonFields(body, {});
  const items = itemsOf(body.items, 'items').map((raw, i) => {
    const path = `items[${i}]`;
    const rate = rateOf(raw.tax_rate, path, 'tax_rate');
    return line(raw, path, rate, Number(raw.tax_rate), fields);
  });
  for (const f of ['pretax_amount', 'tax_amount', 'total_amount'] as const) {
    if (body[f] === undefined || body[f] === null) throw required(f);
    if (!isMinorUnits(body[f]) || (body[f] as number) < 0) throw badRequest(amountMessage(f, body[f]));
  }
  const pretax = body.pretax_amount as number;
  const tax = body.tax_amount as number;
  const total = body.total_amount as number;
  if (total <= 0) throw badRequest('total_amount must be greater than 0');
  // A line surcharge (SurchargeLineField) is paid on top of the lines' totals: it is part
  // of the request's total. Without one the rule and its message are as they always were.
  const surcharges = surchargesUsed(items, fields);
  const surcharge = items.reduce((s, l) => s + lineSurcharge(l, fields), 0);
  if (surcharges.length === 0 && pretax + tax !== total) throw badRequest('pretax_amount + tax_amount must equal total_amount');
  if (surcharges.length > 0 && pretax + tax + surcharge !== total) {
    throw badRequest(`pretax_amount + tax_amount + the items' ${surcharges.map((f) => f.amount).join(' and ')} (${surcharge}) must equal total_amount`);
  }
  const sumNet = items.reduce((s, l) => s + l.total_amount - l.tax_amount, 0);
  const sumTax = items.reduce((s, l) => s + l.tax_amount, 0);
  if (pretax !== sumNet) throw badRequest(`pretax_amount must equal the sum of the items' net amounts (${sumNet})`);
  if (tax !== sumTax) throw badRequest(`tax_amount must equal the sum of the items' tax_amount (${sumTax})`);
  return { ...common, items, pretax_amount: pretax, tax_amount: tax, total_amount: total };
}

/** The guide form: `amount` (gross total), `line_items[]` with `vat_rate` in hundredths of a percent. */
function fromGuide(body: Obj, now: Date, fields: readonly LineField[]): TransactionDraft {
  const common = commonFields(body, { timestamp: now.toISOString(), currency: 'EUR', payment_method: 'other' });
  const items = itemsOf(body.line_items, 'line_items').map((raw, i) => {
    const path = `line_items[${i}]`;
    if (!Number.isInteger(raw.vat_rate)) throw badRequest(`${path}.vat_rate must be an integer in hundredths of a percent (2100 = 21 %), from 0 to 10000`);
    const rate = rateOf(raw.vat_rate, path, 'vat_rate', 100);
    // The formula in the caller's terms: vat_rate (and a surcharge rate) is in hundredths of a percent.
    return line(raw, path, rate, (raw.vat_rate as number) / 100, fields, HUNDREDTHS);
  });
  const linesTotal = items.reduce((s, l) => s + l.total_amount, 0);
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  // Line surcharges (SurchargeLineField) are paid on top of the lines' totals.
  const surcharges = surchargesUsed(items, fields);
  const total = linesTotal + items.reduce((s, l) => s + lineSurcharge(l, fields), 0);
  if (body.amount === undefined || body.amount === null) throw required('amount');
  if (!isMinorUnits(body.amount)) throw badRequest(minorUnitsMessage('amount'));
  if (body.amount !== total) {
    const what = surcharges.length === 0 ? 'totals' : `totals and ${surcharges.map((f) => f.amount).join(' and ')}`;
    throw badRequest(`amount must equal the sum of the line items' ${what} (${total})`);
  }
  if (total <= 0) throw badRequest('amount must be greater than 0');
  return { ...common, items, pretax_amount: linesTotal - tax, tax_amount: tax, total_amount: total };
}
