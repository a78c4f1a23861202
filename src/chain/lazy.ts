/**
 * The chain code that needs viem, loaded on demand. viem (~6 MB of heap, more RSS) serves only the chains of
 * CHAIN_RPC_URLS: OnChainZKP reads (reader.ts, ChainReader) and Iden3OnchainSparseMerkleTreeProof2023 revocation
 * statuses (src/trust/onchain-status.ts). Both reach it only through loadViem(): at start where a chain is configured
 * (the first request pays nothing), else never, since then OnChainZKP rules answer error without reading
 * (`noChains`) and the status resolver fails every status. Every other module of src/chain (configuration, ABIs,
 * proof-status, outcomes, evaluate) leaves viem unloaded. Import reader.ts (or a module of it: chain-client,
 * status-reads, txhash, rpc-errors) or viem statically from a module the app loads and the memory is back at start:
 * test/chain/lazy-load.test.ts watches for it.
 */
import type { ChainSettings } from './config.js';
import { noRpcReason, type ProofStatusError, type ProofStatusReader } from './proof-status.js';
import type { ChainReader } from './reader.js';

export interface Viem {
  viem: typeof import('viem');
  ChainReader: typeof ChainReader;
}

let loading: Promise<Viem> | undefined;

/** The modules, imported once; a failed import is tried again at the next call. */
export function loadViem(): Promise<Viem> {
  loading ??= Promise.all([import('viem'), import('./reader.js')]).then(
    ([viem, reader]) => ({ viem, ChainReader: reader.ChainReader }),
    (err: unknown) => {
      loading = undefined;
      throw err;
    },
  );
  return loading;
}

/**
 * The reader where no chain is configured, answering as a ChainReader over no chains does: no chain is known, so
 * OnChainZKP rules answer error (no RPC endpoint, or no default chain) and nothing is read.
 */
export const noChains: ProofStatusReader = {
  defaultChain: undefined,
  hasChain: () => false,
  readProofStatuses: async (request) => (Array.isArray(request?.requestIds) ? request.requestIds : [])
    .map((requestId): ProofStatusError => ({ requestId, error: noRpcReason(request.chain), code: 'no-rpc' })),
  readRequests: async (request) => (Array.isArray(request?.requestIds) ? request.requestIds : [])
    .map((requestId): ProofStatusError => ({ requestId, error: noRpcReason(request.chain), code: 'no-rpc' })),
};

/** The OnChainZKP reader of the settings: a ChainReader (viem loaded now) where a chain is configured, else noChains. */
export async function chainReaderFor(settings: ChainSettings): Promise<ProofStatusReader> {
  if (settings.chains.size === 0) return noChains;
  const { ChainReader } = await loadViem();
  return ChainReader.fromSettings(settings);
}
