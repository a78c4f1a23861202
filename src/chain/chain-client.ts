/** A chain that failed to answer is not asked again for `errorTtlMs`. */
import { createPublicClient, http, type PublicClient } from 'viem';
import { MULTICALL3_ADDRESS } from './abi.js';
import type { ChainEndpoint, MulticallMode } from './config.js';
import { ChainReadError, isTransportFailure } from './rpc-errors.js';

const READY_TTL_MS = 10 * 60_000;

export interface ChainClientOptions {
  timeoutMs: number;
  retryCount: number;
  errorTtlMs: number;
  multicall: MulticallMode;
  clock: () => number;
}

export class ChainClient {
  readonly client: PublicClient;
  multicall3 = false;
  private ready?: Promise<void>;
  private readyAt = 0;
  /** performance.now() time. */
  private downUntil = 0;
  private downError?: ChainReadError;

  constructor(readonly endpoint: ChainEndpoint, private readonly options: ChainClientOptions) {
    this.client = createPublicClient({
      transport: http(endpoint.url, {
        timeout: options.timeoutMs,
        retryCount: options.retryCount,
        batch: { batchSize: 200, wait: 0 },
      }),
    });
  }

  get chain(): string {
    return this.endpoint.chain;
  }

  /** Shared by the reads that start while it runs. */
  ensureReady(): Promise<void> {
    const now = this.options.clock();
    if (this.ready && now - this.readyAt < READY_TTL_MS) return this.ready;
    const { client, endpoint } = this;
    const ready = (async () => {
      const [chainId, code] = await Promise.all([
        client.getChainId(),
        this.options.multicall === 'auto' ? client.getCode({ address: MULTICALL3_ADDRESS }) : Promise.resolve(undefined),
      ]);
      if (chainId !== endpoint.chainId) {
        throw new ChainReadError('wrong-chain', `the RPC endpoint configured for ${endpoint.chain} serves chain eip155:${chainId}`);
      }
      this.multicall3 = code !== undefined && code !== '0x';
    })();
    this.ready = ready;
    this.readyAt = now;
    ready.catch(() => {
      if (this.ready === ready) this.ready = undefined;
    });
    return ready;
  }

  coolingDown(): ChainReadError | undefined {
    return this.downUntil > performance.now() ? this.downError : undefined;
  }

  answered(): void {
    this.downUntil = 0;
    this.downError = undefined;
  }

  failed(e: ChainReadError): void {
    if (isTransportFailure(e) && this.options.errorTtlMs > 0) {
      this.downUntil = performance.now() + this.options.errorTtlMs;
      this.downError = e;
    }
  }
}
