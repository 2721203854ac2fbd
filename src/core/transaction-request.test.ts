import { describe, expect, it } from 'vitest';
import { ApiError, badRequest } from './errors.ts';
import { inGuideForm, normalizeTransactionRequest, RateListError, undeclaredSurcharges } from './transaction-request.ts';
import type { LineField } from './transaction.ts';

const NOW = new Date('2026-03-01T10:00:00Z');
const LOC = '2f1c7a52-4b8e-4c1a-9d5e-0a1b2c3d4e5f';

const canonical = (over: Record<string, unknown> = {}) => ({
  location_id: LOC,
  timestamp: '2026-03-01T09:59:00Z',
  currency: 'EUR',
  payment_method: 'card',
  items: [
    { description: 'Café', quantity: 2, unit_price: 150, tax_rate: 10, tax_amount: 30, total_amount: 330 },
    { description: 'Tostada', quantity: 1, unit_price: 250, tax_rate: 10, tax_amount: 25, total_amount: 275 },
  ],
  pretax_amount: 550,
  tax_amount: 55,
  total_amount: 605,
  ...over,
});

const err = (body: unknown) => {
  try {
    normalizeTransactionRequest(body, NOW, []);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error('expected a validation error');
};

describe('canonical form', () => {
  it('normalizes a valid request', () => {
    const { draft, form } = normalizeTransactionRequest(canonical(), NOW, []);
    expect(form).toBe('canonical');
    expect(draft).toMatchObject({ type: 'sale', currency: 'EUR', total_amount: 605, metadata: {}, customer_context: null, timestamp: '2026-03-01T09:59:00.000Z' });
    expect(draft.items[0]).toEqual({ description: 'Café', quantity: 2, unit_price: 150, tax_rate: 10, tax_amount: 30, total_amount: 330 });
  });

  it('computes line amounts when the client omits them', () => {
    const body = canonical({ items: [{ description: 'x', quantity: 3, unit_price: 1050, tax_rate: 21 }], pretax_amount: 3150, tax_amount: 662, total_amount: 3812 });
    expect(normalizeTransactionRequest(body, NOW, []).draft.items[0]).toMatchObject({ tax_amount: 662, total_amount: 3812 });
  });

  it('answers each rule with its own message', () => {
    expect(err(canonical({ location_id: undefined }))).toBe("Key: 'CreateRequest.LocationID' Error:Field validation for 'LocationID' failed on the 'required' tag");
    expect(err(canonical({ items: [] }))).toBe('items must be a non-empty array');
    expect(err(canonical({ items: 'x' }))).toBe('items must be a non-empty array');
    expect(err(canonical({ total_amount: 600 }))).toBe('pretax_amount + tax_amount must equal total_amount');
    expect(err(canonical({ total_amount: 605.5 }))).toBe('total_amount must be an integer amount in minor units (e.g. 1250 for 12.50)');
    expect(err(canonical({ pretax_amount: 551, total_amount: 606 }))).toBe("pretax_amount must equal the sum of the items' net amounts (550)");
    expect(err(canonical({ tax_amount: 56, pretax_amount: 549 }))).toBe("pretax_amount must equal the sum of the items' net amounts (550)");
    expect(err(canonical({ currency: 'eur' }))).toBe('currency must be a 3-letter ISO 4217 code in upper case (e.g. EUR)');
    expect(err(canonical({ payment_method: 'bitcoin' }))).toBe('payment_method must be one of cash, card, transfer, other');
    expect(err(canonical({ type: 'gift' }))).toBe('type must be one of sale, refund, void');
    expect(err(canonical({ timestamp: 'yesterday' }))).toMatch(/^timestamp must be an ISO 8601 date-time/);
    expect(err(canonical({ metadata: [] }))).toBe('metadata must be an object');
    const badLine = canonical();
    (badLine.items as Record<string, unknown>[])[0]!.tax_amount = 31;
    expect(err(badLine)).toBe('items[0].tax_amount must be 30 (quantity × unit_price × tax_rate / 100, rounded half up)');
    const badTotal = canonical();
    (badTotal.items as Record<string, unknown>[])[1]!.total_amount = 276;
    expect(err(badTotal)).toBe('items[1].total_amount must be 275 (quantity × unit_price + tax_amount)');
    const fracPrice = canonical();
    (fracPrice.items as Record<string, unknown>[])[0]!.unit_price = 1.5;
    expect(err(fracPrice)).toBe('items[0].unit_price must be an integer amount in minor units (e.g. 1250 for 12.50)');
    const negPrice = canonical();
    (negPrice.items as Record<string, unknown>[])[0]!.unit_price = -100;
    expect(err(negPrice)).toBe('items[0].unit_price must not be negative (a refund is a transaction of type refund, with positive amounts)');
    expect(err(canonical({ tax_amount: -1 }))).toBe('tax_amount must not be negative (a refund is a transaction of type refund, with positive amounts)');
    expect(err(canonical({ items: [{ description: 'x', quantity: 0, unit_price: 1, tax_rate: 0 }] }))).toBe('items[0].quantity must be a positive number with at most 6 decimals');
    expect(err(canonical({ items: [{ description: 'x', quantity: 1, unit_price: 1, tax_rate: 101 }] }))).toBe('items[0].tax_rate must be a percentage from 0 to 100');
    expect(err(canonical({ items: [{ quantity: 1, unit_price: 1, tax_rate: 0 }] }))).toBe('items[0].description is required');
  });

  it('a timestamp must name a real instant: an impossible date or time is refused, not rolled over into another day', () => {
    const message = 'timestamp must be an ISO 8601 date-time with a time zone (e.g. 2026-01-15T10:30:00Z)';
    // Date.parse accepts each of these and moves it (2026-02-30 → 2026-03-02, T24:00 → the next day).
    for (const timestamp of ['2026-02-30T10:00:00Z', '2026-02-29T10:00:00Z', '2026-04-31T10:00:00Z', '2100-02-29T10:00:00Z', '2026-03-02T24:00:00Z', '2026-03-02T24:00:00+01:00']) {
      expect(err(canonical({ timestamp })), timestamp).toBe(message);
    }
    for (const timestamp of ['2026-13-01T10:00:00Z', '2026-03-02T23:60:00Z', '2026-03-02T10:00:60Z', '2026-03-02T10:00:00+24:00', '2026-03-02T10:00:00+05:60']) {
      expect(err(canonical({ timestamp })), timestamp).toBe(message);
    }
    const accepted = (timestamp: string) => normalizeTransactionRequest(canonical({ timestamp }), NOW, []).draft.timestamp;
    expect(accepted('2024-02-29T10:00:00Z')).toBe('2024-02-29T10:00:00.000Z');
    expect(accepted('2000-02-29T23:59:59.999+01:00')).toBe('2000-02-29T22:59:59.999Z');
    expect(accepted('2026-12-31T23:59:59-0530')).toBe('2027-01-01T05:29:59.000Z');
    expect(accepted('2026-04-30T00:00Z')).toBe('2026-04-30T00:00:00.000Z');
  });
});

describe('guide form', () => {
  it('is normalized into the canonical form, vat_rate in hundredths of a percent', () => {
    const { draft, form } = normalizeTransactionRequest({
      location_id: LOC, type: 'sale', amount: 1210, metadata: { invoice_number: 'F-1' },
      line_items: [{ description: 'Pizza', quantity: 1, unit_price: 1000, vat_rate: 2100 }],
    }, NOW, []);
    expect(form).toBe('guide');
    expect(draft).toMatchObject({ pretax_amount: 1000, tax_amount: 210, total_amount: 1210, currency: 'EUR', payment_method: 'other', timestamp: NOW.toISOString(), metadata: { invoice_number: 'F-1' } });
    expect(draft.items[0]).toMatchObject({ tax_rate: 21, tax_amount: 210, total_amount: 1210 });
  });

  it('checks amount against the lines', () => {
    expect(err({ location_id: LOC, amount: 1200, line_items: [{ description: 'Pizza', quantity: 1, unit_price: 1000, vat_rate: 2100 }] }))
      .toBe("amount must equal the sum of the line items' totals (1210)");
    expect(err({ location_id: LOC, amount: 1210, line_items: [{ description: 'Pizza', quantity: 1, unit_price: 1000, vat_rate: 21.5 }] }))
      .toMatch(/^line_items\[0\]\.vat_rate must be an integer in hundredths/);
  });
});

describe('line fields declared by fiscal systems', () => {
  const FIELDS: readonly LineField[] = [{ name: 'exemption', type: 'string', upperCase: true }, { name: 'note', type: 'string' }];
  const withLine = (extra: Record<string, unknown>) =>
    canonical({ items: [{ description: 'Pizza', quantity: 1, unit_price: 1000, tax_rate: 0, ...extra }], pretax_amount: 1000, tax_amount: 0, total_amount: 1000 });

  it('are read on every line, trimmed (upper-cased when declared so), after the core fields, in declaration order', () => {
    const { draft } = normalizeTransactionRequest(withLine({ note: ' a b ', exemption: ' n2.1 ', other: 'x' }), NOW, FIELDS);
    expect(JSON.stringify(draft.items[0])).toBe(
      '{"description":"Pizza","quantity":1,"unit_price":1000,"tax_rate":0,"tax_amount":0,"total_amount":1000,"exemption":"N2.1","note":"a b"}',
    );
  });

  it('are absent when missing, null or blank, and an undeclared field is not read', () => {
    for (const extra of [{}, { exemption: null }, { exemption: '  ' }, { exemption: '' }]) {
      expect(Object.keys(normalizeTransactionRequest(withLine(extra), NOW, FIELDS).draft.items[0]!)).not.toContain('exemption');
    }
    expect(Object.keys(normalizeTransactionRequest(withLine({ exemption: 'N1' }), NOW, []).draft.items[0]!)).not.toContain('exemption');
  });

  it('must be strings, with a message naming the line and the field', () => {
    expect(() => normalizeTransactionRequest(withLine({ exemption: 1 }), NOW, FIELDS)).toThrow('items[0].exemption must be a string');
  });
});

describe('a line surcharge declared by a fiscal system (SurchargeLineField)', () => {
  const FIELDS: readonly LineField[] = [{ name: 'extra_rate', type: 'surcharge', amount: 'extra_amount' }];
  // 2 × 10.00 at 21 % (tax 4.20) with a 5.2 % surcharge (1.04), and a plain line of 3.00 at 10 %.
  const body = (extra: Record<string, unknown> = { extra_rate: 5.2 }, totals: Record<string, unknown> = {}) =>
    canonical({
      items: [
        { description: 'Aceite', quantity: 2, unit_price: 1000, tax_rate: 21, tax_amount: 420, total_amount: 2420, ...extra },
        { description: 'Pan', quantity: 1, unit_price: 300, tax_rate: 10, tax_amount: 30, total_amount: 330 },
      ],
      pretax_amount: 2300,
      tax_amount: 450,
      total_amount: 2854,
      ...totals,
    });
  const errWith = (b: unknown, fields: readonly LineField[] = FIELDS) => {
    try {
      normalizeTransactionRequest(b, NOW, fields);
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('expected a validation error');
  };

  it('stores the rate and the amount the service computes (as tax_amount: round half up), beside the line total, which stays net + tax', () => {
    const { draft } = normalizeTransactionRequest(body(), NOW, FIELDS);
    expect(draft.items[0]).toEqual({ description: 'Aceite', quantity: 2, unit_price: 1000, tax_rate: 21, tax_amount: 420, total_amount: 2420, extra_rate: 5.2, extra_amount: 104 });
    expect(Object.keys(draft.items[1]!)).not.toContain('extra_rate');
    // The total is what the customer pays: the lines' totals and the surcharge.
    expect(draft).toMatchObject({ pretax_amount: 2300, tax_amount: 450, total_amount: 2854 });
    // A given amount is checked, and kept; half a cent rounds up (1 × 0.25 × 5.2 % = 1.3 → 1; 1 × 0.50 × 5 % = 2.5 → 3).
    expect(normalizeTransactionRequest(body({ extra_rate: 5.2, extra_amount: 104 }), NOW, FIELDS).draft.items[0]!.extra_amount).toBe(104);
    const half = canonical({ items: [{ description: 'Chicle', quantity: 1, unit_price: 50, tax_rate: 0, extra_rate: 5 }], pretax_amount: 50, tax_amount: 0, total_amount: 53 });
    expect(normalizeTransactionRequest(half, NOW, FIELDS).draft.items[0]!.extra_amount).toBe(3);
  });

  it('refuses a wrong amount, an amount without its rate and a rate that is no percentage, naming the line and field', () => {
    expect(errWith(body({ extra_rate: 5.2, extra_amount: 105 }))).toBe('items[0].extra_amount must be 104 (quantity × unit_price × extra_rate / 100, rounded half up)');
    expect(errWith(body({ extra_amount: 104 }))).toBe('items[0].extra_amount is given without items[0].extra_rate');
    expect(errWith(body({ extra_rate: '5.2' }))).toBe('items[0].extra_rate must be a percentage from 0 to 100');
    expect(errWith(body({ extra_rate: 5.2, extra_amount: 1.5 }))).toMatch(/^items\[0\]\.extra_amount must be an integer amount in minor units/);
  });

  it('is part of the request total: pretax + tax + surcharges; without any surcharge the rule and its message are unchanged', () => {
    expect(errWith(body(undefined, { total_amount: 2750 }))).toBe("pretax_amount + tax_amount + the items' extra_amount (104) must equal total_amount");
    expect(errWith(body({}, { total_amount: 2854 }))).toBe('pretax_amount + tax_amount must equal total_amount');
    expect(normalizeTransactionRequest(body({}, { total_amount: 2750 }), NOW, FIELDS).draft.total_amount).toBe(2750);
    // Not declared by any system: not read, so the request total without it is the rule.
    expect(errWith(body(), [])).toBe('pretax_amount + tax_amount must equal total_amount');
  });

  it('in the guide form: the rate in hundredths of a percent, and amount = the line totals plus the surcharges', () => {
    const guide = (amount: number, rate: unknown = 520) => ({
      location_id: LOC, amount, line_items: [{ description: 'Aceite', quantity: 2, unit_price: 1000, vat_rate: 2100, extra_rate: rate }],
    });
    const { draft } = normalizeTransactionRequest(guide(2524), NOW, FIELDS);
    expect(draft.items[0]).toMatchObject({ tax_rate: 21, extra_rate: 5.2, extra_amount: 104 });
    expect(draft).toMatchObject({ pretax_amount: 2000, tax_amount: 420, total_amount: 2524 });
    expect(errWith(guide(2420))).toBe("amount must equal the sum of the line items' totals and extra_amount (2524)");
    expect(errWith(guide(2524, 5.2))).toBe('line_items[0].extra_rate must be an integer in hundredths of a percent (520 = 5.2 %), from 0 to 10000');
  });

  it('undeclaredSurcharges: a surcharge the location\'s system does not declare is a 400 naming the line, field and system', () => {
    const { draft } = normalizeTransactionRequest(body(), NOW, FIELDS);
    expect(undeclaredSurcharges(draft, FIELDS, FIELDS, 'xx-own')).toBeNull();
    const refused = undeclaredSurcharges(draft, [], FIELDS, 'xx-other');
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused?.status).toBe(400);
    expect(refused?.message).toBe('items[0].extra_rate is not taken at this location: its fiscal system (xx-other) charges no line surcharge');
    // A request without a surcharge is every system's.
    expect(undeclaredSurcharges(normalizeTransactionRequest(canonical(), NOW, FIELDS).draft, [], FIELDS, 'xx-other')).toBeNull();
  });
});

describe('inGuideForm', () => {
  const said = (err: Error) => inGuideForm(err).message;

  it('names the guide form\'s fields: line_items[i], vat_rate, a request-level amount', () => {
    expect(said(badRequest('items[3].tax_rate must have at most 2 decimals'))).toBe('line_items[3].vat_rate must have at most 2 decimals');
    expect(said(badRequest('items[0].natura is required when tax_rate is 0 (N1-N6)'))).toBe('line_items[0].natura is required when vat_rate is 0 (N1-N6)');
    expect(said(badRequest('total_amount must be at most 9'))).toBe('amount must be at most 9');
    expect(said(badRequest('a + b must equal total_amount'))).toBe('a + b must equal amount');
  });

  it('leaves a line\'s total_amount, other fields and words that only contain the names alone', () => {
    expect(said(badRequest('items[1].total_amount must be at most 9'))).toBe('line_items[1].total_amount must be at most 9');
    expect(said(badRequest('metadata.total_amount is unknown'))).toBe('metadata.total_amount is unknown');
    expect(said(badRequest('line_items[2].unit_price must be 1'))).toBe('line_items[2].unit_price must be 1');
    expect(said(badRequest('metadata.line_items_tax_rate_x and sub_total_amount'))).toBe('metadata.line_items_tax_rate_x and sub_total_amount');
    expect(said(badRequest('0 % line needs a cause'))).toBe('0 % line needs a cause');
  });

  it('lists a rate list error\'s rates in hundredths of a percent; its canonical message in percent', () => {
    const err = new RateListError((rate) => `items[0].tax_rate must be one of (${[24, 5.5, 0].map((r) => rate(r)).join(', ')})`);
    expect(err.message).toBe('items[0].tax_rate must be one of (24, 5.5, 0)');
    expect(said(err)).toBe('line_items[0].vat_rate must be one of (2400, 550, 0)');
  });

  it('answers a copy with the error\'s class and status, the error left as it was; other errors pass as they are', () => {
    const err = new RateListError(() => 'items[0].tax_rate x');
    const copy = inGuideForm(err);
    expect(copy).toBeInstanceOf(RateListError);
    expect(copy.status).toBe(400);
    expect(copy.message).toBe('line_items[0].vat_rate x');
    expect(err.message).toBe('items[0].tax_rate x');
    const same = badRequest('description is required');
    expect(inGuideForm(same)).toBe(same);
    const other = new ApiError(404, 'items[0] not found');
    expect(inGuideForm(other).message).toBe('items[0] not found');
    const plain = new Error('items[0].tax_rate');
    expect(inGuideForm(plain).message).toBe('items[0].tax_rate');
  });
});
