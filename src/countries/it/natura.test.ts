import { describe, it, expect } from 'vitest';
import { checkNatura } from './natura.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, line } from '../shared/test-fixtures.ts';

const zero = line({ tax_rate: 0, tax_amount: 0, total_amount: 1000 });

describe('Natura on Italian lines', () => {
  it.each(['N1', 'N2', 'N2.2', 'N3.1', 'N3.6', 'N4', 'N5', 'N6', 'N6.9'])('accepts %s on a 0 %% line', (natura) => {
    expect(() => checkNatura(draft({ items: [line(), { ...zero, natura }] }))).not.toThrow();
  });
  it('requires it on a 0 % line, naming the line', () => {
    expect400(() => checkNatura(draft({ items: [line(), zero] })), 'items[1].natura is required when tax_rate is 0 (N1-N6)');
  });
  it.each(['N7', 'N3.7', 'n4', 'N2.3', 'X'])('refuses %s', (natura) => {
    expect400(() => checkNatura(draft({ items: [{ ...zero, natura }] })), 'items[0].natura must be a valid Natura code (N1-N6 and subcodes)');
  });
  it('refuses a natura on a taxed line', () => {
    expect400(() => checkNatura(draft({ items: [line({ natura: 'N4' })] })), 'items[0].natura is only allowed when tax_rate is 0');
  });
});
