import { tierForMerchantCount } from '../ratelimit/tiers.ts';
import type { BillingInterval, PaidTier } from '../store/repos/subscriptions-repo.ts';

/**
 * Subscription prices (DECISIONS "Accounts, consents, subscriptions"): per merchant per
 * month in EUR minor units by tier, a year costs 10 months, and in HardwareDevice mode
 * a floor of 1000 per active location (pricesFor). Proration is by the remaining seconds of the current period.
 */
export interface PriceList {
  perMerchantMonthly: Readonly<Record<PaidTier, number>>;
  /** Months charged for a yearly period. */
  yearlyMonths: number;
  /** Minimum monthly amount per active location (the HardwareDevice floor). */
  locationFloorMonthly: number;
}

export const DEFAULT_PRICES: PriceList = Object.freeze({
  perMerchantMonthly: Object.freeze({ starter: 1500, growth: 1200, scale: 900, enterprise: 700 }),
  yearlyMonths: 10,
  locationFloorMonthly: 1000,
});

/**
 * The price list of a deployment: the HardwareDevice floor applies where a certified
 * signing device signs (SIGNING_DEVICE=pkcs11, the spec's HardwareDevice mode: "a
 * per-location pricing floor of 10 EUR per location applies"); elsewhere it is 0.
 */
export function pricesFor(o: { hardwareDevice: boolean }, base: PriceList = DEFAULT_PRICES): PriceList {
  return o.hardwareDevice ? base : Object.freeze({ ...base, locationFloorMonthly: 0 });
}

/** A merchant count above this is refused: it keeps every amount a safe integer (and no real account comes near). */
export const MAX_MERCHANT_COUNT = 1_000_000;

export interface Quote {
  tier: PaidTier;
  /** What a month costs: merchants × the tier's price, raised to the location floor. */
  monthlyAmount: number;
  /** What one billing period costs (a month, or yearlyMonths months). */
  periodAmount: number;
}

/**
 * The whole count is priced at its tier's rate (volume pricing, not graduated): 11 merchants
 * cost 11 × 1200. In HardwareDevice mode the floor counts active locations, which may
 * exceed the merchants subscribed: a location is a device billed at least 1000 a month.
 */
export function quote(merchantCount: number, interval: BillingInterval, activeLocations: number, prices: PriceList = DEFAULT_PRICES): Quote {
  const tier = tierForMerchantCount(merchantCount);
  const monthlyAmount = Math.max(merchantCount * prices.perMerchantMonthly[tier], activeLocations * prices.locationFloorMonthly);
  const periodAmount = interval === 'year' ? monthlyAmount * prices.yearlyMonths : monthlyAmount;
  return { tier, monthlyAmount, periodAmount };
}

/** Adds calendar months in UTC, clamped to the target month's last day (Jan 31 + 1 month = Feb 28/29). */
export function addMonthsUtc(d: Date, months: number): Date {
  const day = d.getUTCDate();
  const t = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + months, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()));
  const last = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 0)).getUTCDate();
  t.setUTCDate(Math.min(day, last));
  return t;
}

/**
 * The billing period containing `now`, for a subscription anchored at `anchor`: periods
 * are anchor + k months (or k×12), each counted from the anchor (not from the previous
 * period's end, so a 31st anchor does not drift to the 28th forever).
 */
export function periodAt(anchor: Date, interval: BillingInterval, now: Date): { start: Date; end: Date } {
  const step = interval === 'year' ? 12 : 1;
  let k = 0;
  // Start near the answer, then adjust: at most a few iterations.
  const approx = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  k = Math.max(0, Math.floor(approx / step) - 1);
  while (addMonthsUtc(anchor, (k + 1) * step).getTime() <= now.getTime()) k++;
  while (k > 0 && addMonthsUtc(anchor, k * step).getTime() > now.getTime()) k--;
  return { start: addMonthsUtc(anchor, k * step), end: addMonthsUtc(anchor, (k + 1) * step) };
}

export interface Proration {
  /** Signed: positive is charged now, negative credited. */
  amount: number;
  remainingSeconds: number;
  periodSeconds: number;
}

/**
 * The prorated difference for changing from `fromPeriodAmount` to `toPeriodAmount` at `now`
 * within [start, end): (to − from) × remaining / period, in whole seconds, rounded half away
 * from zero to the minor unit. BigInt: amount × seconds can pass 2^53.
 */
export function prorate(fromPeriodAmount: number, toPeriodAmount: number, period: { start: Date; end: Date }, now: Date): Proration {
  const periodSeconds = Math.round((period.end.getTime() - period.start.getTime()) / 1000);
  const remainingSeconds = Math.min(periodSeconds, Math.max(0, Math.floor((period.end.getTime() - now.getTime()) / 1000)));
  const delta = BigInt(toPeriodAmount - fromPeriodAmount);
  const num = delta * BigInt(remainingSeconds);
  const den = BigInt(periodSeconds);
  const abs = num < 0n ? -num : num;
  let q = abs / den;
  if ((abs % den) * 2n >= den) q += 1n;
  return { amount: Number(num < 0n ? -q : q), remainingSeconds, periodSeconds };
}
