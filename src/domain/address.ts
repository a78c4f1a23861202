/**
 * Without a namespace the family is told by shape, in this order: `0x` + 40 hex is EVM; other `0x` hex is aptos
 * (Starknet needs its namespace or chain); then Tezos; bech32 (Cardano prefixes, else Cosmos); SS58. The input
 * string is returned unchanged, never trimmed or case-normalised.
 */
import { LRUCache } from 'lru-cache';
import { decodeBech32 } from './address/bech32.js';
import { tezos, polkadot } from './address/base58.js';
import { cardano, isCardanoPrefix } from './address/cardano.js';
import { checkCosmosPayload, cosmos } from './address/cosmos.js';
import { BAD_CHECKSUM, evm, hasEvmShape } from './address/evm.js';
import { SHAPE, type AddressFamily, type AddressNamespace } from './address/family.js';
import { aptos, hasShortHexShape, starknet } from './address/short-hex.js';

export { toChecksumAddress } from './address/evm.js';

export type ParsedAddress = { ok: true; address: string; namespace: AddressNamespace } | { ok: false; message: string };

export type AddressInputValue = string | { address: string; chain?: string; namespace?: string };

const ADDRESS_NAMESPACES: readonly AddressNamespace[] = [
  'eip155',
  'tezos',
  'aptos',
  'polkadot',
  'starknet',
  'cosmos',
  'cardano',
];

/** The request schema's limit too. */
const MAX_ADDRESS_LENGTH = 256;

const NOT_RECOGNISED =
  'address format not recognised (expected an EVM 0x address or a Tezos, Aptos, Polkadot, Starknet, Cosmos or Cardano address)';

const NAMESPACE_ALIASES: ReadonlyMap<string, AddressNamespace> = new Map([['cip34', 'cardano']]);

const CAIP2 = /^([-a-z0-9]{3,8}):([-_a-zA-Z0-9]{1,32})$/;

const FAMILIES: Readonly<Record<AddressNamespace, AddressFamily>> = {
  eip155: evm,
  tezos,
  aptos,
  starknet,
  polkadot,
  cosmos,
  cardano,
};

function ok(address: string, namespace: AddressNamespace): ParsedAddress {
  return { ok: true, address, namespace };
}

function fail(message: string): ParsedAddress {
  return { ok: false, message };
}

function checkAs(address: string, namespace: AddressNamespace): ParsedAddress {
  const family = FAMILIES[namespace];
  const reason = family.check(address);
  if (reason === undefined) return ok(address, namespace);
  if (reason === BAD_CHECKSUM) return fail(BAD_CHECKSUM);
  const detail = reason === SHAPE ? '' : `; ${reason}`;
  return fail(`address is not valid for namespace ${namespace}: expected ${family.description}${detail}`);
}

function detect(address: string): ParsedAddress {
  if (address.startsWith('0x')) {
    if (hasEvmShape(address)) return checkAs(address, 'eip155');
    if (hasShortHexShape(address)) return ok(address, 'aptos');
    return fail(NOT_RECOGNISED);
  }
  if (tezos.check(address) === undefined) return ok(address, 'tezos');
  const d = decodeBech32(address);
  if (d.ok) {
    if (isCardanoPrefix(d.hrp)) return checkAs(address, 'cardano');
    if (checkCosmosPayload(d.hrp, d.words) === undefined) return ok(address, 'cosmos');
  }
  if (polkadot.check(address) === undefined) return ok(address, 'polkadot');
  if (!d.ok && d.shaped) {
    return fail('address looks like a bech32 (Cosmos or Cardano) address but its bech32 checksum is invalid');
  }
  return fail(NOT_RECOGNISED);
}

const NAMESPACES: ReadonlyMap<string, AddressNamespace> = new Map([...ADDRESS_NAMESPACES.map((n) => [n, n] as const), ...NAMESPACE_ALIASES]);

function resolveNamespace(raw: string): AddressNamespace | undefined {
  return NAMESPACES.get(raw);
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
    // The caller may hand any JSON.
    const fields: { address?: unknown; chain?: unknown; namespace?: unknown } = input;
    ({ address, chain, namespace } = fields);
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
    fromChain = resolveNamespace(m[1] ?? '');
    if (!fromChain) {
      return fail(`chain ${describeValue(chain)} has an unsupported namespace (expected one of ${ADDRESS_NAMESPACES.join(', ')})`);
    }
  }

  if (fromNamespace && fromChain && fromNamespace !== fromChain && typeof namespace === 'string' && typeof chain === 'string') {
    return fail(`namespace ${describeValue(namespace)} does not match chain ${describeValue(chain)}`);
  }

  const known = fromNamespace ?? fromChain;
  return known ? checkAs(address, known) : detect(address);
}

/** Never throws. */
export function parseAddress(input: AddressInputValue): ParsedAddress {
  try {
    return parseUnsafe(input);
  } catch {
    return fail(NOT_RECOGNISED);
  }
}

/** Undefined outside the declared type. A `null` namespace is refused and an absent one is not: no shared key. */
function memoKey(input: AddressInputValue): string | undefined {
  if (typeof input === 'string') return `s${input}`;
  if (typeof input !== 'object' || input === null) return undefined;
  const fields: { address?: unknown; namespace?: unknown; chain?: unknown } = input;
  const { address, namespace, chain } = fields;
  const optional = (v: unknown) => v === undefined || typeof v === 'string';
  if (typeof address !== 'string' || !optional(namespace) || !optional(chain)) return undefined;
  return `o${JSON.stringify([address, namespace ?? null, chain ?? null])}`;
}

export interface AddressParserOptions {
  max?: number;
}

/** Frontends send the same few addresses again and again. Answers are shared, so frozen. */
export class AddressParser {
  readonly #memo: LRUCache<string, ParsedAddress>;

  constructor(options: AddressParserOptions = {}) {
    this.#memo = new LRUCache({ max: options.max ?? 10_000 });
  }

  parse(input: AddressInputValue): ParsedAddress {
    const key = memoKey(input);
    if (key === undefined) return parseAddress(input);
    const hit = this.#memo.get(key);
    if (hit !== undefined) return hit;
    const result = Object.freeze(parseAddress(input));
    this.#memo.set(key, result);
    return result;
  }
}
