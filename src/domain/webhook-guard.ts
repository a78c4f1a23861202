/**
 * The SSRF guard of scenario webhooks: a `webhookUrl` must not reach the service's own network. Checked when the
 * scenario is written (the literal) and when sent (every address the name resolves to), and the connection goes to
 * the checked address, never to a second resolution, so a re-pointed name is refused too.
 */
import dns from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) match the IPv4 rules. */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) PRIVATE.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated): ::7f00:1 is 127.0.0.1
  ['::ffff:0:0:0', 96], // IPv4-translated (SIIT): ::ffff:0:7f00:1 is 127.0.0.1
  ['64:ff9b::', 96], // NAT64 (well-known prefix): the low 32 bits are an IPv4 address, 127.0.0.1 or 10.x among them
  ['64:ff9b:1::', 48], // local-use NAT64
  ['2002::', 16], // 6to4: bits 16-47 are an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
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

/** dns.lookup's signature, as node:net calls it. */
export type Resolve = (hostname: string, callback: (err: Error | null, addresses: dns.LookupAddress[]) => void) => void;

const systemResolve: Resolve = (hostname, callback) => dns.lookup(hostname, { all: true, verbatim: true }, callback);

export class PrivateTargetRefused extends Error {
  constructor(hostname: string, address: string) {
    super(`refused: ${hostname} resolves to ${address}, a loopback, private or link-local address`);
    this.name = 'PrivateTargetRefused';
  }
}

/**
 * A `lookup` for node:http(s) that resolves the hostname once, refuses it when any of its addresses is private,
 * and hands the checked addresses to the connection (no second resolution between the check and the connect).
 */
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
      // node:net asks for every address (options.all) when it tries the families in turn (autoSelectFamily).
      if (options.all) return callback(null, wanted);
      const chosen = wanted[0] ?? first;
      callback(null, chosen.address, chosen.family);
    });
  };
}

/** Refuses a literal private address at delivery time (node:net connects to a literal without calling lookup). */
export function literalTargetRefusal(url: URL): string | undefined {
  const literal = literalAddress(url.hostname);
  if (literal !== undefined && isPrivateAddress(literal)) return `refused: ${literal} is a loopback, private or link-local address`;
  return undefined;
}
