/**
 * Portugal: documents are signed locally and reported in the monthly SAF-T file, not
 * per transaction, so there is no per-transaction authority answer and no code table.
 */
import type { AuthorityCode } from '../types.ts';

export const SAFT_CODES: Readonly<Record<string, AuthorityCode>> = {};
