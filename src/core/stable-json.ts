/** JSON with object keys sorted at every level: equal values give equal text (hashing, golden files). */
export function stableStringify(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

/**
 * A copy with every object's keys inserted in sorted order (integer-like keys still come
 * first, in numeric order: JSON.stringify's own rule, which the stored request hashes
 * were made with). A plain loop: `Object.fromEntries` over mapped pairs made the create's
 * idempotency hash cost twice as much (measured), for the same text.
 */
function sortKeys(v: unknown): unknown {
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
