/** Connects to the checked address, never a second resolution: a re-pointed name is refused too. */
import dns from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved
] as const) PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['::', 96], // IPv4-compatible (::7f00:1)
  ['::ffff:0:0:0', 96], // SIIT (::ffff:0:7f00:1)
  ['64:ff9b::', 96], // NAT64: the low 32 bits are an IPv4 address
  ['64:ff9b:1::', 48], // local-use NAT64
  ['2002::', 16], // 6to4: bits 16-47 are an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local
  ['ff00::', 8], // multicast
] as const) PRIVATE.addSubnet(net, bits, 'ipv6');

function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** URL normalizes 0x7f.1 to 127.0.0.1. */
function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? undefined : bare;
}

const isLocalhost = (hostname: string) => hostname === 'localhost' || hostname.endsWith('.localhost');

export function webhookTargetProblem(url: string, allowPrivate: boolean): string | undefined {
  if (!URL.canParse(url)) return 'must be an http(s) URL';
  const { protocol, username, password, hostname } = new URL(url);
  if (protocol !== 'https:' && protocol !== 'http:') return 'must be an http(s) URL';
  if (username !== '' || password !== '') return 'must not carry credentials (user:password@)';
  if (allowPrivate) return undefined;
  const literal = literalAddress(hostname);
  if (isLocalhost(hostname) || (literal !== undefined && isPrivateAddress(literal))) {
    return 'must not be a loopback, private or link-local address: this service refuses internal webhook targets unless its ' +
      'operator sets WEBHOOK_ALLOW_PRIVATE_TARGETS=1 (for development and tests)';
  }
  return undefined;
}

export type Resolve = (hostname: string, callback: (err: Error | null, addresses: dns.LookupAddress[]) => void) => void;

const systemResolve: Resolve = (hostname, callback) => dns.lookup(hostname, { all: true, verbatim: true }, callback);

export class PrivateTargetRefused extends Error {
  constructor(hostname: string, address: string) {
    super(`refused: ${hostname} resolves to ${address}, a loopback, private or link-local address`);
    this.name = 'PrivateTargetRefused';
  }
}

export function guardedLookup(resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const bad = addresses.find((a) => isPrivateAddress(a.address));
      const first = addresses[0];
      if (bad) return callback(new PrivateTargetRefused(hostname, bad.address), '', 0);
      if (first === undefined) return callback(new Error(`${hostname} has no address`), '', 0);
      const ofFamily = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      const wanted = ofFamily.length > 0 ? ofFamily : addresses;
      // autoSelectFamily asks for every address (options.all).
      if (options.all) return callback(null, wanted);
      const chosen = wanted[0] ?? first;
      callback(null, chosen.address, chosen.family);
    });
  };
}

/** node:net connects to a literal without calling lookup. */
export function literalTargetRefusal(url: URL): string | undefined {
  const literal = literalAddress(url.hostname);
  if (literal !== undefined && isPrivateAddress(literal)) return `refused: ${literal} is a loopback, private or link-local address`;
  return undefined;
}
