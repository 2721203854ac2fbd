import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkWebhookUrl, classifyAddress, guardedLookup, parseWebhookUrl, WebhookUrlError, type LookupAll, type UrlPolicy,
} from './url-guard.ts';

const STRICT: UrlPolicy = { mode: 'cloud', allowInsecure: false };
const CLOUD_INSECURE: UrlPolicy = { mode: 'cloud', allowInsecure: true };
const LOCAL: UrlPolicy = { mode: 'local', allowInsecure: true };

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(WebhookUrlError);
    return (e as Error).message;
  }
  return 'accepted';
};
const refusalAsync = async (p: Promise<unknown>) => p.then(() => 'accepted', (e: Error) => e.message);
const fakeDns = (table: Record<string, string[]>): LookupAll => async (host) => {
  const list = table[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'], ['1.1.1.1', 'public'], ['2606:4700:4700::1111', 'public'],
    ['10.0.0.1', 'private'], ['172.16.5.4', 'private'], ['172.31.255.255', 'private'], ['192.168.1.1', 'private'],
    ['172.32.0.1', 'public'], ['127.0.0.1', 'loopback'], ['127.255.0.9', 'loopback'], ['::1', 'loopback'],
    ['169.254.169.254', 'metadata'], ['fd00:ec2::254', 'metadata'], ['169.254.10.1', 'link-local'], ['fe80::1', 'link-local'],
    ['100.64.0.1', 'cgnat'], ['100.127.255.254', 'cgnat'], ['100.128.0.1', 'public'], ['fd12:3456::1', 'unique-local'],
    ['fc00::1', 'unique-local'], ['0.0.0.0', 'unspecified'], ['::', 'unspecified'], ['224.0.0.1', 'multicast'], ['ff02::1', 'multicast'],
    ['255.255.255.255', 'reserved'], ['192.0.2.1', 'reserved'], ['2001:db8::1', 'reserved'],
    // IPv6 forms carrying an IPv4 address are judged by that address.
    ['::ffff:10.0.0.1', 'private'], ['::ffff:7f00:1', 'loopback'], ['::ffff:8.8.8.8', 'public'], ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:c0a8:0101::1', 'private'], ['::10.0.0.1', 'private'], ['fe80::1%eth0', 'link-local'],
  ])('%s → %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });
});

describe('parseWebhookUrl (no DNS)', () => {
  it('accepts public https URLs everywhere', () => {
    for (const p of [STRICT, CLOUD_INSECURE, LOCAL]) {
      expect(refusal(() => parseWebhookUrl('https://hooks.example.com/fiscal?x=1', p))).toBe('accepted');
      expect(refusal(() => parseWebhookUrl('https://8.8.8.8:8443/h', p))).toBe('accepted');
    }
  });

  it('syntax, scheme, credentials and length', () => {
    expect(refusal(() => parseWebhookUrl('not a url', STRICT))).toBe('invalid url');
    expect(refusal(() => parseWebhookUrl('/relative', STRICT))).toBe('invalid url');
    expect(refusal(() => parseWebhookUrl('ftp://example.com/x', STRICT))).toBe('invalid url: only https URLs are accepted');
    expect(refusal(() => parseWebhookUrl('javascript:alert(1)', STRICT))).toBe('invalid url: only https URLs are accepted');
    expect(refusal(() => parseWebhookUrl('https://u:p@example.com/', STRICT))).toBe('invalid url: credentials in the URL are not allowed (authenticate with the signature)');
    expect(refusal(() => parseWebhookUrl(`https://example.com/${'a'.repeat(2048)}`, STRICT))).toBe('invalid url: longer than 2048 characters');
  });

  it('plain http: only to loopback, only when insecure webhooks are allowed', () => {
    expect(refusal(() => parseWebhookUrl('http://127.0.0.1:8080/h', STRICT))).toBe('invalid url: https is required');
    expect(refusal(() => parseWebhookUrl('http://example.com/h', STRICT))).toBe('invalid url: https is required');
    expect(refusal(() => parseWebhookUrl('http://127.0.0.1:8080/h', CLOUD_INSECURE))).toBe('accepted');
    expect(refusal(() => parseWebhookUrl('http://[::1]:8080/h', CLOUD_INSECURE))).toBe('accepted');
    expect(refusal(() => parseWebhookUrl('http://localhost:8080/h', LOCAL))).toBe('accepted');
    const plain = 'invalid url: https is required (plain http only to loopback addresses)';
    expect(refusal(() => parseWebhookUrl('http://example.com/h', CLOUD_INSECURE))).toBe(plain);
    expect(refusal(() => parseWebhookUrl('http://192.168.1.20/h', LOCAL))).toBe(plain);
    expect(refusal(() => parseWebhookUrl('http://10.0.0.5/h', CLOUD_INSECURE))).toBe(plain);
  });

  it('cloud mode refuses non-public literal addresses (obfuscated forms too) and localhost names', () => {
    const cases: Array<[string, string]> = [
      ['https://10.0.0.5/h', '10.0.0.5 is a private address'],
      ['https://192.168.1.10/h', '192.168.1.10 is a private address'],
      ['https://172.16.0.1/h', '172.16.0.1 is a private address'],
      ['https://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
      ['https://169.254.1.1/', '169.254.1.1 is a link-local address'],
      ['https://100.64.0.1/', '100.64.0.1 is a carrier-grade NAT (shared) address'],
      ['https://127.0.0.1/', '127.0.0.1 is a loopback address'],
      ['https://0x7f.1/', '127.0.0.1 is a loopback address'],
      ['https://2130706433/', '127.0.0.1 is a loopback address'],
      ['https://0.0.0.0/', '0.0.0.0 is an unspecified address'],
      ['https://[::1]/', '::1 is a loopback address'],
      ['https://[fd00::1]/', 'fd00::1 is a unique-local IPv6 address'],
      ['https://[fe80::1]/', 'fe80::1 is a link-local address'],
      ['https://[::ffff:10.0.0.1]/', '::ffff:a00:1 is a private address'],
      ['https://localhost/h', 'localhost is a loopback name'],
      ['https://api.localhost/h', 'api.localhost is a loopback name'],
      ['https://LOCALHOST./h', 'localhost. is a loopback name'],
    ];
    for (const [url, reason] of cases) expect(refusal(() => parseWebhookUrl(url, STRICT)), url).toBe(`invalid url: ${reason}`);
  });

  it('insecure cloud (dev/test) allows loopback but still refuses private, link-local and metadata targets', () => {
    expect(refusal(() => parseWebhookUrl('https://127.0.0.1/', CLOUD_INSECURE))).toBe('accepted');
    expect(refusal(() => parseWebhookUrl('https://localhost/', CLOUD_INSECURE))).toBe('accepted');
    expect(refusal(() => parseWebhookUrl('https://10.1.2.3/', CLOUD_INSECURE))).toBe('invalid url: 10.1.2.3 is a private address');
    expect(refusal(() => parseWebhookUrl('https://192.168.0.1/', CLOUD_INSECURE))).toBe('invalid url: 192.168.0.1 is a private address');
    expect(refusal(() => parseWebhookUrl('https://169.254.169.254/', CLOUD_INSECURE))).toBe('invalid url: 169.254.169.254 is a cloud metadata address');
  });

  it('local mode (a POS on a shop network) may call LAN addresses over https', () => {
    expect(refusal(() => parseWebhookUrl('https://192.168.1.20/h', LOCAL))).toBe('accepted');
    expect(refusal(() => parseWebhookUrl('https://10.0.0.5/h', LOCAL))).toBe('accepted');
  });
});

describe('checkWebhookUrl (registration, with DNS)', () => {
  const dns = fakeDns({
    'public.example': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'internal.example': ['10.0.0.7'],
    'mixed.example': ['93.184.216.34', '169.254.169.254'],
    'loop.example': ['127.0.0.1'],
  });

  it('cloud: a name is refused when any of its addresses is not public', async () => {
    expect(await refusalAsync(checkWebhookUrl('https://public.example/h', STRICT, { lookup: dns }))).toBe('accepted');
    expect(await refusalAsync(checkWebhookUrl('https://internal.example/h', STRICT, { lookup: dns })))
      .toBe('invalid url: internal.example resolves to 10.0.0.7, a private address');
    expect(await refusalAsync(checkWebhookUrl('https://mixed.example/h', STRICT, { lookup: dns })))
      .toBe('invalid url: mixed.example resolves to 169.254.169.254, a cloud metadata address');
    expect(await refusalAsync(checkWebhookUrl('https://loop.example/h', STRICT, { lookup: dns })))
      .toBe('invalid url: loop.example resolves to 127.0.0.1, a loopback address');
  });

  it('a name that does not resolve (yet) is accepted: delivery checks again', async () => {
    expect(await refusalAsync(checkWebhookUrl('https://nowhere.example/h', STRICT, { lookup: dns }))).toBe('accepted');
    const slow: LookupAll = () => new Promise(() => {});
    expect(await refusalAsync(checkWebhookUrl('https://slow.example/h', STRICT, { lookup: slow, dnsTimeoutMs: 20 }))).toBe('accepted');
  });

  it('local mode does not resolve names', async () => {
    const boom: LookupAll = async () => {
      throw new Error('must not be called');
    };
    expect(await refusalAsync(checkWebhookUrl('https://internal.example/h', LOCAL, { lookup: boom }))).toBe('accepted');
  });
});

describe('guardedLookup (delivery: the socket connects only to checked addresses)', () => {
  let server: http.Server;
  let port = 0;
  let hits = 0;
  beforeAll(async () => {
    server = http.createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const get = (url: string, lookup: ReturnType<typeof guardedLookup>) =>
    new Promise<number | string>((resolve) => {
      const req = http.request(url, { agent: false, lookup: lookup as never }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', (e) => resolve(e.message));
      req.end();
    });

  it('the connection goes where the guarded answer says, and nowhere when an answer is refused', async () => {
    // A name whose answer changes between checks (DNS rebinding): every answer is checked
    // by the resolver the socket itself uses.
    let answer = '127.0.0.1';
    const rebinding: LookupAll = async () => [{ address: answer, family: 4 }];
    const lookup = guardedLookup(CLOUD_INSECURE, true, rebinding);
    expect(await get(`http://rebind.localhost:${port}/`, lookup)).toBe(200);
    expect(hits).toBe(1);
    answer = '10.0.0.9';
    expect(await get(`http://rebind.localhost:${port}/`, lookup)).toBe(
      'invalid url: rebind.localhost resolves to 10.0.0.9: https is required (plain http only to loopback addresses)',
    );
    answer = '169.254.169.254';
    expect(await get(`http://rebind.localhost:${port}/`, guardedLookup(CLOUD_INSECURE, false, rebinding))).toBe(
      'invalid url: rebind.localhost resolves to 169.254.169.254, a cloud metadata address',
    );
    expect(hits).toBe(1);
  });
});
