import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/**
 * Row ids are UUIDv7 (RFC 9562): a millisecond timestamp first, then random bits. New
 * rows land at the right end of every primary-key index instead of on a random page,
 * which keeps the hot index pages in memory and the WAL small (fewer full-page images)
 * on the write-heavy tables (transactions, fiscal records, jobs, events). The creation
 * time an id reveals is also in the row's own `created_at`.
 *
 * The `uuid` package lays the id out; the random bytes come from a pool refilled 4 KiB at
 * a time (its default asks the OS for 16 bytes per id: 4 % of a create's CPU, measured).
 * Ids stay monotonic within this process (RFC 9562 §6.2 method 1, as the package does by
 * itself): within one millisecond a counter follows a random start.
 */
const POOL = Buffer.alloc(4096);
let offset = POOL.length;
function random16(): Uint8Array {
  if (offset + 16 > POOL.length) {
    randomFillSync(POOL);
    offset = 0;
  }
  offset += 16;
  return POOL.subarray(offset - 16, offset);
}

let lastMs = -Infinity;
let seq = 0;
export const newId = (): string => {
  const random = random16();
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    // A random start for the counter (31 bits, its top bit clear to leave room to count).
    seq = ((random[6]! & 0x7f) << 23) | (random[7]! << 15) | (random[8]! << 7) | (random[9]! >> 1);
  } else {
    seq = (seq + 1) | 0;
    if (seq === 0) lastMs++;
  }
  return uuidv7({ random, msecs: lastMs, seq });
};

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
/**
 * An id as we write it (lower case). PostgreSQL's uuid matches either case, so an id in
 * capitals finds the same row, and code comparing ids as strings (the calling key's own
 * id) must see the one spelling.
 */
export const canonicalId = (s: string): string => (UUID_RE.test(s) ? s.toLowerCase() : s);
