import { describe, expect, it } from 'vitest';
import { isLoopbackAddress, loopbackClient, tokenMatches } from './http.ts';

describe('isLoopbackAddress', () => {
  it('takes 127.0.0.0/8 and ::1, also IPv4-mapped', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::FFFF:127.0.0.2']) expect(isLoopbackAddress(a), a).toBe(true);
  });
  it('refuses everything else', () => {
    for (const a of [undefined, '', '10.0.0.1', '128.0.0.1', '::ffff:10.0.0.1', '::2', 'fe80::1', '1127.0.0.1', '127.0.0.1.evil', 'localhost']) {
      expect(isLoopbackAddress(a), String(a)).toBe(false);
    }
  });
});

describe('loopbackClient', () => {
  const req = (remoteAddress: string, headers: Record<string, string> = {}) => ({ headers, socket: { remoteAddress } });
  it('a loopback peer without forwarding headers', () => {
    expect(loopbackClient(req('127.0.0.1'))).toBe(true);
  });
  it('a loopback peer forwarding someone else (a proxy on this machine) is not one', () => {
    expect(loopbackClient(req('127.0.0.1', { 'x-forwarded-for': '203.0.113.1' }))).toBe(false);
    expect(loopbackClient(req('127.0.0.1', { forwarded: 'for=203.0.113.1' }))).toBe(false);
    expect(loopbackClient(req('127.0.0.1', { 'x-real-ip': '203.0.113.1' }))).toBe(false);
  });
  it('a remote peer, whatever it says', () => {
    expect(loopbackClient(req('192.0.2.7', { 'x-forwarded-for': '127.0.0.1' }))).toBe(false);
  });
});

describe('tokenMatches', () => {
  const token = 'abcdefghijklmnop0123';
  it('the bearer token, case-insensitive scheme', () => {
    expect(tokenMatches(`Bearer ${token}`, token)).toBe(true);
    expect(tokenMatches(`bearer ${token}`, token)).toBe(true);
  });
  it('anything else is refused', () => {
    for (const h of [undefined, '', token, `Basic ${token}`, `Bearer ${token}x`, `Bearer ${token.slice(1)}`, 'Bearer ', `Bearer ${token} extra`]) {
      expect(tokenMatches(h, token), String(h)).toBe(false);
    }
  });
});
