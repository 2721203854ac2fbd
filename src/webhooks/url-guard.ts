import dns from 'node:dns';
import net from 'node:net';

/**
 * Which webhook URLs the service will call (DECISIONS "Events and webhooks", SSRF).
 *
 * - https only. Plain http only to loopback, and only when insecure webhooks are allowed
 *   (`WEBHOOK_ALLOW_INSECURE`: on by default in local mode, off in the cloud).
 * - Cloud mode refuses every target that is not a public address: private (RFC 1918),
 *   loopback (unless insecure webhooks are allowed: the documented dev/test setting),
 *   link-local and cloud metadata (169.254.169.254, fd00:ec2::254), carrier-grade NAT,
 *   unique-local and site-local IPv6, unspecified, multicast, documentation and other
 *   reserved ranges, and IPv6 forms that embed one of those IPv4 addresses (mapped,
 *   compatible, NAT64, 6to4). `localhost` names are loopback.
 * - Checked twice: at registration (literal addresses, and names through DNS) and at
 *   every delivery, where the connection is made only to the addresses the check just
 *   approved (`guardedLookup` is the socket's resolver), so a name that changes its
 *   answer between check and connect (DNS rebinding) cannot slip through.
 * - Local mode (a POS on a shop's network) may call LAN addresses, over https.
 */
export interface UrlPolicy {
  mode: 'cloud' | 'local';
  allowInsecure: boolean;
}

export type AddressClass =
  | 'public' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'cgnat' | 'unique-local'
  | 'unspecified' | 'multicast' | 'reserved';

export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const defaultLookup: LookupAll = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export const MAX_URL_LENGTH = 2048;

/** A refused URL; `message` is the client-facing text, always starting with `invalid url`. */
export class WebhookUrlError extends Error {
  constructor(reason?: string) {
    super(reason ? `invalid url: ${reason}` : 'invalid url');
    this.name = 'WebhookUrlError';
  }
}

const LABEL: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  'link-local': 'a link-local address',
  metadata: 'a cloud metadata address',
  cgnat: 'a carrier-grade NAT (shared) address',
  'unique-local': 'a unique-local IPv6 address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
};

const V4_RANGES: Array<[string, number, AddressClass]> = [
  ['169.254.169.254', 32, 'metadata'],
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'cgnat'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

const V6_RANGES: Array<[string, number, AddressClass]> = [
  ['fd00:ec2::254', 128, 'metadata'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['64:ff9b:1::', 48, 'reserved'],
  ['100::', 64, 'reserved'],
  ['2001::', 32, 'reserved'], // Teredo: the client address inside is obfuscated
  ['2001:db8::', 32, 'reserved'],
  ['fc00::', 7, 'unique-local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'],
  ['ff00::', 8, 'multicast'],
];

function matcherOf(ranges: Array<[string, number, AddressClass]>, type: 'ipv4' | 'ipv6') {
  const lists = ranges.map(([net0, prefix, cls]) => {
    const bl = new net.BlockList();
    bl.addSubnet(net0, prefix, type);
    return [bl, cls] as const;
  });
  return (ip: string): AddressClass => lists.find(([bl]) => bl.check(ip, type))?.[1] ?? 'public';
}
const classifyV4 = matcherOf(V4_RANGES, 'ipv4');
const classifyV6Only = matcherOf(V6_RANGES, 'ipv6');

/** 16 bytes of an IPv6 address (zone id dropped), or null when it is not one. */
export function ipv6Bytes(ip: string): Buffer | null {
  let text = ip.replace(/%.*$/, '');
  if (net.isIPv6(text) === false) return null;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) return null;
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2));
  return out;
}

const v4Of = (b: Buffer, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;

/** What kind of address this is ('public' = none of the special ranges). */
export function classifyAddress(ip: string): AddressClass {
  const kind = net.isIP(ip.replace(/%.*$/, ''));
  if (kind === 4) return classifyV4(ip);
  if (kind !== 6) return 'reserved';
  const b = ipv6Bytes(ip);
  if (!b) return 'reserved';
  const zero = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  // IPv6 forms that carry an IPv4 address: judge the IPv4 address.
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return classifyV4(v4Of(b, 12)); // ::ffff:a.b.c.d
  // ::a.b.c.d (IPv4-compatible, deprecated); :: and ::1 are themselves.
  if (zero(0, 12) && !(zero(12, 15) && (b[15] === 0 || b[15] === 1))) return classifyV4(v4Of(b, 12));
  if (b.readUInt32BE(0) === 0x0064ff9b && zero(4, 12)) return classifyV4(v4Of(b, 12)); // NAT64 64:ff9b::/96
  if (b.readUInt16BE(0) === 0x2002) return classifyV4(v4Of(b, 2)); // 6to4
  return classifyV6Only(ip.replace(/%.*$/, ''));
}

/** `localhost`, `foo.localhost` (RFC 6761), with or without the root dot. */
export const isLocalhostName = (host: string): boolean => /(^|\.)localhost\.?$/i.test(host);

/**
 * May a connection go to this address under this policy? The refusal reason, or null.
 * `name`: the host name the address was resolved from, for the message.
 */
export function addressRefusal(ip: string, policy: UrlPolicy, plainHttp: boolean, name?: string): string | null {
  const cls = classifyAddress(ip);
  if (plainHttp && cls !== 'loopback') {
    return `${name ? `${name} resolves to ${ip}: ` : ''}https is required (plain http only to loopback addresses)`;
  }
  if (policy.mode !== 'cloud' || cls === 'public') return null;
  if (cls === 'loopback' && policy.allowInsecure) return null;
  return name ? `${name} resolves to ${ip}, ${LABEL[cls]}` : `${ip} is ${LABEL[cls]}`;
}

export interface ParsedWebhookUrl {
  url: URL;
  /** Host without IPv6 brackets. */
  host: string;
  /** The literal address, when the host is one. */
  ip: string | null;
  plainHttp: boolean;
}

/**
 * The checks that need no DNS: syntax, scheme, credentials, literal addresses and
 * localhost names. Throws WebhookUrlError.
 */
export function parseWebhookUrl(text: string, policy: UrlPolicy): ParsedWebhookUrl {
  if (text.length > MAX_URL_LENGTH) throw new WebhookUrlError(`longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError();
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookUrlError('only https URLs are accepted');
  if (!url.hostname) throw new WebhookUrlError();
  if (url.username || url.password) throw new WebhookUrlError('credentials in the URL are not allowed (authenticate with the signature)');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const ip = net.isIP(host) ? host : null;
  const plainHttp = url.protocol === 'http:';
  if (plainHttp && !policy.allowInsecure) throw new WebhookUrlError('https is required');
  if (ip) {
    const refusal = addressRefusal(ip, policy, plainHttp);
    if (refusal) throw new WebhookUrlError(refusal);
  } else if (isLocalhostName(host)) {
    if (policy.mode === 'cloud' && !policy.allowInsecure) throw new WebhookUrlError(`${host} is a loopback name`);
  } else if (plainHttp) {
    throw new WebhookUrlError('https is required (plain http only to loopback addresses)');
  }
  return { url, host, ip, plainHttp };
}

export interface CheckOptions {
  lookup?: LookupAll | undefined;
  /** How long registration waits for DNS (default 3 s). */
  dnsTimeoutMs?: number | undefined;
}

/**
 * Registration check. In the cloud a name is resolved and every address it has must be
 * acceptable. A name that does not resolve (yet) is accepted: DNS is often set up after
 * the webhook, and every delivery checks again before it connects.
 */
export async function checkWebhookUrl(text: string, policy: UrlPolicy, opts: CheckOptions = {}): Promise<ParsedWebhookUrl> {
  const parsed = parseWebhookUrl(text, policy);
  if (parsed.ip || policy.mode !== 'cloud') return parsed;
  const lookup = opts.lookup ?? defaultLookup;
  let addresses: Array<{ address: string }>;
  let timer: NodeJS.Timeout | undefined;
  try {
    addresses = await Promise.race([
      lookup(parsed.host),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('DNS timeout')), opts.dnsTimeoutMs ?? 3_000);
      }),
    ]);
  } catch {
    return parsed;
  } finally {
    clearTimeout(timer);
  }
  for (const a of addresses) {
    const refusal = addressRefusal(a.address, policy, parsed.plainHttp, parsed.host);
    if (refusal) throw new WebhookUrlError(refusal);
  }
  return parsed;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;

/**
 * The resolver for a delivery's socket (`lookup` option of http.request): resolves the
 * name, refuses the connection when any address is not acceptable, and hands the socket
 * only the addresses it checked — the connection goes to a checked address, whatever
 * the name answers a moment later.
 */
export function guardedLookup(policy: UrlPolicy, plainHttp: boolean, lookup: LookupAll = defaultLookup) {
  return (hostname: string, options: { all?: boolean } | number | undefined, callback: LookupCallback): void => {
    lookup(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
        for (const a of addresses) {
          const refusal = addressRefusal(a.address, policy, plainHttp, hostname);
          if (refusal) return callback(Object.assign(new WebhookUrlError(refusal), { code: 'EWEBHOOKURL' }), '');
        }
        if (typeof options === 'object' && options?.all) return callback(null, addresses);
        const first = addresses[0]!;
        return callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}
