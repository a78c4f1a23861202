import { resolver } from '@iden3/js-iden3-auth';
import { checkChain, type RpcChainConfig, type StateResolvers } from './state.js';

export interface RpcStateCacheOptions {
  /** A state can be replaced at any time. */
  latestTtlMs?: number;
  replacedTtlMs?: number;
  maxSize?: number;
}

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
