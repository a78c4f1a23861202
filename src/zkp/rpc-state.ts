/**
 * Production issuer/user state resolvers over JSON-RPC, made with @iden3/js-iden3-auth (and its ethers): loaded
 * through lazy.ts where OffChainZKP is configured (ZKP_VERIFIER_DID).
 */
import { resolver } from '@iden3/js-iden3-auth';
import { checkChain, type RpcChainConfig, type StateResolvers } from './state.js';

export interface RpcStateCacheOptions {
  /** How long a "latest" answer is trusted, ms (default 30 min: a state can be replaced at any time). */
  latestTtlMs?: number;
  /** How long a "replaced" answer is kept, ms (default 1 h). */
  replacedTtlMs?: number;
  /** Entries per cache (default 10 000). */
  maxSize?: number;
}

/**
 * One js-iden3-auth EthStateResolver per chain (reads the State contract over JSON-RPC, with an in-memory cache;
 * "latest" answers expire sooner than "replaced" ones).
 */
export function createRpcStateResolvers(
  chains: Readonly<Record<string, RpcChainConfig>>,
  cache: RpcStateCacheOptions = {},
): StateResolvers {
  const out: StateResolvers = {};
  for (const [chain, cfg] of Object.entries(chains)) {
    checkChain(chain, cfg);
    const ttl = {
      notReplacedTtl: cache.latestTtlMs ?? 30 * 60_000,
      replacedTtl: cache.replacedTtlMs ?? 60 * 60_000,
      maxSize: cache.maxSize ?? 10_000,
    };
    out[chain] = new resolver.EthStateResolver(cfg.rpcUrl, cfg.contractAddress, {
      stateCacheOptions: ttl,
      rootCacheOptions: ttl,
    });
  }
  return out;
}
