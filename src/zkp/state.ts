/**
 * Issuer/user state resolution. The verifier asks, for an identity and a state (a Merkle root published on chain),
 * whether the state is known and still the latest; and for GIST roots (user states, in the JWZ auth proof).
 * Resolvers are keyed by the chain named inside the DID: "<blockchain>:<network>", e.g. "polygon:amoy",
 * "polygon:main", "privado:main".
 *
 * Types and configuration only: this module must not load @iden3/js-iden3-auth (the configuration reads
 * ZKP_STATE_RESOLVERS at start). The RPC resolvers, which need it, are in rpc-state.ts.
 */
import type { resolver } from '@iden3/js-iden3-auth';
import { isRecord } from '../schemas/json.js';
import { ZkpOptionsError } from './errors.js';

export type StateResolver = resolver.IStateResolver;
export type ResolvedState = resolver.ResolvedState;
/** Chain key ("polygon:amoy") -> resolver. */
export type StateResolvers = Record<string, StateResolver>;

const LATEST: ResolvedState = Object.freeze({ latest: true, genesis: false, state: null, transitionTimestamp: 0 });

/**
 * TEST ONLY: a resolver that calls every state and GIST root "latest", on every chain. It makes the verifier trust
 * any issuer state, so a proof about a credential from a made-up or revoked issuer state would pass; never use it
 * in production.
 */
export function alwaysLatestStateResolvers(): StateResolvers {
  const r: StateResolver = {
    resolve: async () => ({ ...LATEST }),
    rootResolve: async () => ({ ...LATEST }),
  };
  const every: StateResolvers = {};
  return new Proxy(every, {
    get: (_target, key) => (typeof key === 'string' ? r : undefined),
    has: () => true,
  });
}

export interface RpcChainConfig {
  /** JSON-RPC endpoint of the chain (credentials in the URL's user:password are used as basic auth). */
  rpcUrl: string;
  /** Address of the iden3 State contract on that chain. */
  contractAddress: string;
}

const CHAIN_KEY = /^[a-z0-9_-]+:[a-z0-9_-]+$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Throws ZkpOptionsError unless `chain` and `cfg` make a valid ZKP_STATE_RESOLVERS entry. */
export function checkChain(chain: string, cfg: unknown): asserts cfg is RpcChainConfig {
  if (!CHAIN_KEY.test(chain)) throw new ZkpOptionsError(`state resolver chain ${JSON.stringify(chain)} must look like "polygon:amoy"`);
  if (typeof cfg !== 'object' || cfg === null) throw new ZkpOptionsError(`state resolver ${chain}: expected {"rpcUrl", "contractAddress"}`);
  const rpcUrl: unknown = Reflect.get(cfg, 'rpcUrl');
  const contractAddress: unknown = Reflect.get(cfg, 'contractAddress');
  let url: URL | undefined;
  try {
    url = typeof rpcUrl === 'string' ? new URL(rpcUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined) throw new ZkpOptionsError(`state resolver ${chain}: rpcUrl is not an absolute URL`);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ZkpOptionsError(`state resolver ${chain}: rpcUrl must be http(s)`);
  if (typeof contractAddress !== 'string' || !EVM_ADDRESS.test(contractAddress)) {
    throw new ZkpOptionsError(`state resolver ${chain}: contractAddress must be 0x followed by 40 hex digits`);
  }
}

/**
 * Parses ZKP_STATE_RESOLVERS: a JSON object chain -> {rpcUrl, contractAddress}, e.g.
 * {"polygon:amoy":{"rpcUrl":"https://rpc-amoy.polygon.technology","contractAddress":"0x1a4cC30f2aA0377b0c3bc9848766D90cb4404124"}}.
 * Empty/absent -> {} (no chain: every proof then fails with "no state resolver for chain ...").
 */
export function parseStateResolversConfig(value: string | undefined): Record<string, RpcChainConfig> {
  if (value === undefined || value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new ZkpOptionsError('ZKP_STATE_RESOLVERS must be a JSON object: {"<chain>": {"rpcUrl": "...", "contractAddress": "0x..."}}');
  }
  if (!isRecord(parsed)) {
    throw new ZkpOptionsError('ZKP_STATE_RESOLVERS must be a JSON object: {"<chain>": {"rpcUrl": "...", "contractAddress": "0x..."}}');
  }
  const out: Record<string, RpcChainConfig> = {};
  for (const [chain, cfg] of Object.entries(parsed)) {
    checkChain(chain, cfg);
    const { rpcUrl, contractAddress } = cfg;
    out[chain] = { rpcUrl, contractAddress };
  }
  return out;
}
