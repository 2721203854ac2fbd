import { v7 as uuidv7 } from 'uuid';

/**
 * Row ids are UUIDv7 (RFC 9562): a millisecond timestamp first, then random bits. New
 * rows land at the right end of every primary-key index instead of on a random page,
 * which keeps the hot index pages in memory and the WAL small (fewer full-page images)
 * on the write-heavy tables (transactions, fiscal records, jobs, events). The creation
 * time an id reveals is also in the row's own `created_at`.
 */
export const newId = (): string => uuidv7();

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
