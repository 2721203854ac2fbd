import crypto from 'node:crypto';

/**
 * JSON with object keys sorted at every level: equal values give equal text (hashing, golden files).
 *
 * The text is exactly `JSON.stringify(sortKeys(value))` (the stored request hashes were made
 * with it, so it must never change): plain objects and arrays are written here without
 * building the sorted copy (the create's idempotency hash spent half its time allocating
 * it); anything else (a Date, an object with integer-like keys, whose order JSON.stringify
 * decides) is handed to that same expression.
 */
export function stableStringify(value: unknown): string {
  return write(value) ?? JSON.stringify(sortKeys(value));
}

/** The hex SHA-256 of `stableStringify(value)`. */
export function stableHash(value: unknown): string {
  return sha256Hex(stableStringify(value));
}

/** One-shot hashing where the runtime has it (Node 20.12+): no Hash object per call. */
export const sha256Hex: (text: string) => string = typeof (crypto as { hash?: unknown }).hash === 'function'
  ? (text) => crypto.hash('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text).digest('hex');

/** What JSON.stringify escapes in a string: quotes, backslashes, control characters, surrogates (lone ones). */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;
/** A string as JSON.stringify quotes it (most need no escape: no call into it). */
const quoted = (s: string): string => (ESCAPED.test(s) ? JSON.stringify(s) : `"${s}"`);

/** `value` as JSON.stringify(sortKeys(value)) writes it; undefined where JSON.stringify writes nothing. */
function write(v: unknown): string | undefined {
  if (typeof v === 'string') return quoted(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ',';
      // An array writes null where JSON.stringify skips a value (undefined, a function).
      out += write(v[i]) ?? 'null';
    }
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  // Not a plain object, or one with its own toJSON (the copy keeps it, and JSON.stringify calls it).
  if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function') return JSON.stringify(sortKeys(v));
  const keys = Object.keys(v).sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    // An integer-like key ("0", "12"): JSON.stringify writes those first, in numeric order.
    const c = k.charCodeAt(0);
    if (c >= 48 && c <= 57) return JSON.stringify(sortKeys(v));
    const text = write((v as Record<string, unknown>)[k]);
    if (text === undefined) continue;
    out += `${first ? '' : ','}${quoted(k)}:${text}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * A copy with every object's keys inserted in sorted order (integer-like keys still come
 * first, in numeric order: JSON.stringify's own rule, which the stored request hashes
 * were made with). A plain loop: `Object.fromEntries` over mapped pairs made the create's
 * idempotency hash cost twice as much (measured), for the same text.
 */
export function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) {
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = sortKeys(v[i]);
    return out;
  }
  if (v && typeof v === 'object' && !(v instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = sortKeys((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}
