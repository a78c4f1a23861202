/**
 * Chain configuration from the environment. Chains are named by CAIP-2 references (`eip155:<chain id>`), the form the
 * execute request's `address.chain` already uses.
 *
 * | variable                         | default | meaning |
 * |----------------------------------|---------|---------|
 * | `CHAIN_RPC_URLS`                 | (none)  | `eip155:80002=https://rpc-amoy.polygon.technology,eip155:31337=http://127.0.0.1:8545`: one JSON-RPC HTTP(S) endpoint per chain. Unset: no chain is readable and OnChainZKP rules answer `error`. |
 * | `CHAIN_DEFAULT`                  | the only chain of `CHAIN_RPC_URLS` when it lists exactly one | chain of deployments that name none |
 * | `CHAIN_READ_TIMEOUT_MS`          | 3000    | deadline of one verification read (all its RPC calls); past it the rules answer `error` |
 * | `CHAIN_CACHE_TTL_MS`             | 5000    | how long a proof status read from the chain is reused (0: never) |
 * | `CHAIN_CACHE_MAX_ENTRIES`        | 10000   | bound of that cache (least recently used out) |
 * | `CHAIN_ERROR_TTL_MS`             | 1000    | after a chain failed to answer, reads of that chain fail at once for this long (0: always retry) |
 * | `CHAIN_MULTICALL`                | `auto`  | `auto`: batch reads through Multicall3 where the chain has it (checked once per chain), else parallel `eth_call`s in one JSON-RPC batch; `off`: always parallel |
 * | `CHAIN_TXHASH_LOOKBACK_BLOCKS`   | 10000   | how far back (blocks) to search the verifier's proof-submission logs for the `txHash` (0: do not look) |
 *
 * RPC URLs often carry API keys: nothing here puts a URL into an error message (see `redactRpcUrl`).
 */

/** A chain endpoint: CAIP-2 reference, numeric chain id, JSON-RPC URL. */
export interface ChainEndpoint {
  /** CAIP-2 reference, canonical form: `eip155:80002`. */
  readonly chain: string;
  readonly chainId: number;
  readonly url: string;
}

export type MulticallMode = 'auto' | 'off';

/** Settings of a ChainReader (see reader.ts for what each one does). */
export interface ChainSettings {
  chains: ReadonlyMap<string, ChainEndpoint>;
  /** Chain of deployments that name none; undefined when not configured. */
  defaultChain?: string;
  timeoutMs: number;
  cacheTtlMs: number;
  cacheMaxEntries: number;
  errorTtlMs: number;
  multicall: MulticallMode;
  txHashLookbackBlocks: number;
}

export const CHAIN_DEFAULTS = Object.freeze({
  timeoutMs: 3000,
  cacheTtlMs: 5000,
  cacheMaxEntries: 10_000,
  errorTtlMs: 1000,
  multicall: 'auto' as MulticallMode,
  txHashLookbackBlocks: 10_000,
});

/** A chain configuration problem; the message names the variable and never quotes an RPC URL. */
export class ChainConfigError extends Error {
  override name = 'ChainConfigError';
}

const CAIP2_EIP155 = /^eip155:(0|[1-9][0-9]*)$/;

/**
 * The canonical CAIP-2 reference of an EVM chain, or undefined: accepts `eip155:<decimal id>` (id 1 to 2^53-1,
 * no leading zeros), case-insensitive namespace.
 */
export function parseChainRef(value: unknown): { chain: string; chainId: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const m = CAIP2_EIP155.exec(value.trim().replace(/^EIP155:/i, 'eip155:'));
  if (!m) return undefined;
  const chainId = Number(m[1]);
  if (!Number.isSafeInteger(chainId) || chainId < 1) return undefined;
  return { chain: `eip155:${chainId}`, chainId };
}

/** `https://host/…`: the scheme and host of an RPC URL, without path, query or credentials (they may hold API keys). */
export function redactRpcUrl(url: string): string {
  try {
    const u = new URL(url);
    const rest = u.pathname !== '/' || u.search !== '' ? '/…' : '';
    return `${u.protocol}//${u.host}${rest}`;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * Parses `CHAIN_RPC_URLS`: comma-separated `chain=url` entries, chain a CAIP-2 `eip155:<id>` reference, url an
 * http(s) URL (the first `=` separates them, so URLs may carry `?key=value`). Unset or blank: no chains.
 * Throws ChainConfigError naming every bad entry by position and chain, never by URL.
 */
export function parseChainRpcUrls(value: string | undefined, variable = 'CHAIN_RPC_URLS'): Map<string, ChainEndpoint> {
  const chains = new Map<string, ChainEndpoint>();
  if (value === undefined || value.trim() === '') return chains;
  const problems: string[] = [];
  value.split(',').forEach((raw, i) => {
    const entry = raw.trim();
    const where = `entry ${i + 1}`;
    if (entry === '') {
      problems.push(`${where} is empty`);
      return;
    }
    const eq = entry.indexOf('=');
    if (eq < 0) {
      problems.push(`${where} must be chain=url (e.g. eip155:80002=https://rpc.example)`);
      return;
    }
    const key = entry.slice(0, eq).trim();
    const url = entry.slice(eq + 1).trim();
    const ref = parseChainRef(key);
    if (!ref) {
      problems.push(`${where}: ${JSON.stringify(key.slice(0, 40))} is not a CAIP-2 EVM chain reference (eip155:<chain id>)`);
      return;
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      problems.push(`${where} (${ref.chain}): the URL is not valid`);
      return;
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      problems.push(`${where} (${ref.chain}): the URL must be http:// or https://`);
      return;
    }
    if (chains.has(ref.chain)) {
      problems.push(`${where}: ${ref.chain} is listed twice`);
      return;
    }
    chains.set(ref.chain, { chain: ref.chain, chainId: ref.chainId, url });
  });
  if (problems.length > 0) throw new ChainConfigError(`${variable}: ${problems.join('; ')}`);
  return chains;
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const t = raw.trim();
  if (!/^\d+$/.test(t) || Number(t) < min || Number(t) > max) {
    throw new ChainConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`);
  }
  return Number(t);
}

/** Every chain variable of the table above, validated. Throws ChainConfigError. */
export function chainSettingsFromEnv(env: Env = process.env): ChainSettings {
  const chains = parseChainRpcUrls(env.CHAIN_RPC_URLS);
  let defaultChain: string | undefined;
  const rawDefault = env.CHAIN_DEFAULT?.trim();
  if (rawDefault) {
    const ref = parseChainRef(rawDefault);
    if (!ref) throw new ChainConfigError(`CHAIN_DEFAULT must be a CAIP-2 EVM chain reference such as eip155:80002 (got ${JSON.stringify(rawDefault)})`);
    if (!chains.has(ref.chain)) throw new ChainConfigError(`CHAIN_DEFAULT is ${ref.chain}, which CHAIN_RPC_URLS does not list`);
    defaultChain = ref.chain;
  } else if (chains.size === 1) {
    defaultChain = chains.keys().next().value;
  }
  const multicall = (env.CHAIN_MULTICALL?.trim().toLowerCase() || CHAIN_DEFAULTS.multicall) as string;
  if (multicall !== 'auto' && multicall !== 'off') {
    throw new ChainConfigError(`CHAIN_MULTICALL must be auto or off (got ${JSON.stringify(env.CHAIN_MULTICALL)})`);
  }
  return {
    chains,
    defaultChain,
    timeoutMs: integer(env, 'CHAIN_READ_TIMEOUT_MS', CHAIN_DEFAULTS.timeoutMs, 100, 120_000),
    cacheTtlMs: integer(env, 'CHAIN_CACHE_TTL_MS', CHAIN_DEFAULTS.cacheTtlMs, 0, 3_600_000),
    cacheMaxEntries: integer(env, 'CHAIN_CACHE_MAX_ENTRIES', CHAIN_DEFAULTS.cacheMaxEntries, 1, 10_000_000),
    errorTtlMs: integer(env, 'CHAIN_ERROR_TTL_MS', CHAIN_DEFAULTS.errorTtlMs, 0, 600_000),
    multicall,
    txHashLookbackBlocks: integer(env, 'CHAIN_TXHASH_LOOKBACK_BLOCKS', CHAIN_DEFAULTS.txHashLookbackBlocks, 0, 100_000_000),
  };
}
