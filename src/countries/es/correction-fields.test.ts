import { describe, expect, it } from 'vitest';
import { expect400 } from '../shared/test-helpers.ts';
import { checkKeptFields, sameValue } from './correction-fields.ts';

describe('Spanish corrections: metadata kept as stored', () => {
  it('absent and null are the same; values compare by their JSON', () => {
    expect(sameValue(undefined, null)).toBe(true);
    expect(sameValue({ a: 1 }, { a: 1 })).toBe(true);
    expect(sameValue('1', 1)).toBe(false);
  });

  it('passes when every kept field is as stored; 400 naming the first that changed and what the record keeps', () => {
    const stored = { invoice_type: 'F1', series: 'A', invoice_number: '7' };
    expect(() => checkKeptFields({ ...stored, description: 'new' }, stored, ['invoice_type', 'series', 'invoice_number'], 'x')).not.toThrow();
    expect400(
      () => checkKeptFields({ ...stored, series: 'B', invoice_number: '8' }, stored, ['invoice_type', 'series', 'invoice_number'], "the invoice's identity and type"),
      "metadata.series cannot change in a correction: the record keeps the invoice's identity and type (a refund or a cancellation changes them)",
    );
    expect400(() => checkKeptFields({}, { exemption_code: 'E1' }, ['exemption_code'], 'it'), 'metadata.exemption_code cannot change in a correction: the record keeps it (a refund or a cancellation changes them)');
  });
});
