import { describe, expect, it } from 'vitest';
import { fieldOfMessage } from './pages.ts';

describe('fieldOfMessage', () => {
  const fields = ['country_config', 'tax_id', 'country', 'address', 'name'];
  it('names the first form field the message mentions as a word', () => {
    expect(fieldOfMessage('country_config.legal_name is required for France locations', fields)).toBe('country_config');
    expect(fieldOfMessage('Spain locations require country_config with system field (ticketbai, verifactu or sii)', fields)).toBe('country_config');
    expect(fieldOfMessage('country must be one of ES, IT, FR, PT, GR', fields)).toBe('country');
    expect(fieldOfMessage('tax_id cannot be changed', fields)).toBe('tax_id');
    expect(fieldOfMessage('name is required', fields)).toBe('name');
  });
  it('a field name inside another word does not count; no field → undefined (the message goes above the form)', () => {
    expect(fieldOfMessage('legal_name is required', fields)).toBeUndefined();
    expect(fieldOfMessage('API key is not allowed to act in this place', fields)).toBeUndefined();
  });
});
