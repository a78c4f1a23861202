/** viem costs ~6 MB of heap: never import reader.ts or viem statically (test/chain/lazy-load.test.ts). */
import type { ChainSettings } from './config.js';
import { noRpcReason, type ProofStatusError, type ProofStatusReader } from './proof-status.js';
import type { ChainReader } from './reader.js';

export interface Viem {
  viem: typeof import('viem');
  ChainReader: typeof ChainReader;
}

let loading: Promise<Viem> | undefined;

/** A failed import is tried again at the next call. */
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

export const noChains: ProofStatusReader = {
  defaultChain: undefined,
  hasChain: () => false,
  readProofStatuses: async (request) => (Array.isArray(request?.requestIds) ? request.requestIds : [])
    .map((requestId): ProofStatusError => ({ requestId, error: noRpcReason(request.chain), code: 'no-rpc' })),
  readRequests: async (request) => (Array.isArray(request?.requestIds) ? request.requestIds : [])
    .map((requestId): ProofStatusError => ({ requestId, error: noRpcReason(request.chain), code: 'no-rpc' })),
};

export async function chainReaderFor(settings: ChainSettings): Promise<ProofStatusReader> {
  if (settings.chains.size === 0) return noChains;
  const { ChainReader } = await loadViem();
  return ChainReader.fromSettings(settings);
}
