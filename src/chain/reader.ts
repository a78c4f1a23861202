/** Loads viem: only lazy.ts imports it, dynamically. Nothing here rejects: every problem is an entry with `error`. */
import type { LRUCache } from 'lru-cache';
import { getAddress, isAddress, type Address } from 'viem';
import { ChainClient } from './chain-client.js';
import { parseChainRef, type ChainEndpoint, type ChainSettings } from './config.js';
import { keep, lruCache } from '../domain/cache.js';
import {
  isProofStatusError, noRpcReason, type ChainErrorCode, type ProofStatusEntry, type ProofStatusError, type ProofStatusReader,
  type ReadProofStatusesRequest, type RequestId,
} from './proof-status.js';
import { classify, timeoutError } from './rpc-errors.js';
import { idKey, statusKeyPrefix, StatusReads } from './status-reads.js';
import { TxHashLookup } from './txhash.js';
import { RequestReads } from './request-reads.js';
import type { ReadRequestsRequest, StoredRequestEntry } from './proof-status.js';

export interface ChainReaderOptions extends Omit<ChainSettings, 'chains' | 'allowUncheckedRequests'> {
  chains: readonly ChainEndpoint[] | ReadonlyMap<string, ChainEndpoint>;
  multicallBatchSize?: number;
  /** Default 0: the deadline is short. */
  retryCount?: number;
  clock?: () => number;
}

export type { ChainReaderStats } from './proof-status.js';
import type { ChainReaderStats } from './proof-status.js';

const TIMEOUT = Symbol('timeout');
/** Longest a status other than "verified" is reused (and only at the block it was read at). */
const UNSETTLED_TTL_MS = 1000;
const isSettled = (e: ProofStatusEntry) => !isProofStatusError(e) && e.verified;
const isEntry = (e: ProofStatusEntry | Promise<ProofStatusEntry>): e is ProofStatusEntry => !(e instanceof Promise);

function validRequestId(id: unknown): id is RequestId {
  if (typeof id === 'number') return Number.isSafeInteger(id) && id >= 0;
  return typeof id === 'bigint' && id >= 0n && id < 2n ** 256n;
}

export class ChainReader implements ProofStatusReader {
  readonly defaultChain: string | undefined;
  private readonly chains = new Map<string, ChainClient>();
  private readonly timeoutMs: number;
  private readonly cacheTtlMs: number;
  private readonly statuses: LRUCache<string, ProofStatusEntry> | undefined;
  private readonly reads: StatusReads;
  private readonly txHashes: TxHashLookup;
  private readonly requests: RequestReads;
  private readonly inflight = new Map<string, Promise<ProofStatusEntry>>();
  private readonly counters: ChainReaderStats = { cacheHits: 0, chainReads: 0, batches: 0, errors: 0, ethCalls: 0, multicalls: 0, logQueries: 0 };

  constructor(options: ChainReaderOptions) {
    this.timeoutMs = options.timeoutMs;
    this.cacheTtlMs = options.cacheTtlMs;
    const clock = options.clock ?? Date.now;
    const maxEntries = options.cacheMaxEntries;
    this.statuses = this.cacheTtlMs > 0 ? lruCache(maxEntries, clock) : undefined;
    this.requests = new RequestReads(maxEntries, clock);
    this.reads = new StatusReads(this.counters, Math.max(1, options.multicallBatchSize ?? 100), clock);
    this.txHashes = new TxHashLookup(this.counters, {
      lookbackBlocks: options.txHashLookbackBlocks, maxEntries, timeoutMs: this.timeoutMs, clock,
    });
    const clientOptions = {
      timeoutMs: this.timeoutMs,
      retryCount: options.retryCount ?? 0,
      errorTtlMs: options.errorTtlMs,
      multicall: options.multicall,
      clock,
    };
    for (const endpoint of options.chains.values()) this.chains.set(endpoint.chain, new ChainClient(endpoint, clientOptions));
    const def = options.defaultChain === undefined ? undefined : parseChainRef(options.defaultChain)?.chain;
    this.defaultChain = def ?? (this.chains.size === 1 ? this.chains.keys().next().value : undefined);
  }

  static fromSettings(settings: ChainSettings, extra: Partial<ChainReaderOptions> = {}): ChainReader {
    return new ChainReader({ ...settings, ...extra });
  }

  hasChain(chain: string): boolean {
    const ref = parseChainRef(chain);
    return ref !== undefined && this.chains.has(ref.chain);
  }

  stats(): ChainReaderStats {
    return { ...this.counters };
  }

  async readProofStatuses(request: ReadProofStatusesRequest): Promise<ProofStatusEntry[]> {
    try {
      return await this.read(request);
    } catch (err) {
      const ids = Array.isArray(request?.requestIds) ? request.requestIds : [];
      const e = classify(err, String(request?.chain), this.timeoutMs);
      return ids.map((requestId) => this.errorEntry(requestId, e.code, e.message));
    }
  }

  /**
   * A verified proof stays verified: kept cacheTtlMs. Any other answer (not verified, request not found) may change
   * with the next block (a dApp calls execute right after its proof transaction is mined): kept at most
   * UNSETTLED_TTL_MS, and only while the chain is still at the block it was read at (currentHits).
   */
  private ttlOf(e: ProofStatusEntry): number {
    return isSettled(e) ? this.cacheTtlMs : Math.min(this.cacheTtlMs, UNSETTLED_TTL_MS);
  }

  private async currentHits(client: ChainClient, hits: (ProofStatusEntry | undefined)[]): Promise<(ProofStatusEntry | undefined)[]> {
    if (hits.every((h) => h === undefined || isSettled(h)) || client.coolingDown()) {
      return hits.map((h) => (h !== undefined && isSettled(h) ? h : undefined));
    }
    let head: bigint | undefined;
    try {
      head = await client.client.getBlockNumber({ cacheTime: 0 });
    } catch {
      head = undefined; // read afresh; the read itself reports the failure
    }
    return hits.map((h) => {
      if (h === undefined || isSettled(h)) return h;
      return head !== undefined && h.blockNumber !== undefined && head <= h.blockNumber ? h : undefined;
    });
  }

  /** Never rejects: a failure is an error entry for every id. */
  async readRequests(request: ReadRequestsRequest): Promise<StoredRequestEntry[]> {
    const ids = Array.isArray(request?.requestIds) ? request.requestIds : [];
    const ref = parseChainRef(request?.chain);
    const client = ref && this.chains.get(ref.chain);
    const all = (code: ChainErrorCode, error: string) => ids.map((requestId): ProofStatusError => ({ requestId, code, error }));
    if (!client) return all('no-rpc', noRpcReason(request?.chain));
    if (typeof request.verifierAddress !== 'string' || !isAddress(request.verifierAddress, { strict: false })) {
      return all('bad-request', 'the verifier address is not an EVM address');
    }
    const down = client.coolingDown();
    if (down) return all(down.code, down.message);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(timeoutError(client.chain, this.timeoutMs)), this.timeoutMs);
    });
    try {
      return await Promise.race([this.requests.read(client, getAddress(request.verifierAddress), ids), expired]);
    } catch (err) {
      const e = classify(err, client.chain, this.timeoutMs);
      client.failed(e);
      return all(e.code, e.message);
    } finally {
      clearTimeout(timer);
    }
  }

  private errorEntry(requestId: RequestId, code: ChainErrorCode, error: string, blockNumber?: bigint): ProofStatusError {
    this.counters.errors++;
    return blockNumber === undefined ? { requestId, error, code } : { requestId, error, code, blockNumber };
  }

  private async read(request: ReadProofStatusesRequest): Promise<ProofStatusEntry[]> {
    const ids = Array.isArray(request.requestIds) ? request.requestIds : [];
    if (ids.length === 0) return [];
    const deadline = performance.now() + this.timeoutMs;
    const all = (code: ChainErrorCode, message: string) => ids.map((id) => this.errorEntry(id, code, message));

    const ref = parseChainRef(request.chain);
    const client = ref && this.chains.get(ref.chain);
    if (!client) {
      return all('no-rpc', noRpcReason(request.chain));
    }
    if (typeof request.verifierAddress !== 'string' || !isAddress(request.verifierAddress, { strict: false })) {
      return all('bad-request', 'the verifier address is not an EVM address');
    }
    if (typeof request.sender !== 'string' || !isAddress(request.sender, { strict: false })) {
      return all('bad-request', 'the sender is not an EVM address');
    }
    const verifier = getAddress(request.verifierAddress);
    const sender = getAddress(request.sender);
    const prefix = statusKeyPrefix(client.chain, verifier, sender);

    const toRead: RequestId[] = [];
    const seen = new Set<string>();
    const hits = await this.currentHits(client, ids.map((id) => (validRequestId(id) ? this.statuses?.get(prefix + idKey(id)) : undefined)));
    const answered = ids.map((id, i): ProofStatusEntry | undefined => {
      if (!validRequestId(id)) return this.errorEntry(id, 'bad-request', `requestId ${String(id)} is not a non-negative integer`);
      const key = prefix + idKey(id);
      const hit = hits[i];
      if (hit !== undefined) {
        this.counters.cacheHits++;
        return { ...hit, requestId: id, cached: true };
      }
      if (!this.inflight.has(key) && !seen.has(key)) {
        seen.add(key);
        toRead.push(id);
      }
      return undefined;
    });

    if (toRead.length > 0) {
      const down = client.coolingDown();
      const batch = down
        ? Promise.resolve(new Map(toRead.map((id) => [idKey(id), this.errorEntry(id, down.code, down.message)])))
        : this.readBatch(client, verifier, sender, toRead, request.fromBlock, deadline);
      for (const id of toRead) {
        const key = prefix + idKey(id);
        const one = batch.then((m) => m.get(idKey(id)) ?? this.errorEntry(id, 'rpc-error', 'no status was read'));
        this.inflight.set(key, one);
        void one.finally(() => {
          if (this.inflight.get(key) === one) this.inflight.delete(key);
        });
      }
    }
    const slots = ids.map((id, i) => ({
      id, entry: answered[i] ?? this.inflight.get(prefix + idKey(id)) ?? this.errorEntry(id, 'rpc-error', 'no status was read'),
    }));
    const entries = slots.map((s) => s.entry);
    if (entries.every(isEntry)) return entries;

    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<typeof TIMEOUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMEOUT), Math.max(0, deadline - performance.now()));
    });
    try {
      return await Promise.all(slots.map(async ({ id, entry: r }) => {
        if (isEntry(r)) return r;
        const v = await Promise.race([r, expired]);
        if (v !== TIMEOUT) return v.requestId === id ? v : { ...v, requestId: id };
        const e = timeoutError(client.chain, this.timeoutMs);
        return this.errorEntry(id, e.code, e.message);
      }));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Never rejects. */
  private readBatch(
    client: ChainClient, verifier: Address, sender: Address, ids: RequestId[], fromBlock: bigint | number | undefined, deadline: number,
  ): Promise<Map<string, ProofStatusEntry>> {
    const prefix = statusKeyPrefix(client.chain, verifier, sender);
    this.counters.batches++;
    return this.readFresh(client, verifier, sender, ids, fromBlock, deadline).then(
      (entries) => {
        client.answered();
        const map = new Map<string, ProofStatusEntry>();
        for (const e of entries) {
          map.set(idKey(e.requestId), e);
          const failed = isProofStatusError(e);
          if (failed) this.counters.errors++;
          else this.counters.chainReads++;
          // An error the chain itself answered (at a block) is an answer like any other: cached too.
          if (!failed || e.blockNumber !== undefined) keep(this.statuses, prefix + idKey(e.requestId), { ...e }, this.ttlOf(e));
        }
        return map;
      },
      (err: unknown) => {
        const e = classify(err, client.chain, this.timeoutMs);
        client.failed(e);
        return new Map(ids.map((id) => [idKey(id), this.errorEntry(id, e.code, e.message)]));
      },
    );
  }

  private async readFresh(
    client: ChainClient, verifier: Address, sender: Address, ids: RequestId[], fromBlock: bigint | number | undefined, deadline: number,
  ): Promise<ProofStatusEntry[]> {
    const checkDeadline = () => {
      if (performance.now() >= deadline) throw timeoutError(client.chain, this.timeoutMs);
    };
    await client.ensureReady();
    checkDeadline();
    const blockNumber = await client.client.getBlockNumber({ cacheTime: 0 });
    checkDeadline();
    const { entries, method, proofBlocks } = await this.reads.read(client, verifier, sender, ids, blockNumber, checkDeadline);
    if (method !== undefined) {
      await this.txHashes.attach(client, verifier, sender, method, entries, proofBlocks, blockNumber, fromBlock, deadline);
    }
    return entries;
  }
}
