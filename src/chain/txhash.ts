/** A search that found nothing or failed (a provider's range limit) is not repeated for a minute. */
import type { LRUCache } from 'lru-cache';
import type { Address, Hex } from 'viem';
import { submissionEventOf, type VerifierMethod } from './abi.js';
import type { ChainClient } from './chain-client.js';
import { keep, lruCache } from '../domain/cache.js';
import { isProofStatusError, type ProofStatusEntry, type ProofStatusRead, type RequestId } from './proof-status.js';
import type { ChainReaderStats } from './proof-status.js';
import { idKey, statusKeyPrefix } from './status-reads.js';

const TXHASH_MISS_TTL_MS = 60_000;

export interface TxHashOptions {
  /** Blocks searched back from the read block; 0 disables the lookup. */
  lookbackBlocks: number;
  maxEntries: number;
  timeoutMs: number;
  clock: () => number;
}

export class TxHashLookup {
  /** false: looked up recently and not found. */
  private readonly hashes: LRUCache<string, Hex | false> | undefined;

  constructor(private readonly counters: ChainReaderStats, private readonly options: TxHashOptions) {
    this.hashes = lruCache(options.maxEntries, options.clock);
  }

  /** Best effort, bounded by the deadline. */
  async attach(
    chain: ChainClient, verifier: Address, sender: Address, method: VerifierMethod, entries: ProofStatusEntry[],
    proofBlocks: Map<string, bigint>, readBlock: bigint, fromBlock: bigint | number | undefined, deadline: number,
  ): Promise<void> {
    const { lookbackBlocks, timeoutMs } = this.options;
    if (lookbackBlocks <= 0) return;
    const prefix = statusKeyPrefix(chain.chain, verifier, sender);
    const wanted: ProofStatusRead[] = [];
    for (const e of entries) {
      if (isProofStatusError(e) || !e.verified) continue;
      const known = this.hashes?.get(prefix + idKey(e.requestId));
      if (known === undefined) wanted.push(e);
      else if (known !== false) e.txHash = known;
    }
    if (wanted.length === 0) return;

    const event = submissionEventOf(method);
    const floor = fromBlock === undefined ? 0n : BigInt(fromBlock);
    const windowStart = readBlock - BigInt(lookbackBlocks) + 1n;
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

    const lookups = Promise.all([...ranges.values()].map(async (r) => {
      this.counters.logQueries++;
      const found = new Map<string, Hex>();
      try {
        const logs = await chain.client.getLogs({
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

    // A little of the budget is left for the answer itself.
    const budget = Math.max(0, deadline - performance.now() - Math.min(250, timeoutMs / 4));
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
          const hash = found.get(idKey(id));
          const e = byId.get(idKey(id));
          if (e && hash !== undefined) e.txHash = hash;
          keep(this.hashes, prefix + idKey(id), hash ?? false, hash === undefined ? TXHASH_MISS_TTL_MS : Infinity);
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }
}
