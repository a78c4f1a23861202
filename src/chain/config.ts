/**
 * Chain configuration (CHAIN_*). Chains are CAIP-2 references (`eip155:<chain id>`), as the execute request's
 * `address.chain`. RPC URLs often carry API keys: no error message here quotes one.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ConfigError } from '../config/errors.js';
import { flag, integer, oneOf, text } from '../config/variables.js';

export interface ChainEndpoint {
  readonly chain: string;
  readonly chainId: number;
  readonly url: string;
}

export type MulticallMode = 'auto' | 'off';

export interface ChainSettings {
  chains: ReadonlyMap<string, ChainEndpoint>;
  defaultChain?: string;
  timeoutMs: number;
  cacheTtlMs: number;
  cacheMaxEntries: number;
  errorTtlMs: number;
  multicall: MulticallMode;
  txHashLookbackBlocks: number;
  allowUncheckedRequests: boolean;
  followIntervalMs: number;
  confirmations: number;
  txDropAfterMs: number;
  rpcBatchLimit: number;
  followMaxTxs: number;
}

const CAIP2_EIP155 = /^eip155:(0|[1-9][0-9]*)$/;

export function parseChainRef(value: unknown): { chain: string; chainId: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const m = CAIP2_EIP155.exec(value.trim().replace(/^EIP155:/i, 'eip155:'));
  if (!m) return undefined;
  const chainId = Number(m[1]);
  if (!Number.isSafeInteger(chainId) || chainId < 1) return undefined;
  return { chain: `eip155:${chainId}`, chainId };
}

/** Without path, query or credentials: they may hold API keys. */
export function redactRpcUrl(url: string): string {
  try {
    const u = new URL(url);
    const rest = u.pathname !== '/' || u.search !== '' ? '/…' : '';
    return `${u.protocol}//${u.host}${rest}`;
  } catch {
    return '(invalid URL)';
  }
}

/** The first `=` separates, so URLs may carry `?key=value`; bad entries named by position, never URL. */
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
  if (problems.length > 0) throw new ConfigError(`${variable}: ${problems.join('; ')}`);
  return chains;
}

export const chainEnv = Type.Object({
  CHAIN_RPC_URLS: Type.Optional(text({
    expect: 'comma-separated `chain=url` entries',
    docDefault: 'unset (OnChainZKP rules answer `error`)',
    description: 'One JSON-RPC endpoint per chain: `eip155:80002=https://…,eip155:31337=http://127.0.0.1:8545`.',
  })),
  CHAIN_DEFAULT: Type.Optional(text({
    expect: 'a CAIP-2 EVM chain reference (`eip155:<chain id>`) that `CHAIN_RPC_URLS` lists',
    docDefault: 'the only chain of `CHAIN_RPC_URLS` when it lists one',
    description: 'The chain of deployments that name none.',
  })),
  CHAIN_READ_TIMEOUT_MS: integer(100, 120_000, {
    default: 3000,
    description: 'Deadline of one verification read (all its RPC calls); past it the rules answer `error`. Also each RPC call of a deploy (tried twice): past it the deploy answers 503.',
  }),
  CHAIN_CACHE_TTL_MS: integer(0, 3_600_000, {
    default: 5000,
    description: 'How long a proof status read from the chain is reused (0 = never).',
  }),
  CHAIN_CACHE_MAX_ENTRIES: integer(1, 10_000_000, {
    default: 10_000,
    description: 'Bound of that cache (least recently used out).',
  }),
  CHAIN_ERROR_TTL_MS: integer(0, 600_000, {
    default: 1000,
    description: 'After a chain failed to answer, its reads fail at once for this long (0 = always retry).',
  }),
  CHAIN_MULTICALL: oneOf(['auto', 'off'] as const, {
    default: 'auto',
    description: '`auto`: batch reads through Multicall3 where the chain has it (checked once per chain), else parallel ' +
      '`eth_call`s in one JSON-RPC batch; `off`: always parallel `eth_call`s.',
  }),
  CHAIN_ALLOW_UNCHECKED_REQUESTS: flag({
    default: false,
    description: 'OnChainZKP compares each rule with the verifier contract\'s request for its requestId (the credential ' +
      'validator\'s query and its query hash) and answers `error` on a mismatch. A request it cannot compare (a custom ' +
      'validator, a contract that does not show its requests, a rule without a JSON-LD context) answers `error` too, ' +
      'unless this is `true`: then the rule answers from the proof status, and its reasons say the request was not compared.',
  }),
  CHAIN_TXHASH_LOOKBACK_BLOCKS: integer(0, 100_000_000, {
    default: 10_000,
    description: 'How far back (blocks) to search the verifier\'s submission events for `txHash` (0 = do not).',
  }),
  CHAIN_FOLLOW_INTERVAL_MS: integer(100, 3_600_000, {
    default: 5000,
    description: 'How often the service follows TxPosted deployment transactions: JSON-RPC batches per chain each time, ' +
      'on one instance at a time (a lease in the database).',
  }),
  CHAIN_CONFIRMATIONS: integer(1, 1000, {
    default: 12,
    description: 'How many blocks deep (its own counting as 1) a transaction\'s block must be before it is TxConfirmed or ' +
      'TxFailed for a revert; a reorganisation before that leaves it TxPosted.',
  }),
  CHAIN_TX_DROP_AFTER_MS: integer(1000, 604_800_000, {
    default: 1_800_000,
    description: 'A TxPosted transaction neither mined nor in the node\'s pool for this long is TxFailed (dropped); one ' +
      'whose sender\'s nonce has passed it (as deep as CHAIN_CONFIRMATIONS) is at once. Only rounds that see it absent ' +
      'while the chain\'s head advances count.',
  }),
  CHAIN_RPC_BATCH_LIMIT: integer(1, 10_000, {
    default: 100,
    description: 'Calls per JSON-RPC batch (one HTTP request) when following deployment transactions: a round of n calls ' +
      'takes ceil(n / this) requests. 100 is under every common provider\'s cap (geth 1,000; several hosted ones 100).',
  }),
  CHAIN_FOLLOW_MAX_TXS: integer(1, 1_000_000, {
    default: 5000,
    description: 'TxPosted transactions (deployments, for those with none) loaded per following round; more wait for the ' +
      'next rounds, in turn (oldest scenario first).',
  }),
});

export type ChainEnv = Static<typeof chainEnv>;

export function chainSettings(env: ChainEnv): ChainSettings {
  const chains = parseChainRpcUrls(env.CHAIN_RPC_URLS);
  let defaultChain: string | undefined;
  if (env.CHAIN_DEFAULT !== undefined) {
    const ref = parseChainRef(env.CHAIN_DEFAULT);
    if (!ref) throw new ConfigError(`CHAIN_DEFAULT must be a CAIP-2 EVM chain reference such as eip155:80002 (got ${JSON.stringify(env.CHAIN_DEFAULT)})`);
    if (!chains.has(ref.chain)) throw new ConfigError(`CHAIN_DEFAULT is ${ref.chain}, which CHAIN_RPC_URLS does not list`);
    defaultChain = ref.chain;
  } else if (chains.size === 1) {
    defaultChain = chains.keys().next().value;
  }
  return {
    chains,
    defaultChain,
    timeoutMs: env.CHAIN_READ_TIMEOUT_MS,
    cacheTtlMs: env.CHAIN_CACHE_TTL_MS,
    cacheMaxEntries: env.CHAIN_CACHE_MAX_ENTRIES,
    errorTtlMs: env.CHAIN_ERROR_TTL_MS,
    multicall: env.CHAIN_MULTICALL,
    txHashLookbackBlocks: env.CHAIN_TXHASH_LOOKBACK_BLOCKS,
    allowUncheckedRequests: env.CHAIN_ALLOW_UNCHECKED_REQUESTS,
    followIntervalMs: env.CHAIN_FOLLOW_INTERVAL_MS,
    confirmations: env.CHAIN_CONFIRMATIONS,
    txDropAfterMs: env.CHAIN_TX_DROP_AFTER_MS,
    rpcBatchLimit: env.CHAIN_RPC_BATCH_LIMIT,
    followMaxTxs: env.CHAIN_FOLLOW_MAX_TXS,
  };
}
