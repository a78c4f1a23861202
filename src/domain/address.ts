/**
 * Blockchain address parsing for the execute request's `address` (a string, or `{ address, chain?, namespace? }`).
 *
 * Families handled (CAIP-2 namespaces): eip155 (EVM), tezos, aptos, polkadot, starknet, cosmos, cardano.
 *
 * What is checked, per family:
 * - eip155: `0x` + 40 hex digits. All-lowercase or all-uppercase hex is accepted as is; mixed case must pass the
 *   EIP-55 checksum (keccak-256).
 * - tezos: `tz1|tz2|tz3|tz4|KT1` + 33 base58 characters (shape only; the base58check checksum is not verified).
 * - aptos: `0x` + 1..64 hex digits, any case (short forms such as `0x1` are accepted).
 * - starknet: `0x` + 1..64 hex digits, any case, whose value is below 2^251 (a Starknet felt address).
 * - polkadot: SS58, 46..48 base58 characters (shape only; the blake2b SS58 checksum is not verified).
 * - cosmos: bech32 (BIP-173 checksum verified) with a lowercase alphanumeric human-readable prefix (cosmos, osmo,
 *   juno, ...) other than Cardano's, whose payload is 20 or 32 bytes.
 * - cardano: CIP-19 bech32 with prefix addr, addr_test, stake or stake_test (no 90-character limit); checksum
 *   verified, and the header byte's address type, network tag and payload length must fit the prefix.
 *
 * Without a namespace the family is recognised by shape, in this order: `0x` + 40 hex is EVM; any other `0x` + 1..64
 * hex is reported as **aptos** (a 64-hex value could also be a Starknet address: give `namespace: 'starknet'` or a
 * `starknet:` chain to have it read as one); then Tezos; then bech32 (Cardano prefixes, else Cosmos); then SS58.
 *
 * `chain` is a CAIP-2 id (`namespace:reference`, e.g. `eip155:1`). Its namespace and `namespace` must agree when both
 * are given; either one then fixes the family and the address must fit it. The CAIP namespace `cip34` (Cardano's
 * registered CAIP-2 namespace, e.g. `cip34:1-764824073`) is read as `cardano`.
 *
 * The returned `address` is always the input string unchanged (no case normalisation); strings with leading or
 * trailing whitespace are rejected rather than trimmed. `parseAddress` never throws.
 */
import { keccak_256 } from '@noble/hashes/sha3';

export type AddressNamespace = 'eip155' | 'tezos' | 'aptos' | 'polkadot' | 'starknet' | 'cosmos' | 'cardano';

export type ParsedAddress = { ok: true; address: string; namespace: AddressNamespace } | { ok: false; message: string };

export type AddressInputValue = string | { address: string; chain?: string; namespace?: string };

export const ADDRESS_NAMESPACES: readonly AddressNamespace[] = [
  'eip155',
  'tezos',
  'aptos',
  'polkadot',
  'starknet',
  'cosmos',
  'cardano',
];

/** Longest address accepted (the request schema's limit too). */
export const MAX_ADDRESS_LENGTH = 256;

const NOT_RECOGNISED =
  'address format not recognised (expected an EVM 0x address or a Tezos, Aptos, Polkadot, Starknet, Cosmos or Cardano address)';
const BAD_CHECKSUM = 'address is not a valid EIP-55 checksummed address';

/** CAIP-2 namespaces that are aliases of ours. */
const NAMESPACE_ALIASES: Record<string, AddressNamespace> = { cip34: 'cardano' };

const HEX40 = /^[0-9a-fA-F]{40}$/;
const HEX1_64 = /^[0-9a-fA-F]{1,64}$/;
/** Base58 alphabet: 1-9, A-Z without I and O, a-z without l. */
const TEZOS = /^(?:tz[1-4]|KT1)[1-9A-HJ-NP-Za-km-z]{33}$/;
const SS58 = /^[1-9A-HJ-NP-Za-km-z]{46,48}$/;
/** CAIP-2: namespace [-a-z0-9]{3,8}, reference [-_a-zA-Z0-9]{1,32}. */
const CAIP2 = /^([-a-z0-9]{3,8}):([-_a-zA-Z0-9]{1,32})$/;

const DESCRIPTIONS: Record<AddressNamespace, string> = {
  eip155: 'an EVM address (0x followed by 40 hex digits)',
  tezos: 'a Tezos address (tz1, tz2, tz3, tz4 or KT1 followed by 33 base58 characters)',
  aptos: 'an Aptos address (0x followed by 1 to 64 hex digits)',
  starknet: 'a Starknet address (0x followed by 1 to 64 hex digits, below 2^251)',
  polkadot: 'a Polkadot/Substrate SS58 address (46 to 48 base58 characters)',
  cosmos: 'a Cosmos bech32 address such as cosmos1... (valid checksum, 20- or 32-byte payload)',
  cardano: 'a Cardano bech32 address (addr1, addr_test1, stake1 or stake_test1, valid checksum)',
};

// ---------------------------------------------------------------------------------------------------------------
// EIP-55

/** keccak-256 of the lowercase hex (ASCII), as 64 lowercase hex digits. */
function keccakHexOfLower(lowerHex40: string): string {
  const bytes = new TextEncoder().encode(lowerHex40);
  const hash = keccak_256(bytes);
  let out = '';
  for (const b of hash) out += b.toString(16).padStart(2, '0');
  return out;
}

function checksumBody(hex40: string): string {
  const lower = hex40.toLowerCase();
  const hash = keccakHexOfLower(lower);
  let out = '';
  for (let i = 0; i < lower.length; i++) {
    const c = lower[i];
    out += c >= 'a' && c <= 'f' && parseInt(hash[i], 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

/**
 * EIP-55 checksummed form of an EVM address. Accepts 40 hex digits with or without a `0x` prefix, in any case, and
 * returns `0x` + the checksummed digits. Throws a TypeError on anything else (this one, unlike parseAddress, is for
 * values already known to be addresses).
 */
export function toChecksumAddress(hex40: string): string {
  const body = typeof hex40 === 'string' && hex40.startsWith('0x') ? hex40.slice(2) : hex40;
  if (typeof body !== 'string' || !HEX40.test(body)) {
    throw new TypeError('toChecksumAddress expects 40 hex digits, optionally prefixed with 0x');
  }
  return `0x${checksumBody(body)}`;
}

/** undefined when valid, else the reason. */
function checkEvm(address: string): string | undefined {
  if (!address.startsWith('0x') || !HEX40.test(address.slice(2))) return 'shape';
  const body = address.slice(2);
  if (body === body.toLowerCase() || body === body.toUpperCase()) return undefined;
  return checksumBody(body) === body ? undefined : BAD_CHECKSUM;
}

// ---------------------------------------------------------------------------------------------------------------
// bech32 (BIP-173), without the 90-character limit (Cardano addresses are longer)

const BECH32_CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
const BECH32_GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];

function bech32Polymod(values: number[]): number {
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = (((chk & 0x1ffffff) << 5) ^ v) >>> 0;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk = (chk ^ BECH32_GENERATORS[i]) >>> 0;
  }
  return chk;
}

function bech32HrpExpand(hrp: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) >>> 5);
  out.push(0);
  for (let i = 0; i < hrp.length; i++) out.push(hrp.charCodeAt(i) & 31);
  return out;
}

type Bech32Decoded = { ok: true; hrp: string; words: number[] } | { ok: false; shaped: boolean; reason: string };

/**
 * Decodes a bech32 string (lowercase or all uppercase; the hrp is returned lowercase). `shaped` tells whether the
 * string at least looked like bech32 (so a failure is worth reporting as such).
 */
function bech32Decode(s: string): Bech32Decoded {
  // Printable ASCII only: checked before any case folding so that no unicode case mapping can sneak in.
  if (!/^[\x21-\x7e]+$/.test(s)) return { ok: false, shaped: false, reason: 'not printable ASCII' };
  const lower = s.toLowerCase();
  if (s !== lower && s !== s.toUpperCase()) return { ok: false, shaped: false, reason: 'mixed case' };
  const pos = lower.lastIndexOf('1');
  if (pos < 1 || pos + 7 > lower.length) return { ok: false, shaped: false, reason: 'no separator' };
  const hrp = lower.slice(0, pos);
  const words: number[] = [];
  for (let i = pos + 1; i < lower.length; i++) {
    const v = BECH32_CHARSET.indexOf(lower[i]);
    if (v < 0) return { ok: false, shaped: false, reason: 'character outside the bech32 alphabet' };
    words.push(v);
  }
  if (bech32Polymod([...bech32HrpExpand(hrp), ...words]) !== 1) {
    return { ok: false, shaped: true, reason: 'bech32 checksum is invalid' };
  }
  return { ok: true, hrp, words: words.slice(0, -6) };
}

/** 5-bit words to bytes, strict (at most 4 zero padding bits), or undefined. */
function wordsToBytes(words: number[]): number[] | undefined {
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  for (const w of words) {
    acc = ((acc << 5) | w) & 0xfff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((acc >>> bits) & 0xff);
    }
  }
  if (bits >= 5 || ((acc << (8 - bits)) & 0xff) !== 0) return undefined;
  return out;
}

const CARDANO_HRPS: Record<string, { stake: boolean; network: number }> = {
  addr: { stake: false, network: 1 },
  addr_test: { stake: false, network: 0 },
  stake: { stake: true, network: 1 },
  stake_test: { stake: true, network: 0 },
};

/** CIP-19 checks on a decoded Cardano address: undefined when valid, else the reason. */
function checkCardanoPayload(hrp: string, words: number[]): string | undefined {
  const kind = CARDANO_HRPS[hrp];
  if (!kind) return 'prefix is not addr, addr_test, stake or stake_test';
  const bytes = wordsToBytes(words);
  if (!bytes || bytes.length === 0) return 'payload is not whole bytes';
  const type = bytes[0] >>> 4;
  const network = bytes[0] & 0x0f;
  if (network !== kind.network) {
    return `network tag ${network} does not fit the ${hrp} prefix (expected ${kind.network})`;
  }
  if (kind.stake) {
    if (type !== 14 && type !== 15) return `header type ${type} is not a stake (reward) address`;
    return bytes.length === 29 ? undefined : 'stake address payload must be 29 bytes';
  }
  if (type <= 3) return bytes.length === 57 ? undefined : 'base address payload must be 57 bytes';
  if (type <= 5) return bytes.length >= 32 ? undefined : 'pointer address payload is too short';
  if (type <= 7) return bytes.length === 29 ? undefined : 'enterprise address payload must be 29 bytes';
  return `header type ${type} is not a Shelley payment address`;
}

function checkCardano(address: string): string | undefined {
  const d = bech32Decode(address);
  if (!d.ok) return d.reason;
  return checkCardanoPayload(d.hrp, d.words);
}

function checkCosmosPayload(hrp: string, words: number[]): string | undefined {
  if (!/^[a-z][a-z0-9]*$/.test(hrp)) return 'human-readable prefix must be lowercase letters and digits';
  if (CARDANO_HRPS[hrp]) return 'prefix is a Cardano prefix';
  const bytes = wordsToBytes(words);
  if (!bytes || (bytes.length !== 20 && bytes.length !== 32)) return 'payload must be 20 or 32 bytes';
  return undefined;
}

function checkCosmos(address: string): string | undefined {
  const d = bech32Decode(address);
  if (!d.ok) return d.reason;
  return checkCosmosPayload(d.hrp, d.words);
}

// ---------------------------------------------------------------------------------------------------------------
// The other families

function checkTezos(address: string): string | undefined {
  return TEZOS.test(address) ? undefined : 'shape';
}

function checkPolkadot(address: string): string | undefined {
  return SS58.test(address) ? undefined : 'shape';
}

function checkAptos(address: string): string | undefined {
  return address.startsWith('0x') && HEX1_64.test(address.slice(2)) ? undefined : 'shape';
}

const STARKNET_BOUND = 1n << 251n;

function checkStarknet(address: string): string | undefined {
  if (!address.startsWith('0x') || !HEX1_64.test(address.slice(2))) return 'shape';
  return BigInt(address) < STARKNET_BOUND ? undefined : 'value is not below 2^251';
}

const CHECKS: Record<AddressNamespace, (address: string) => string | undefined> = {
  eip155: checkEvm,
  tezos: checkTezos,
  aptos: checkAptos,
  starknet: checkStarknet,
  polkadot: checkPolkadot,
  cosmos: checkCosmos,
  cardano: checkCardano,
};

// ---------------------------------------------------------------------------------------------------------------

function ok(address: string, namespace: AddressNamespace): ParsedAddress {
  return { ok: true, address, namespace };
}

function fail(message: string): ParsedAddress {
  return { ok: false, message };
}

function checkAs(address: string, namespace: AddressNamespace): ParsedAddress {
  const reason = CHECKS[namespace](address);
  if (reason === undefined) return ok(address, namespace);
  if (reason === BAD_CHECKSUM) return fail(BAD_CHECKSUM);
  const detail = reason === 'shape' ? '' : `; ${reason}`;
  return fail(`address is not valid for namespace ${namespace}: expected ${DESCRIPTIONS[namespace]}${detail}`);
}

/** Recognises the family by shape (see the module comment for the order). */
function detect(address: string): ParsedAddress {
  if (address.startsWith('0x')) {
    const body = address.slice(2);
    if (HEX40.test(body)) return checkAs(address, 'eip155');
    if (HEX1_64.test(body)) return ok(address, 'aptos');
    return fail(NOT_RECOGNISED);
  }
  if (TEZOS.test(address)) return ok(address, 'tezos');
  const d = bech32Decode(address);
  if (d.ok) {
    if (CARDANO_HRPS[d.hrp]) return checkAs(address, 'cardano');
    if (checkCosmosPayload(d.hrp, d.words) === undefined) return ok(address, 'cosmos');
  }
  if (SS58.test(address)) return ok(address, 'polkadot');
  if (!d.ok && d.shaped) {
    return fail('address looks like a bech32 (Cosmos or Cardano) address but its bech32 checksum is invalid');
  }
  return fail(NOT_RECOGNISED);
}

function resolveNamespace(raw: string): AddressNamespace | undefined {
  if ((ADDRESS_NAMESPACES as readonly string[]).includes(raw)) return raw as AddressNamespace;
  return Object.prototype.hasOwnProperty.call(NAMESPACE_ALIASES, raw) ? NAMESPACE_ALIASES[raw] : undefined;
}

function describeValue(s: string): string {
  return JSON.stringify(s.length > 64 ? `${s.slice(0, 64)}...` : s);
}

function parseUnsafe(input: AddressInputValue): ParsedAddress {
  let address: unknown;
  let chain: unknown;
  let namespace: unknown;
  if (typeof input === 'string') {
    address = input;
  } else if (input !== null && typeof input === 'object') {
    ({ address, chain, namespace } = input as { address?: unknown; chain?: unknown; namespace?: unknown });
  } else {
    return fail('address must be a string or an object {address, chain?, namespace?}');
  }

  if (typeof address !== 'string') return fail('address must be a string');
  if (address.length === 0) return fail('address must not be empty');
  if (address.length > MAX_ADDRESS_LENGTH) return fail(`address is longer than ${MAX_ADDRESS_LENGTH} characters`);
  if (address.trim() !== address) return fail('address must not have leading or trailing whitespace');

  let fromNamespace: AddressNamespace | undefined;
  if (namespace !== undefined) {
    if (typeof namespace !== 'string') return fail('namespace must be a string');
    fromNamespace = resolveNamespace(namespace);
    if (!fromNamespace) {
      return fail(`namespace ${describeValue(namespace)} is not supported (expected one of ${ADDRESS_NAMESPACES.join(', ')})`);
    }
  }

  let fromChain: AddressNamespace | undefined;
  if (chain !== undefined) {
    if (typeof chain !== 'string') return fail('chain must be a string');
    const m = CAIP2.exec(chain);
    if (!m) return fail(`chain ${describeValue(chain)} is not a CAIP-2 chain id such as eip155:1`);
    fromChain = resolveNamespace(m[1]);
    if (!fromChain) {
      return fail(`chain ${describeValue(chain)} has an unsupported namespace (expected one of ${ADDRESS_NAMESPACES.join(', ')})`);
    }
  }

  if (fromNamespace && fromChain && fromNamespace !== fromChain) {
    return fail(`namespace ${describeValue(namespace as string)} does not match chain ${describeValue(chain as string)}`);
  }

  const known = fromNamespace ?? fromChain;
  return known ? checkAs(address, known) : detect(address);
}

/** Validates an address and tells which family it belongs to. Never throws. */
/** Parsed addresses by input: the EIP-55 check hashes with keccak (~10 µs), and frontends send the same addresses again. */
const parsed = new Map<string, ParsedAddress>();
const PARSED_MAX = 10_000;

export function parseAddress(input: AddressInputValue): ParsedAddress {
  const key = typeof input === 'string' ? `s${input}`
    : typeof input === 'object' && input !== null && typeof input.address === 'string'
      ? `o${JSON.stringify([input.address, input.namespace ?? null, input.chain ?? null])}` : undefined;
  if (key !== undefined) {
    const hit = parsed.get(key);
    if (hit !== undefined) return hit;
  }
  const result = parseUncached(input);
  if (key !== undefined) {
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(key, Object.freeze(result));
  }
  return result;
}

function parseUncached(input: AddressInputValue): ParsedAddress {
  try {
    return parseUnsafe(input);
  } catch {
    // Not expected to be reachable; the contract is that no input makes this throw.
    return fail(NOT_RECOGNISED);
  }
}
