/**
 * One configured chain as the ChainReader reads it: a viem public client over HTTP (a timeout per request, concurrent
 * requests sent as one JSON-RPC batch), the chain check and the error cool-down.
 *
 * - Chain check, before the first read and again every 10 minutes (or after it failed): `eth_chainId` must match the
 *   configured chain, and Multicall3 is looked for at its canonical address (`multicall: 'auto'`).
 * - Cool-down: a chain that failed to answer (refused, timed out, HTTP error, wrong chain) is not asked again for
 *   `errorTtlMs`: its reads answer the same error at once.
 */
import { createPublicClient, http, type PublicClient } from 'viem';
import { MULTICALL3_ADDRESS } from './abi.js';
import type { ChainEndpoint, MulticallMode } from './config.js';
import { ChainReadError, isTransportFailure } from './rpc-errors.js';

const READY_TTL_MS = 10 * 60_000;

export interface ChainClientOptions {
  /** HTTP timeout of each RPC request. */
  timeoutMs: number;
  /** HTTP retries of viem's transport on network errors and 5xx/429. */
  retryCount: number;
  /** How long a transport failure is answered without asking the chain; 0: never. */
  errorTtlMs: number;
  multicall: MulticallMode;
  /** Clock of the chain check's age (epoch ms). */
  clock: () => number;
}

export class ChainClient {
  readonly client: PublicClient;
  /** Whether the chain has Multicall3, as the last chain check found. */
  multicall3 = false;
  private ready?: Promise<void>;
  private readyAt = 0;
  /** performance.now() until which the chain is considered down, answering `downError`. */
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

  /** The chain (CAIP-2). */
  get chain(): string {
    return this.endpoint.chain;
  }

  /** The chain check (see above), shared by the reads that start while it runs. Rejects with what it found wrong. */
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

  /** The error every read answers at once while the chain cools down after a transport failure, else undefined. */
  coolingDown(): ChainReadError | undefined {
    return this.downUntil > performance.now() ? this.downError : undefined;
  }

  /** The chain answered a read round: it is up. */
  answered(): void {
    this.downUntil = 0;
    this.downError = undefined;
  }

  /** A read round failed with `e`: a transport failure starts the cool-down. */
  failed(e: ChainReadError): void {
    if (isTransportFailure(e) && this.options.errorTtlMs > 0) {
      this.downUntil = performance.now() + this.options.errorTtlMs;
      this.downError = e;
    }
  }
}
