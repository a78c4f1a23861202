/**
 * ChainReader: reads iden3 verifier contracts over JSON-RPC with viem (one public client per configured chain, HTTP
 * transport with a timeout). What one `readProofStatuses` call does:
 *
 * 1. Cache: each (chain, verifier, sender, requestId) status read from the chain is reused for `cacheTtlMs`;
 *    concurrent reads of the same key share one RPC read (in-flight de-duplication).
 * 2. Chain check, once per chain (again every 10 minutes): `eth_chainId` must match the configured chain, and
 *    Multicall3 is looked for at its canonical address (`multicall: 'auto'`).
 * 3. One `eth_blockNumber`, then every read at that block: through Multicall3 `aggregate3` (one `eth_call` per
 *    100 reads) where the chain has it, else parallel `eth_call`s (sent as one JSON-RPC batch).
 * 4. Interface detection per contract (kept 10 minutes, re-detected when the contract stops answering it): tries
 *    `getRequestProofStatus`, `isRequestProofVerified` (iden3 contracts 3.x), `getProofStatus`, `isProofVerified`
 *    (1.x/2.x) in that order; a method counts as absent when every call answers an empty revert or undecodable data,
 *    and as present when it answers or reverts with a reason (e.g. `RequestIdNotFound`). Known contracts cost one try.
 * 5. txHash: for verified proofs, the proof-submission event (`ResponseSubmitted` / `ZKPResponseSubmitted`, both
 *    indexed by requestId and caller) is looked up with one `eth_getLogs` — at the proof's own block where the contract
 *    reports it (legacy `getProofStatus`), else over the last `txHashLookbackBlocks` blocks, never below `fromBlock`
 *    (pass the deployment block). Found hashes are kept (bounded); a search that found nothing or failed (e.g. a
 *    provider's block-range limit) is not repeated for a minute. A failed or late lookup only leaves txHash out.
 * 6. Deadline: the whole call answers within `timeoutMs`: reads still running then answer `timeout` entries. A chain
 *    that failed to answer (refused, timed out, HTTP error) is not asked again for `errorTtlMs`: its reads answer
 *    the same error at once. Nothing here throws or rejects: every problem is an entry with `error`.
 */
import {
  BaseError, createPublicClient, decodeErrorResult, decodeFunctionResult, encodeFunctionData, getAddress, http,
  HttpRequestError, isAddress, RpcRequestError, TimeoutError, type Address, type Hex, type PublicClient,
} from 'viem';
import { interfaceOf, MULTICALL3_ADDRESS, multicall3Abi, submissionEventOf, VERIFIER_METHODS, verifierAbi, type VerifierMethod } from './abi.js';
import { TtlCache } from './cache.js';
import { CHAIN_DEFAULTS, parseChainRef, type ChainEndpoint, type ChainSettings, type MulticallMode } from './config.js';
import {
  isProofStatusError, noRpcReason, type ChainErrorCode, type ProofStatusEntry, type ProofStatusError, type ProofStatusRead,
  type ProofStatusReader, type ReadProofStatusesRequest, type RequestId,
} from './proof-status.js';

export interface ChainReaderOptions {
  chains: Iterable<ChainEndpoint> | ReadonlyMap<string, ChainEndpoint>;
  defaultChain?: string;
  /** Deadline of one readProofStatuses call, and the HTTP timeout of each RPC request. Default 3000. */
  timeoutMs?: number;
  /** Default 5000; 0 disables the cache. */
  cacheTtlMs?: number;
  /** Default 10000. */
  cacheMaxEntries?: number;
  /** Default 1000; 0: a failed chain is asked again at once. */
  errorTtlMs?: number;
  /** Default 'auto'. */
  multicall?: MulticallMode;
  /** Default 10000; 0 disables the txHash lookup. */
  txHashLookbackBlocks?: number;
  /** Reads per Multicall3 call. Default 100. */
  multicallBatchSize?: number;
  /** HTTP retries of viem's transport on network errors and 5xx/429. Default 0 (the deadline is short). */
  retryCount?: number;
  /** Clock of the caches (epoch ms). Default Date.now. */
  clock?: () => number;
}

export interface ChainReaderStats {
  /** Statuses answered from the cache. */
  cacheHits: number;
  /** Statuses read from the chain (each counts once, however many callers shared the read). */
  chainReads: number;
  /** Read batches sent (one per block-number + calls round). */
  batches: number;
  /** Entries answered with an error. */
  errors: number;
  /** eth_call requests sent (a Multicall3 aggregate3 counts once). */
  ethCalls: number;
  /** Of which Multicall3 aggregate3 calls. */
  multicalls: number;
  /** eth_getLogs requests sent for txHash lookups. */
  logQueries: number;
}

const INTERFACE_TTL_MS = 10 * 60_000;
const READY_TTL_MS = 10 * 60_000;
const TXHASH_MISS_TTL_MS = 60_000;
const TIMEOUT = Symbol('timeout');

class ChainReadError extends Error {
  constructor(readonly code: ChainErrorCode, message: string) {
    super(message);
  }
}

interface ChainState {
  readonly endpoint: ChainEndpoint;
  readonly client: PublicClient;
  ready?: Promise<void>;
  readyAt: number;
  multicall3: boolean;
  /** performance.now() until which the chain is considered down. */
  downUntil: number;
  downError?: ChainReadError;
}

type Raw = { ok: boolean; data: Hex };
const MISSING = Symbol('missing');

const idKey = (id: RequestId) => (typeof id === 'bigint' ? id.toString() : String(id));

function validRequestId(id: unknown): id is RequestId {
  if (typeof id === 'number') return Number.isSafeInteger(id) && id >= 0;
  return typeof id === 'bigint' && id >= 0n && id < 2n ** 256n;
}

/** The revert data of a failed eth_call ('0x' for a revert without data), or undefined when it was no revert. */
function revertDataOf(err: unknown): Hex | undefined {
  if (!(err instanceof BaseError)) return undefined;
  if (err.walk((e) => e instanceof HttpRequestError || e instanceof TimeoutError)) return undefined;
  let data: Hex | undefined;
  let revert = false;
  err.walk((e) => {
    const x = e as { code?: unknown; data?: unknown; details?: unknown; message?: unknown };
    if (x.code === 3) revert = true;
    if ((typeof x.details === 'string' && /revert/i.test(x.details)) || (typeof x.message === 'string' && /revert/i.test(x.message))) revert = true;
    if (data === undefined) {
      const d = typeof x.data === 'object' && x.data !== null ? (x.data as { data?: unknown }).data : x.data;
      if (typeof d === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(d)) data = d as Hex;
    }
    return false;
  });
  if (data !== undefined && (revert || data.length >= 10)) return data;
  return revert ? '0x' : undefined;
}

function clip(s: string, n = 200): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

/** A transport or node failure in words (never the URL: it may hold an API key). */
function classify(err: unknown, chain: string, timeoutMs: number): ChainReadError {
  if (err instanceof ChainReadError) return err;
  if (err instanceof BaseError) {
    if (err.walk((e) => e instanceof TimeoutError)) return new ChainReadError('timeout', `${chain} did not answer within ${timeoutMs} ms`);
    const http = err.walk((e) => e instanceof HttpRequestError) as HttpRequestError | null;
    if (http) {
      if (typeof http.status === 'number') return new ChainReadError('unreachable', `${chain} RPC endpoint answered HTTP ${http.status}`);
      let code: string | undefined;
      err.walk((e) => {
        const c = (e as { code?: unknown }).code;
        if (code === undefined && typeof c === 'string') code = c;
        return false;
      });
      const why = code === 'ECONNREFUSED' ? 'connection refused' : code ? code : 'network error';
      return new ChainReadError('unreachable', `${chain} is unreachable (${why})`);
    }
    const rpc = err.walk((e) => e instanceof RpcRequestError) as RpcRequestError | null;
    if (rpc) return new ChainReadError('rpc-error', `${chain} RPC error ${rpc.code}: ${clip(rpc.details || rpc.shortMessage)}`);
    return new ChainReadError('rpc-error', `${chain} read failed: ${clip(err.shortMessage)}`);
  }
  return new ChainReadError('rpc-error', `${chain} read failed: ${clip(err instanceof Error ? err.message : String(err))}`);
}

const isTransportFailure = (e: ChainReadError) => e.code === 'unreachable' || e.code === 'timeout' || e.code === 'wrong-chain';

export class ChainReader implements ProofStatusReader {
  readonly defaultChain: string | undefined;
  private readonly chains = new Map<string, ChainState>();
  private readonly timeoutMs: number;
  private readonly errorTtlMs: number;
  private readonly multicall: MulticallMode;
  private readonly lookback: number;
  private readonly batchSize: number;
  private readonly clock: () => number;
  private readonly statuses: TtlCache<ProofStatusEntry>;
  /** Found submission hashes (kept), or null: looked up recently and not found (kept TXHASH_MISS_TTL_MS). */
  private readonly txHashes: TtlCache<Hex | null>;
  private readonly interfaces: TtlCache<VerifierMethod>;
  private readonly inflight = new Map<string, Promise<ProofStatusEntry>>();
  private readonly counters: ChainReaderStats = { cacheHits: 0, chainReads: 0, batches: 0, errors: 0, ethCalls: 0, multicalls: 0, logQueries: 0 };

  constructor(options: ChainReaderOptions) {
    this.timeoutMs = options.timeoutMs ?? CHAIN_DEFAULTS.timeoutMs;
    this.errorTtlMs = options.errorTtlMs ?? CHAIN_DEFAULTS.errorTtlMs;
    this.multicall = options.multicall ?? CHAIN_DEFAULTS.multicall;
    this.lookback = options.txHashLookbackBlocks ?? CHAIN_DEFAULTS.txHashLookbackBlocks;
    this.batchSize = Math.max(1, options.multicallBatchSize ?? 100);
    this.clock = options.clock ?? Date.now;
    const max = options.cacheMaxEntries ?? CHAIN_DEFAULTS.cacheMaxEntries;
    this.statuses = new TtlCache(max, options.cacheTtlMs ?? CHAIN_DEFAULTS.cacheTtlMs, this.clock);
    this.txHashes = new TtlCache(max, Number.MAX_SAFE_INTEGER / 2, this.clock);
    this.interfaces = new TtlCache(10_000, INTERFACE_TTL_MS, this.clock);
    const endpoints = options.chains instanceof Map ? [...options.chains.values()] : [...(options.chains as Iterable<ChainEndpoint>)];
    for (const endpoint of endpoints) {
      const client = createPublicClient({
        transport: http(endpoint.url, {
          timeout: this.timeoutMs,
          retryCount: options.retryCount ?? 0,
          batch: { batchSize: 200, wait: 0 },
        }),
      }) as PublicClient;
      this.chains.set(endpoint.chain, { endpoint, client, readyAt: 0, multicall3: false, downUntil: 0 });
    }
    const def = options.defaultChain === undefined ? undefined : parseChainRef(options.defaultChain)?.chain;
    this.defaultChain = def ?? (this.chains.size === 1 ? this.chains.keys().next().value : undefined);
  }

  /** A reader for the settings of `chainSettingsFromEnv`. */
  static fromSettings(settings: ChainSettings, extra: Partial<ChainReaderOptions> = {}): ChainReader {
    return new ChainReader({ ...settings, ...extra });
  }

  hasChain(chain: string): boolean {
    const ref = parseChainRef(chain);
    return ref !== undefined && this.chains.has(ref.chain);
  }

  /** Configured chains (CAIP-2). */
  chainList(): string[] {
    return [...this.chains.keys()];
  }

  stats(): ChainReaderStats {
    return { ...this.counters };
  }

  /** Forgets cached statuses, detected interfaces and chain checks (not the found txHashes). */
  clearCache(): void {
    this.statuses.clear();
    this.interfaces.clear();
    for (const s of this.chains.values()) {
      s.ready = undefined;
      s.downUntil = 0;
    }
  }

  async readProofStatuses(request: ReadProofStatusesRequest): Promise<ProofStatusEntry[]> {
    try {
      return await this.read(request);
    } catch (err) {
      // Not expected: read() handles its failures. Kept so the promise never rejects.
      const ids = Array.isArray(request?.requestIds) ? request.requestIds : [];
      const e = classify(err, String(request?.chain), this.timeoutMs);
      return ids.map((requestId) => this.errorEntry(requestId, e.code, e.message));
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
    const state = ref && this.chains.get(ref.chain);
    if (!state) {
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
    const chain = state.endpoint.chain;
    const prefix = `${chain}|${verifier.toLowerCase()}|${sender.toLowerCase()}|`;

    const results: (ProofStatusEntry | Promise<ProofStatusEntry>)[] = new Array(ids.length);
    const toRead: RequestId[] = [];
    const seen = new Map<string, number>();
    ids.forEach((id, i) => {
      if (!validRequestId(id)) {
        results[i] = this.errorEntry(id, 'bad-request', `requestId ${String(id)} is not a non-negative integer`);
        return;
      }
      const key = prefix + idKey(id);
      const hit = this.statuses.get(key);
      if (hit !== undefined) {
        this.counters.cacheHits++;
        results[i] = { ...hit, requestId: id, cached: true };
        return;
      }
      const flying = this.inflight.get(key);
      if (flying !== undefined) {
        results[i] = flying;
        return;
      }
      if (!seen.has(key)) {
        seen.set(key, i);
        toRead.push(id);
      }
      results[i] = undefined as never; // filled below
    });

    if (toRead.length > 0) {
      let batch: Promise<Map<string, ProofStatusEntry>>;
      if (state.downUntil > performance.now() && state.downError) {
        const e = state.downError;
        batch = Promise.resolve(new Map(toRead.map((id) => [idKey(id), this.errorEntry(id, e.code, e.message)])));
      } else {
        batch = this.readBatch(state, verifier, sender, toRead, request.fromBlock, deadline);
      }
      for (const id of toRead) {
        const key = prefix + idKey(id);
        const one = batch.then((m) => m.get(idKey(id)) ?? this.errorEntry(id, 'rpc-error', 'no status was read'));
        this.inflight.set(key, one);
        void one.finally(() => {
          if (this.inflight.get(key) === one) this.inflight.delete(key);
        });
      }
      ids.forEach((id, i) => {
        if (results[i] === undefined) results[i] = this.inflight.get(prefix + idKey(id)) as Promise<ProofStatusEntry>;
      });
    }

    const pending = results.some((r) => r instanceof Promise);
    if (!pending) return results as ProofStatusEntry[];

    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<typeof TIMEOUT>((resolve) => {
      timer = setTimeout(() => resolve(TIMEOUT), Math.max(0, deadline - performance.now()));
    });
    try {
      return await Promise.all(results.map(async (r, i) => {
        if (!(r instanceof Promise)) return r;
        const v = await Promise.race([r, expired]);
        if (v !== TIMEOUT) return v.requestId === ids[i] ? v : { ...v, requestId: ids[i] };
        return this.errorEntry(ids[i], 'timeout', `${chain} did not answer within ${this.timeoutMs} ms`);
      }));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Reads the statuses of `ids` (all unknown to the cache) in one round. Never rejects. */
  private readBatch(
    state: ChainState, verifier: Address, sender: Address, ids: RequestId[], fromBlock: bigint | number | undefined, deadline: number,
  ): Promise<Map<string, ProofStatusEntry>> {
    const chain = state.endpoint.chain;
    const prefix = `${chain}|${verifier.toLowerCase()}|${sender.toLowerCase()}|`;
    this.counters.batches++;
    return this.readFresh(state, verifier, sender, ids, fromBlock, deadline).then(
      (entries) => {
        state.downUntil = 0;
        state.downError = undefined;
        const map = new Map<string, ProofStatusEntry>();
        for (const e of entries) {
          map.set(idKey(e.requestId), e);
          if (isProofStatusError(e)) {
            this.counters.errors++;
            // An error the chain itself answered (at a block) is an answer like any other: cached too.
            if (e.blockNumber !== undefined) this.statuses.set(prefix + idKey(e.requestId), { ...e });
          } else {
            this.counters.chainReads++;
            this.statuses.set(prefix + idKey(e.requestId), { ...e });
          }
        }
        return map;
      },
      (err: unknown) => {
        const e = classify(err, chain, this.timeoutMs);
        if (isTransportFailure(e) && this.errorTtlMs > 0) {
          state.downUntil = performance.now() + this.errorTtlMs;
          state.downError = e;
        }
        return new Map(ids.map((id) => [idKey(id), this.errorEntry(id, e.code, e.message)]));
      },
    );
  }

  private checkDeadline(deadline: number, chain: string): void {
    if (performance.now() >= deadline) throw new ChainReadError('timeout', `${chain} did not answer within ${this.timeoutMs} ms`);
  }

  /** eth_chainId must match; Multicall3 looked for. Once per chain (again after READY_TTL_MS or a failure). */
  private ensureReady(state: ChainState): Promise<void> {
    const now = this.clock();
    if (state.ready && now - state.readyAt < READY_TTL_MS) return state.ready;
    const { client, endpoint } = state;
    const ready = (async () => {
      const [chainId, code] = await Promise.all([
        client.getChainId(),
        this.multicall === 'auto' ? client.getCode({ address: MULTICALL3_ADDRESS }) : Promise.resolve(undefined),
      ]);
      if (chainId !== endpoint.chainId) {
        throw new ChainReadError('wrong-chain', `the RPC endpoint configured for ${endpoint.chain} serves chain eip155:${chainId}`);
      }
      state.multicall3 = code !== undefined && code !== '0x';
    })();
    state.ready = ready;
    state.readyAt = now;
    ready.catch(() => {
      if (state.ready === ready) state.ready = undefined;
    });
    return ready;
  }

  /** Raw results of eth_calls at one block: through Multicall3 when the chain has it, else in parallel. */
  private async callMany(state: ChainState, calls: { to: Address; data: Hex }[], blockNumber: bigint): Promise<Raw[]> {
    const { client } = state;
    if (state.multicall3) {
      const chunks: { to: Address; data: Hex }[][] = [];
      for (let i = 0; i < calls.length; i += this.batchSize) chunks.push(calls.slice(i, i + this.batchSize));
      const answers = await Promise.all(chunks.map(async (chunk) => {
        this.counters.ethCalls++;
        this.counters.multicalls++;
        try {
          const out = await client.readContract({
            address: MULTICALL3_ADDRESS,
            abi: multicall3Abi,
            functionName: 'aggregate3',
            args: [chunk.map((c) => ({ target: c.to, allowFailure: true, callData: c.data }))],
            blockNumber,
          });
          return out.map((r): Raw => ({ ok: r.success, data: r.returnData }));
        } catch (err) {
          if (revertDataOf(err) !== undefined) throw new ChainReadError('rpc-error', `${state.endpoint.chain}: the Multicall3 call reverted`);
          throw err;
        }
      }));
      return answers.flat();
    }
    return Promise.all(calls.map(async (c): Promise<Raw> => {
      this.counters.ethCalls++;
      try {
        const r = await client.call({ to: c.to, data: c.data, blockNumber });
        return { ok: true, data: r.data ?? '0x' };
      } catch (err) {
        const data = revertDataOf(err);
        if (data !== undefined) return { ok: false, data };
        throw err;
      }
    }));
  }

  private decode(method: VerifierMethod, id: RequestId, raw: Raw, blockNumber: bigint, chain: string, verifier: Address):
    { entry: ProofStatusEntry; proofBlock?: bigint } | typeof MISSING {
    if (raw.ok) {
      if (raw.data === '0x') return MISSING;
      try {
        const out = decodeFunctionResult({ abi: verifierAbi, functionName: method, data: raw.data }) as unknown;
        if (typeof out === 'boolean') return { entry: { requestId: id, verified: out, blockNumber, method, cached: false } };
        const s = out as { isVerified: boolean; timestamp?: bigint; blockTimestamp?: bigint; blockNumber?: bigint };
        if (typeof s?.isVerified !== 'boolean') return MISSING;
        const at = s.timestamp ?? s.blockTimestamp ?? 0n;
        const entry: ProofStatusRead = { requestId: id, verified: s.isVerified, blockNumber, method, cached: false };
        if (s.isVerified && at > 0n && at <= BigInt(Number.MAX_SAFE_INTEGER)) entry.provedAt = Number(at);
        return { entry, proofBlock: s.isVerified && s.blockNumber !== undefined && s.blockNumber > 0n ? s.blockNumber : undefined };
      } catch {
        return MISSING;
      }
    }
    if (raw.data.length < 10) return MISSING; // empty revert: the function does not exist (or says nothing)
    const notFound = `request ${idKey(id)} does not exist on verifier ${verifier} (${chain})`;
    try {
      const e = decodeErrorResult({ abi: verifierAbi, data: raw.data });
      if (e.errorName === 'RequestIdNotFound') return { entry: { requestId: id, error: notFound, code: 'request-not-found', blockNumber } };
      if (e.errorName === 'Error') {
        const reason = String((e.args as readonly unknown[])?.[0] ?? '');
        if (/request id doesn'?t exist/i.test(reason)) return { entry: { requestId: id, error: notFound, code: 'request-not-found', blockNumber } };
        return { entry: { requestId: id, error: `verifier ${verifier} reverted: ${clip(JSON.stringify(reason), 160)}`, code: 'reverted', blockNumber } };
      }
      if (e.errorName === 'Panic') {
        return { entry: { requestId: id, error: `verifier ${verifier} reverted with panic ${String((e.args as readonly unknown[])?.[0])}`, code: 'reverted', blockNumber } };
      }
      return { entry: { requestId: id, error: `verifier ${verifier} reverted with ${e.errorName}`, code: 'reverted', blockNumber } };
    } catch {
      return { entry: { requestId: id, error: `verifier ${verifier} reverted with custom error ${raw.data.slice(0, 10)}`, code: 'reverted', blockNumber } };
    }
  }

  private async readFresh(
    state: ChainState, verifier: Address, sender: Address, ids: RequestId[], fromBlock: bigint | number | undefined, deadline: number,
  ): Promise<ProofStatusEntry[]> {
    const chain = state.endpoint.chain;
    await this.ensureReady(state);
    this.checkDeadline(deadline, chain);
    const blockNumber = await state.client.getBlockNumber({ cacheTime: 0 });
    this.checkDeadline(deadline, chain);

    const contractKey = `${chain}|${verifier.toLowerCase()}`;
    const known = this.interfaces.get(contractKey);
    const order: readonly VerifierMethod[] = known ? [known, ...VERIFIER_METHODS.filter((m) => m !== known)] : VERIFIER_METHODS;
    for (const method of order) {
      const legacy = interfaceOf(method) === 'legacy';
      const calls: { to: Address; data: Hex }[] = [];
      const callIds: RequestId[] = [];
      const tooBig: RequestId[] = [];
      for (const id of ids) {
        if (legacy && BigInt(id) >= 2n ** 64n) {
          tooBig.push(id);
          continue;
        }
        calls.push({ to: verifier, data: encodeFunctionData({ abi: verifierAbi, functionName: method, args: [sender, BigInt(id)] }) });
        callIds.push(id);
      }
      const raws = calls.length > 0 ? await this.callMany(state, calls, blockNumber) : [];
      this.checkDeadline(deadline, chain);
      const decoded = raws.map((r, i) => this.decode(method, callIds[i], r, blockNumber, chain, verifier));
      if (decoded.length === 0 || decoded.every((d) => d === MISSING)) continue;

      this.interfaces.set(contractKey, method);
      const entries: ProofStatusEntry[] = decoded.map((d, i) => d === MISSING
        ? { requestId: callIds[i], error: `verifier ${verifier} answered no data for request ${idKey(callIds[i])} (${method})`, code: 'not-a-verifier', blockNumber }
        : d.entry);
      for (const id of tooBig) entries.push({ requestId: id, error: `requestId ${idKey(id)} does not fit the verifier's uint64 request ids`, code: 'bad-request' });

      const proofBlocks = new Map<string, bigint>();
      decoded.forEach((d, i) => {
        if (d !== MISSING && d.proofBlock !== undefined) proofBlocks.set(idKey(callIds[i]), d.proofBlock);
      });
      await this.attachTxHashes(state, verifier, sender, method, entries, proofBlocks, blockNumber, fromBlock, deadline);
      return entries;
    }

    this.interfaces.delete(contractKey);
    const code = await state.client.getCode({ address: verifier, blockNumber });
    const [errCode, message]: [ChainErrorCode, string] = code === undefined || code === '0x'
      ? ['no-contract', `no contract is deployed at ${verifier} on ${chain} (block ${blockNumber})`]
      : ['not-a-verifier', `the contract at ${verifier} on ${chain} has none of the iden3 verifier functions (${VERIFIER_METHODS.join(', ')})`];
    return ids.map((id) => ({ requestId: id, error: message, code: errCode, blockNumber }));
  }

  /** Adds txHash to verified entries from the submission logs; best effort, bounded by the deadline. */
  private async attachTxHashes(
    state: ChainState, verifier: Address, sender: Address, method: VerifierMethod, entries: ProofStatusEntry[],
    proofBlocks: Map<string, bigint>, readBlock: bigint, fromBlock: bigint | number | undefined, deadline: number,
  ): Promise<void> {
    if (this.lookback <= 0) return;
    const chain = state.endpoint.chain;
    const prefix = `${chain}|${verifier.toLowerCase()}|${sender.toLowerCase()}|`;
    const wanted: ProofStatusRead[] = [];
    for (const e of entries) {
      if (isProofStatusError(e) || !e.verified) continue;
      const known = this.txHashes.get(prefix + idKey(e.requestId));
      if (known === undefined) wanted.push(e);
      else if (known !== null) e.txHash = known;
    }
    if (wanted.length === 0) return;

    const event = submissionEventOf(method);
    const floor = fromBlock === undefined ? 0n : BigInt(fromBlock);
    const windowStart = readBlock - BigInt(this.lookback) + 1n;
    const ranges = new Map<string, { from: bigint; to: bigint; ids: RequestId[] }>();
    for (const e of wanted) {
      const at = proofBlocks.get(idKey(e.requestId));
      const from = at ?? (windowStart > floor ? windowStart : floor);
      const to = at ?? readBlock;
      if (from < 0n || from > to) continue;
      const k = `${from}-${to}`;
      const r = ranges.get(k) ?? { from, to, ids: [] };
      r.ids.push(e.requestId);
      ranges.set(k, r);
    }

    // Each range answers the hashes it found; a failed query (e.g. a provider's range limit) finds nothing.
    const lookups = Promise.all([...ranges.values()].map(async (r) => {
      this.counters.logQueries++;
      const found = new Map<string, Hex>();
      try {
        const logs = await state.client.getLogs({
          address: verifier,
          event,
          args: { requestId: r.ids.map((id) => BigInt(id)), caller: sender },
          fromBlock: r.from,
          toBlock: r.to,
        });
        for (const log of logs) {
          const id = log.args?.requestId;
          if (id !== undefined && log.transactionHash) found.set(id.toString(), log.transactionHash); // the latest wins
        }
      } catch {
        // txHash is best effort
      }
      return { ids: r.ids, found };
    }));

    // Leave a little of the budget for the answer itself; a late lookup only leaves txHash out.
    const budget = Math.max(0, deadline - performance.now() - Math.min(250, this.timeoutMs / 4));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), budget);
    });
    try {
      const results = await Promise.race([lookups, late]);
      if (!results) return; // too late: try again next time
      const byId = new Map(wanted.map((e) => [idKey(e.requestId), e]));
      for (const { ids, found } of results) {
        for (const id of ids) {
          const hash = found.get(idKey(id)) ?? null;
          const e = byId.get(idKey(id));
          if (e && hash !== null) e.txHash = hash;
          this.txHashes.set(prefix + idKey(id), hash, hash === null ? TXHASH_MISS_TTL_MS : undefined);
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
