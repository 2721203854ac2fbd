import { describe, it, expect } from 'vitest';
import { myData } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, location, txCtx } from '../shared/test-fixtures.ts';

const loc = location('gr-mydata');
const validate = (metadata: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}) =>
  myData.validateTransaction(draft({ metadata, ...over }), txCtx(loc));

describe('gr-mydata validateTransaction', () => {
  it('retail receipt 11.1 for a sale, credit note 11.4 for a refund; series from the config', () => {
    expect(validate({})).toEqual({ invoice_type: '11.1', series: 'A' });
    expect(validate({}, { type: 'refund' })).toEqual({ invoice_type: '11.4', series: 'A' });
    expect(validate({ invoice_type: '11.2', series: 'ΑΠΥ' })).toEqual({ invoice_type: '11.2', series: 'ΑΠΥ' });
  });
  it.each([
    [{ invoice_type: '1.1' }, {}, 'metadata.invoice_type must be one of 11.1, 11.2, 11.3 for a sale'],
    [{ invoice_type: '11.1' }, { type: 'refund' as const }, 'metadata.invoice_type must be 11.4 for refund and void transactions'],
    [{ series: 'A B' }, {}, 'metadata.series must be 1-50 characters without spaces'],
  ])('refuses %j', (meta, over, message) => {
    expect400(() => validate(meta, over), message);
  });
  it('offline grace and inline window', () => {
    expect(myData.capabilities).toMatchObject({ inlineWindowSeconds: 5, offlineGraceSeconds: 604800, submission: 'realtime' });
  });
});
