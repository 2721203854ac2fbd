/**
 * France NF525: records are signed locally and never sent per transaction, so there is
 * no authority answer and no code table.
 */
import type { AuthorityCode } from '../types.ts';

export const NF525_CODES: Readonly<Record<string, AuthorityCode>> = {};
