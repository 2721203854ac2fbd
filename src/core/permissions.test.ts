import { describe, expect, it } from 'vitest';
import { allowsCountry, covers, hasPermission, unknownPermissions } from './permissions.ts';

describe('permissions', () => {
  it('root holds everything', () => {
    expect(hasPermission(null, 'locations:write')).toBe(true);
    expect(allowsCountry(null, 'GR')).toBe(true);
    expect(covers(null, null)).toBe(true);
  });

  it('restricted keys hold only what they list', () => {
    expect(hasPermission(['locations:read'], 'locations:write')).toBe(false);
    expect(hasPermission(['locations:read'], 'locations:read')).toBe(true);
  });

  it('country scopes limit where a key acts', () => {
    expect(allowsCountry(['locations:write'], 'IT')).toBe(true);
    expect(allowsCountry(['locations:write', 'country:ES'], 'IT')).toBe(false);
    expect(allowsCountry(['locations:write', 'country:ES'], 'ES')).toBe(true);
  });

  it('a restricted key cannot grant root, more actions, or wider countries', () => {
    const holder = ['locations:read', 'locations:write', 'country:ES'];
    expect(covers(holder, null)).toBe(false);
    expect(covers(holder, ['locations:read', 'country:ES'])).toBe(true);
    expect(covers(holder, ['locations:read'])).toBe(false); // no scope = every country
    expect(covers(holder, ['locations:read', 'country:IT'])).toBe(false);
    expect(covers(holder, ['transactions:write', 'country:ES'])).toBe(false);
    expect(covers(['locations:read'], ['locations:read', 'country:IT'])).toBe(true);
  });

  it('names unknown permissions', () => {
    expect(unknownPermissions(['locations:read', 'admin', 'country:DE'], ['ES', 'IT'])).toEqual(['admin', 'country:DE']);
    expect(unknownPermissions(['country:IT', 'country:FR'], ['ES', 'IT'])).toEqual(['country:FR']);
  });
});
