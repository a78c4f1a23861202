/**
 * A method counts as absent when every call answers an empty revert or undecodable data, and as present when it
 * answers or reverts with a reason (e.g. `RequestIdNotFound`).
 */
import type { LRUCache } from 'lru-cache';
import { decodeErrorResult, decodeFunctionResult, encodeFunctionData, type Address, type Hex } from 'viem';
import { interfaceOf, MULTICALL3_ADDRESS, multicall3Abi, requestAbi, VERIFIER_METHODS, verifierAbi, type VerifierMethod } from './abi.js';
import type { ChainClient } from './chain-client.js';
import { keep, lruCache } from '../domain/cache.js';
import type { ChainErrorCode, ProofStatusEntry, ProofStatusRead, RequestId } from './proof-status.js';
import type { ChainReaderStats } from './proof-status.js';
import { ChainReadError, clip, revertDataOf } from './rpc-errors.js';

const INTERFACE_TTL_MS = 10 * 60_000;

export const idKey = (id: RequestId) => (typeof id === 'bigint' ? id.toString() : String(id));

export const statusKeyPrefix = (chain: string, verifier: Address, sender: Address) =>
  `${chain}|${verifier.toLowerCase()}|${sender.toLowerCase()}|`;

type Raw = { ok: boolean; data: Hex };

type Decoded = { entry: ProofStatusEntry; proofBlock?: bigint };

export interface StatusRound {
  entries: ProofStatusEntry[];
  method?: VerifierMethod;
  /** Proof blocks by request id (idKey), for the txHash lookup. */
  proofBlocks: Map<string, bigint>;
}

export class StatusReads {
  private readonly interfaces: LRUCache<string, VerifierMethod> | undefined;

  constructor(private readonly counters: ChainReaderStats, private readonly batchSize: number, clock: () => number) {
    this.interfaces = lruCache(10_000, clock);
  }

  /** Rejects on transport failures and the deadline. */
  async read(
    chain: ChainClient, verifier: Address, sender: Address, ids: RequestId[], blockNumber: bigint, checkDeadline: () => void,
  ): Promise<StatusRound> {
    const contractKey = `${chain.chain}|${verifier.toLowerCase()}`;
    const known = this.interfaces?.get(contractKey);
    const order: readonly VerifierMethod[] = known ? [known, ...VERIFIER_METHODS.filter((m) => m !== known)] : VERIFIER_METHODS;
    for (const method of order) {
      const legacy = interfaceOf(method) === 'legacy';
      const calls: { id: RequestId; to: Address; data: Hex }[] = [];
      const tooBig: RequestId[] = [];
      for (const id of ids) {
        if (legacy && BigInt(id) >= 2n ** 64n) {
          tooBig.push(id);
          continue;
        }
        calls.push({ id, to: verifier, data: encodeFunctionData({ abi: verifierAbi, functionName: method, args: [sender, BigInt(id)] }) });
      }
      const raws = calls.length > 0 ? await this.callMany(chain, calls, blockNumber) : [];
      checkDeadline();
      const decoded = calls.map((c, i) => ({ id: c.id, read: decode(method, c.id, raws[i], blockNumber, chain.chain, verifier) }));
      if (decoded.every((d) => d.read === undefined)) continue;

      keep(this.interfaces, contractKey, method, INTERFACE_TTL_MS);
      const noData = (id: RequestId) => `verifier ${verifier} answered no data for request ${idKey(id)} (${method})`;
      const entries = decoded.map(({ id, read }): ProofStatusEntry => read?.entry ??
        { requestId: id, error: noData(id), code: 'not-a-verifier', blockNumber });
      for (const id of tooBig) {
        entries.push({ requestId: id, error: `requestId ${idKey(id)} does not fit the verifier's uint64 request ids`, code: 'bad-request' });
      }
      const proofBlocks = new Map<string, bigint>();
      for (const { id, read } of decoded) if (read?.proofBlock !== undefined) proofBlocks.set(idKey(id), read.proofBlock);
      if (!legacy) await this.readMultiRequests(chain, verifier, sender, entries, blockNumber);
      checkDeadline();
      return { entries, method, proofBlocks };
    }

    this.interfaces?.delete(contractKey);
    const code = await chain.client.getCode({ address: verifier, blockNumber });
    const [errCode, message]: [ChainErrorCode, string] = code === undefined || code === '0x'
      ? ['no-contract', `no contract is deployed at ${verifier} on ${chain.chain} (block ${blockNumber})`]
      : ['not-a-verifier', `the contract at ${verifier} on ${chain.chain} has none of the iden3 verifier functions (${VERIFIER_METHODS.join(', ')})`];
    return { entries: ids.map((id) => ({ requestId: id, error: message, code: errCode, blockNumber })), proofBlocks: new Map() };
  }

  /**
   * An id the verifier knows no request of may be one of its multi-requests (current contracts): its status is
   * `getMultiRequestProofsStatus`, verified when every request of it is. Replaces those entries in place.
   */
  private async readMultiRequests(
    chain: ChainClient, verifier: Address, sender: Address, entries: ProofStatusEntry[], blockNumber: bigint,
  ): Promise<void> {
    const missing = entries.flatMap((e, i) => ('code' in e && e.code === 'request-not-found' ? [{ i, requestId: e.requestId }] : []));
    if (missing.length === 0) return;
    const calls = missing.map(({ requestId }) => ({
      to: verifier,
      data: encodeFunctionData({ abi: requestAbi, functionName: 'getMultiRequestProofsStatus', args: [BigInt(requestId), sender] }),
    }));
    const raws = await this.callMany(chain, calls, blockNumber);
    missing.forEach(({ i, requestId }, k) => {
      const raw = raws[k];
      if (raw === undefined) return;
      if (raw.ok) {
        try {
          const statuses = decodeFunctionResult({ abi: requestAbi, functionName: 'getMultiRequestProofsStatus', data: raw.data });
          entries[i] = { requestId, verified: statuses.length > 0 && statuses.every((x) => x.isVerified), blockNumber, method: 'getMultiRequestProofsStatus', cached: false };
        } catch { /* not a multi-request reader: the request stays not found */ }
        return;
      }
      try {
        const name: string = decodeErrorResult({ abi: requestAbi, data: raw.data }).errorName;
        if (name === 'MultiRequestIdNotFound' || name === 'RequestIdNotFound') return;
        entries[i] = { requestId, error: `verifier ${verifier} reverted the status of multi-request ${idKey(requestId)} with ${name}`, code: 'reverted', blockNumber };
      } catch {
        if (raw.data.length >= 10) {
          entries[i] = { requestId, error: `verifier ${verifier} reverted the status of multi-request ${idKey(requestId)} (${raw.data.slice(0, 10)})`, code: 'reverted', blockNumber };
        }
      }
    });
  }

  private async callMany(chain: ChainClient, calls: { to: Address; data: Hex }[], blockNumber: bigint): Promise<Raw[]> {
    const { client } = chain;
    if (chain.multicall3) {
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
          if (revertDataOf(err) !== undefined) throw new ChainReadError('rpc-error', `${chain.chain}: the Multicall3 call reverted`);
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
}

/** What `method` answered for `id`; undefined where the answer says the method is absent (or there was none). */
function decode(
  method: VerifierMethod, id: RequestId, raw: Raw | undefined, blockNumber: bigint, chain: string, verifier: Address,
): Decoded | undefined {
  if (raw === undefined) return undefined;
  if (raw.ok) {
    if (raw.data === '0x') return undefined;
    try {
      const s = decodeFunctionResult({ abi: verifierAbi, functionName: method, data: raw.data });
      if (typeof s === 'boolean') return { entry: { requestId: id, verified: s, blockNumber, method, cached: false } };
      if (typeof s?.isVerified !== 'boolean') return undefined;
      const legacy = 'blockTimestamp' in s;
      const at = (legacy ? s.blockTimestamp : s.timestamp) ?? 0n;
      const entry: ProofStatusRead = { requestId: id, verified: s.isVerified, blockNumber, method, cached: false };
      if (s.isVerified && at > 0n && at <= BigInt(Number.MAX_SAFE_INTEGER)) entry.provedAt = Number(at);
      return { entry, proofBlock: legacy && s.isVerified && s.blockNumber > 0n ? s.blockNumber : undefined };
    } catch {
      return undefined;
    }
  }
  if (raw.data.length < 10) return undefined; // empty revert: the function does not exist (or says nothing)
  const notFound = `request ${idKey(id)} does not exist on verifier ${verifier} (${chain})`;
  const reverted = (error: string, code: ChainErrorCode = 'reverted'): Decoded => ({ entry: { requestId: id, error, code, blockNumber } });
  try {
    const e = decodeErrorResult({ abi: verifierAbi, data: raw.data });
    if (e.errorName === 'RequestIdNotFound') return reverted(notFound, 'request-not-found');
    if (e.errorName === 'Error') {
      const reason = String(e.args?.[0] ?? '');
      if (/request id doesn'?t exist/i.test(reason)) return reverted(notFound, 'request-not-found');
      return reverted(`verifier ${verifier} reverted: ${clip(JSON.stringify(reason), 160)}`);
    }
    if (e.errorName === 'Panic') return reverted(`verifier ${verifier} reverted with panic ${String(e.args?.[0])}`);
    return reverted(`verifier ${verifier} reverted with ${e.errorName}`);
  } catch {
    return reverted(`verifier ${verifier} reverted with custom error ${raw.data.slice(0, 10)}`);
  }
}
