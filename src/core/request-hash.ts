import { sha256Hex, stableHash, stableStringify } from './stable-json.ts';

/**
 * The idempotency hash of a create (`transactions.request_hash`), and the test of whether
 * a request sent again under a key is the request that key already holds.
 *
 * The rule is unchanged: the same key with the same request (the same JSON value and the
 * same sandbox header, however its keys are ordered or spaced) answers the transaction
 * it made; with another request, a 409. What changed is the cost on the create path. The
 * hash used to be the SHA-256 of the body re-written with sorted keys (stable-json.ts): on
 * the benchmark machine ~3 % of the request thread's time and ~8 % of the bytes it
 * allocated per create (V8 CPU and allocation profiles, docs/decisions.md session 29),
 * paid by every create to serve the rare retry. Now a create hashes the text it was sent
 * as it came (`r1:`), one native call; the canonical comparison runs only when a retry's
 * text differs from the first request's, against the body stored with the transaction
 * (`request_payload`).
 *
 * Hashes stored before `r1:` (64 hex characters: the stable hash of `{ body, sandbox }`)
 * are still compared the old way.
 *
 * The correction endpoint (POST /v1/transactions/{id}/correct, services/corrections.ts)
 * keeps its requests' hashes the same way; it passes the JSON value to compare (the
 * request as it read it) and how its hashes were made before `r1:` (`LegacyHash`).
 */

/** A create's request as it came: the parsed body, its JSON text when the HTTP layer has it, the sandbox header. */
export interface IncomingRequest {
  body: unknown;
  /** The body's text as received (after inflation); absent when the body did not come as text (the embedded engine). */
  text?: string | undefined;
  sandbox: string | undefined;
}

/** What a stored transaction keeps of the request that made it. */
export interface StoredRequest {
  request_hash: string;
  request_payload: unknown;
}

const PREFIX = 'r1:';

/** `r1:<sandbox header or nothing>:<SHA-256 of the body's text>`; the sandbox header holds no `:` (it is checked first). */
export function requestHash(r: IncomingRequest): string {
  return `${PREFIX}${r.sandbox ?? ''}:${sha256Hex(r.text ?? JSON.stringify(r.body) ?? '')}`;
}

/** How a hash stored before `r1:` was made from the request at hand (64 hex characters). */
export type LegacyHash = (r: IncomingRequest) => string;

/** A create's hash before `r1:`: the stable hash of the body and the sandbox header. */
const createLegacyHash: LegacyHash = (r) => stableHash({ body: r.body, sandbox: r.sandbox ?? null });

/** Whether `r` is the request `stored` was made by (see the file comment). */
export function sameRequest(stored: StoredRequest, r: IncomingRequest, hash: string = requestHash(r), legacyHash: LegacyHash = createLegacyHash): boolean {
  if (!stored.request_hash.startsWith(PREFIX)) return stored.request_hash === legacyHash(r);
  if (stored.request_hash === hash) return true;
  // The text differs: the same request only if the same sandbox header and the same JSON value.
  const sandboxOf = (h: string) => h.slice(PREFIX.length, h.lastIndexOf(':'));
  return sandboxOf(stored.request_hash) === sandboxOf(hash) && stableStringify(stored.request_payload) === stableStringify(r.body);
}
