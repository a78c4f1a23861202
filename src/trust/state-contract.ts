/**
 * Publication is permanent, so "published" is kept for good. Messages never quote an RPC URL: it may hold an API key.
 */
import type { Address } from 'viem';
import { ChainClient } from '../chain/chain-client.js';
import type { ChainSettings } from '../chain/config.js';
import { classify } from '../chain/rpc-errors.js';
import { keep, lruCache } from '../domain/cache.js';
import { ResolverFailure, type StatePublication } from './did-resolver.js';
import { chainIDfromDID, DID, Hash } from './iden3.js';

/** Any other chain: the unified address. */
const STATE_CONTRACTS: Readonly<Record<number, Address>> = {
  137: '0x624ce98D2d27b20b8f8d521723Df8fC4db71D79D', // Polygon main
  80002: '0x1a4cC30f2aA0377b0c3bc9848766D90cb4404124', // Polygon Amoy
  80001: '0x134B1BE34911E39A8397ec6289782989729807a4', // Polygon Mumbai (retired)
};
const UNIFIED_STATE_CONTRACT: Address = '0x3C9acB2205Aa72A05F6D77d708b5Cf85FCa3a896';

const STATE_EXISTS_ABI = [{
  type: 'function',
  name: 'stateExists',
  stateMutability: 'view',
  inputs: [{ name: 'id', type: 'uint256' }, { name: 'state', type: 'uint256' }],
  outputs: [{ name: '', type: 'bool' }],
}] as const;

export interface StateContractOptions {
  chains: Pick<ChainSettings, 'chains' | 'timeoutMs' | 'errorTtlMs'>;
  /** Over iden3's defaults, by `eip155:<id>`. */
  contracts?: Readonly<Record<string, Address>>;
  shortCacheMs: number;
  clock: () => number;
}

function stateContractOf(chainId: number, contracts: Readonly<Record<string, Address>> = {}): Address {
  return contracts[`eip155:${chainId}`] ?? STATE_CONTRACTS[chainId] ?? UNIFIED_STATE_CONTRACT;
}

export function stateContractPublication(o: StateContractOptions): StatePublication {
  const clients = new Map<string, ChainClient>();
  const cache = lruCache<string, boolean>(100_000, o.clock);
  const pending = new Map<string, Promise<boolean>>();
  const clientOf = (chain: string): ChainClient | undefined => {
    let c = clients.get(chain);
    const endpoint = o.chains.chains.get(chain);
    if (c === undefined && endpoint !== undefined) {
      c = new ChainClient(endpoint, { timeoutMs: o.chains.timeoutMs, retryCount: 0, errorTtlMs: o.chains.errorTtlMs, multicall: 'off', clock: o.clock });
      clients.set(chain, c);
    }
    return c;
  };

  const read = async (did: string, stateHex: string): Promise<boolean> => {
    let id: bigint;
    let chainId: number;
    try {
      const parsed = DID.parse(did);
      id = DID.idFromDID(parsed).bigInt();
      chainId = chainIDfromDID(parsed);
    } catch {
      throw new ResolverFailure('the issuer DID names no network with a State contract');
    }
    const chain = `eip155:${chainId}`;
    const client = clientOf(chain);
    if (client === undefined) throw new ResolverFailure(`the issuer's network is ${chain}, which CHAIN_RPC_URLS does not list`);
    const cooling = client.coolingDown();
    if (cooling !== undefined) throw new ResolverFailure(`the State contract on ${chain} cannot be read: ${cooling.message}`);
    try {
      await client.ensureReady();
      const exists = await client.client.readContract({
        address: stateContractOf(chainId, o.contracts),
        abi: STATE_EXISTS_ABI,
        functionName: 'stateExists',
        args: [id, Hash.fromHex(stateHex).bigInt()],
      });
      client.answered();
      return exists;
    } catch (e) {
      const err = classify(e, chain, o.chains.timeoutMs);
      client.failed(err);
      throw new ResolverFailure(`the State contract on ${chain} cannot be read: ${err.message}`);
    }
  };

  return {
    async isPublished(did, stateHex) {
      const key = `${did} ${stateHex}`;
      const hit = cache?.get(key);
      if (hit !== undefined) return hit;
      let p = pending.get(key);
      if (p === undefined) {
        p = read(did, stateHex)
          .then((published) => {
            keep(cache, key, published, published ? Infinity : o.shortCacheMs);
            return published;
          })
          .finally(() => pending.delete(key));
        pending.set(key, p);
      }
      return p;
    },
  };
}
