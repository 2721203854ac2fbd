import { describe, expect, it } from 'vitest';
import { verifactu } from '../es-verifactu/index.ts';
import { draft, location, txCtx } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { ORIGINAL_DATE_FUTURE, checkOriginalNotLater } from './corrected-invoice.ts';

describe('the corrected invoice is not dated after its correction (corrected-invoice.ts)', () => {
  const now = new Date('2026-01-15T10:00:00Z');
  it('today (Madrid) and earlier are taken; a later day is a 400', () => {
    expect(() => checkOriginalNotLater('15-01-2026', now)).not.toThrow();
    expect(() => checkOriginalNotLater('31-12-2025', now)).not.toThrow();
    expect(() => checkOriginalNotLater(undefined, now)).not.toThrow();
    expect400(() => checkOriginalNotLater('16-01-2026', now), ORIGINAL_DATE_FUTURE);
    expect400(() => checkOriginalNotLater('01-01-2027', now), ORIGINAL_DATE_FUTURE);
    // Compared as dates, not as DD-MM-YYYY text: 14-02-2026 is later than 15-01-2026.
    expect400(() => checkOriginalNotLater('14-02-2026', now), ORIGINAL_DATE_FUTURE);
  });

  it('"today" is Madrid\'s: at 00:30 in Madrid (23:30 UTC) the new day is already taken', () => {
    const lateEvening = new Date('2026-01-15T23:30:00Z');
    expect(() => checkOriginalNotLater('16-01-2026', lateEvening)).not.toThrow();
    expect400(() => checkOriginalNotLater('17-01-2026', lateEvening), ORIGINAL_DATE_FUTURE);
  });

  it('VERI*FACTU: a refund naming an original dated after today is a 400 at validation', () => {
    const loc = location('es-verifactu');
    const refund = (date: string) => draft({ type: 'refund', metadata: { original_invoice_number: 'A-7', original_issue_date: date } });
    expect400(() => verifactu.validateTransaction(refund('16-01-2026'), txCtx(loc, now)), ORIGINAL_DATE_FUTURE);
    expect(verifactu.validateTransaction(refund('15-01-2026'), txCtx(loc, now))).toMatchObject({ original_issue_date: '15-01-2026', invoice_type: 'R5' });
  });
});
