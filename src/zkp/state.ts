/** The configuration reads ZKP_STATE_RESOLVERS at start, so this module must not load @iden3/js-iden3-auth. */
import type { resolver } from '@iden3/js-iden3-auth';
import { isRecord } from '../schemas/json.js';
import { ZkpOptionsError } from './errors.js';

export type StateResolver = resolver.IStateResolver;
export type ResolvedState = resolver.ResolvedState;
export type StateResolvers = Record<string, StateResolver>;

const LATEST: ResolvedState = Object.freeze({ latest: true, genesis: false, state: null, transitionTimestamp: 0 });

/** TEST ONLY: every state "latest" on every chain, so a proof from a made-up or revoked issuer state passes. */
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
  /** user:password in the URL is used as basic auth. */
  rpcUrl: string;
  contractAddress: string;
}

const CHAIN_KEY = /^[a-z0-9_-]+:[a-z0-9_-]+$/;
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

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

/** ZKP_STATE_RESOLVERS: `{"<chain>": {"rpcUrl", "contractAddress"}}`; unset: {} (every proof then fails). */
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
