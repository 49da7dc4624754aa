import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { SwitchyardError } from '@switchyard/protocol';

// Where an `http` hook may send its payload: the URL allow-list and the address ranges that need it.

/** Address ranges an `http` hook reaches only through a listed URL, each with the words a refusal uses. */
const RESTRICTED: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>]> = [
  ['a loopback address', [['127.0.0.0', 8, 'ipv4'], ['::1', 128, 'ipv6']]],
  ['a private address', [['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['fc00::', 7, 'ipv6']]],
  ['a link-local address', [['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6']]],
  ['a shared (carrier-grade NAT) address', [['100.64.0.0', 10, 'ipv4']]],
  ['an unspecified address', [['0.0.0.0', 8, 'ipv4'], ['::', 128, 'ipv6']]],
  ['a multicast address', [['224.0.0.0', 4, 'ipv4'], ['ff00::', 8, 'ipv6']]],
  [
    'a reserved address',
    [
      ['240.0.0.0', 4, 'ipv4'],
      ['192.0.0.0', 24, 'ipv4'],
      ['192.0.2.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['2001:db8::', 32, 'ipv6'],
      ['100::', 64, 'ipv6'],
      // IPv4-compatible and NAT64 forms can carry any IPv4 address, a private one included
      ['::', 96, 'ipv6'],
      ['64:ff9b::', 96, 'ipv6'],
    ],
  ],
];

const RANGES = RESTRICTED.map(([words, subnets]) => {
  const list = new BlockList();
  for (const [network, prefix, type] of subnets) list.addSubnet(network, prefix, type);
  return [words, list] as const;
});

/**
 * What kind of restricted address `address` is (`'a loopback address'`, …), or `undefined` for a
 * public one. IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
export function restrictedRange(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  return RANGES.find(([, list]) => list.check(address, type))?.[0];
}

/** The URL as hooks' labels, events and errors show it: scheme, host, port and path, never credentials, query or fragment. */
export function redactUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

/** An `http` or `https` URL without credentials, or why `raw` is not one (never echoing credentials, query or fragment). */
export function parseHookUrl(raw: string): { url: URL } | { problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'is not a URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `${redactUrl(url)} is not an http or https URL` };
  if (url.username !== '' || url.password !== '') return { problem: `${redactUrl(url)} carries credentials in the URL (put them in \`headers\`, e.g. from an allowed environment variable)` };
  return { url };
}

/** Parses `allowedHttpHookUrls`; an entry that is not an http(s) URL prefix is a `CONFIG` error naming it. */
export function parseAllowList(entries: readonly string[] | undefined): readonly URL[] | undefined {
  if (entries === undefined) return undefined;
  return entries.map((entry, index) => {
    const parsed = parseHookUrl(entry);
    const problem = 'problem' in parsed ? parsed.problem : parsed.url.search !== '' || parsed.url.hash !== '' ? 'has a query or fragment (an entry is a URL prefix)' : undefined;
    if (problem) throw new SwitchyardError('CONFIG', `createHookEngine: allowedHttpHookUrls[${index}] ${problem}`);
    return (parsed as { url: URL }).url;
  });
}

/**
 * True when `url` falls under an allowed prefix: the same scheme, host and port, and a path equal
 * to the prefix's or below it at a segment boundary (`https://h/hooks` covers `/hooks` and
 * `/hooks/pre`, not `/hooks-admin`). Compared on parsed, normalized URLs, so `..` segments,
 * letter case in the host and default ports cannot slip past a prefix.
 */
export function isListed(url: URL, allowed: readonly URL[] | undefined): boolean {
  if (!allowed) return false;
  return allowed.some((prefix) => {
    if (prefix.protocol !== url.protocol || prefix.hostname !== url.hostname || prefix.port !== url.port) return false;
    const base = prefix.pathname;
    if (base === '/' || url.pathname === base) return true;
    return url.pathname.startsWith(base.endsWith('/') ? base : `${base}/`);
  });
}

/** The host of a URL as an address (`[::1]` → `::1`), or `undefined` for a name. */
function literalAddress(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? undefined : host;
}

/** The refusal of an address outside the allowed ranges. */
function refusal(url: URL, address: string, range: string): string {
  const shown = literalAddress(url) === address ? redactUrl(url) : `${redactUrl(url)} (resolved to ${address})`;
  return `http hook refused: ${shown} is ${range}; list the URL in allowedHttpHookUrls to allow it`;
}

/**
 * Why `url` may not be called before anything is resolved: unlisted while a list is set, or a
 * literal address in a restricted range while it is not listed. `undefined` when the URL may go on
 * to its connection (where a resolved name is checked again, by {@link guardedLookup}).
 */
export function urlRefusal(url: URL, allowed: readonly URL[] | undefined): string | undefined {
  if (isListed(url, allowed)) return undefined;
  if (allowed) return `http hook refused: ${redactUrl(url)} is not in allowedHttpHookUrls`;
  const address = literalAddress(url);
  const range = address === undefined ? undefined : restrictedRange(address);
  return range && address !== undefined ? refusal(url, address, range) : undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `node:http` that resolves like `dns.lookup` and refuses the connection when any
 * address the name resolves to is restricted: the address checked is the address connected to, so
 * a name that resolves to 127.0.0.1 (or that changes its answer between a check and the connect)
 * cannot reach a loopback service. Used only for URLs that are not listed.
 */
export function guardedLookup(url: URL) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      for (const { address } of addresses) {
        const range = restrictedRange(address);
        if (range) return callback(Object.assign(new Error(refusal(url, address, range)), { code: 'EHOOKREFUSED' }), '');
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
