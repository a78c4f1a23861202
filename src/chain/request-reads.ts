/** Requests change only through the owner's `updateRequest`, so they are kept; unknown ids and failed reads are not. */
import type { LRUCache } from 'lru-cache';
import { decodeAbiParameters, decodeErrorResult, decodeFunctionResult, encodeFunctionData, type Address, type Hex } from 'viem';
import { credentialAtomicQueryV2Params, credentialAtomicQueryV3Params, linkedMultiQueryParams, requestAbi } from './abi.js';
import type { ChainClient } from './chain-client.js';
import { keep, lruCache } from '../domain/cache.js';
import type { RequestId } from './proof-status.js';
import { revertDataOf } from './rpc-errors.js';
import type { StoredLinkedQuery, StoredMultiRequest, StoredQuery, StoredRequestEntry } from './proof-status.js';

const REQUEST_TTL_MS = 60_000;
/** A multi-request's requests read at once. */
const MULTI_PAGE = 64;

type Raw = { ok: true; data: Hex } | { ok: false; data: Hex };

async function call(chain: ChainClient, to: Address, data: Hex): Promise<Raw> {
  try {
    const r = await chain.client.call({ to, data });
    return { ok: true, data: r.data ?? '0x' };
  } catch (err) {
    const revert = revertDataOf(err);
    if (revert !== undefined) return { ok: false, data: revert };
    throw err;
  }
}

const isV3 = (circuitIds: readonly string[]) => circuitIds.some((c) => c.startsWith('credentialAtomicQueryV3'));

function decodeLinkedParams(params: Hex): StoredLinkedQuery | undefined {
  try {
    const [q] = decodeAbiParameters(linkedMultiQueryParams, params);
    const n = q.queryHash.length;
    if (!q.circuitIds.some((c) => c.startsWith('linkedMultiQuery')) || n > 10 ||
      [q.claimPathKey, q.operator, q.slotIndex, q.value].some((a) => a.length < n)) return undefined;
    const conditions = q.queryHash.map((queryHash, i) => ({
      claimPathKey: q.claimPathKey[i] ?? 0n, operator: q.operator[i] ?? 0n, slotIndex: q.slotIndex[i] ?? 0n, values: q.value[i] ?? [], queryHash,
    }));
    return { kind: 'linked', circuitIds: q.circuitIds, conditions, groupID: q.groupID };
  } catch {
    return undefined;
  }
}

function decodeQueryParams(params: Hex): StoredQuery | StoredLinkedQuery | undefined {
  const linked = decodeLinkedParams(params);
  if (linked !== undefined) return linked;
  try {
    const [v2] = decodeAbiParameters(credentialAtomicQueryV2Params, params);
    const base = {
      circuitIds: v2.circuitIds, schema: v2.schema, claimPathKey: v2.claimPathKey, operator: v2.operator,
      slotIndex: v2.slotIndex, values: v2.value, queryHash: v2.queryHash, allowedIssuers: v2.allowedIssuers,
      skipClaimRevocationCheck: v2.skipClaimRevocationCheck,
    };
    if (v2.circuitIds.length === 0) return undefined;
    if (!isV3(v2.circuitIds)) return { kind: 'v2', ...base, claimPathNotExists: v2.claimPathNotExists };
    const [v3] = decodeAbiParameters(credentialAtomicQueryV3Params, params);
    return {
      kind: 'v3', ...base, groupID: v3.groupID, nullifierSessionID: v3.nullifierSessionID, proofType: v3.proofType, verifierID: v3.verifierID,
    };
  } catch {
    return undefined;
  }
}

export class RequestReads {
  private readonly requests: LRUCache<string, StoredRequestEntry> | undefined;
  private readonly circuits: LRUCache<string, string[]> | undefined;

  constructor(maxEntries: number, clock: () => number) {
    this.requests = lruCache(maxEntries, clock);
    this.circuits = lruCache(1000, clock);
  }

  /** Rejects on transport failures. */
  async read(chain: ChainClient, verifier: Address, ids: readonly RequestId[]): Promise<StoredRequestEntry[]> {
    await chain.ensureReady();
    return Promise.all(ids.map(async (id) => {
      const key = `${chain.chain}|${verifier.toLowerCase()}|${BigInt(id)}`;
      const hit = this.requests?.get(key);
      if (hit !== undefined) return { ...hit, requestId: id };
      const entry = await this.readOne(chain, verifier, id);
      if (!('error' in entry)) keep(this.requests, key, entry, REQUEST_TTL_MS);
      return entry;
    }));
  }

  private async readOne(chain: ChainClient, verifier: Address, id: RequestId): Promise<StoredRequestEntry> {
    const requestId = id;
    const notFound = { requestId, code: 'request-not-found' as const, error: `request ${BigInt(id)} does not exist on verifier ${verifier} (${chain.chain})` };
    let validator: Address | undefined;
    let params: Hex | undefined;
    let creator: Address | undefined;
    const current = await call(chain, verifier, encodeFunctionData({ abi: requestAbi, functionName: 'getRequest', args: [BigInt(id)] }));
    if (current.ok && current.data !== '0x') {
      try {
        const r = decodeFunctionResult({ abi: requestAbi, functionName: 'getRequest', data: current.data });
        [validator, params, creator] = [r.validator, r.params, r.creator];
      } catch { /* not this interface */ }
    } else if (!current.ok && isNotFound(current.data)) {
      return (await this.readMulti(chain, verifier, id)) ?? notFound;
    }
    if (validator === undefined && BigInt(id) < 2n ** 64n) {
      const legacy = await call(chain, verifier, encodeFunctionData({ abi: requestAbi, functionName: 'getZKPRequest', args: [BigInt(id)] }));
      if (legacy.ok && legacy.data !== '0x') {
        try {
          const r = decodeFunctionResult({ abi: requestAbi, functionName: 'getZKPRequest', data: legacy.data });
          [validator, params] = [r.validator, r.data];
        } catch { /* not this interface either */ }
      } else if (!legacy.ok && isNotFound(legacy.data)) {
        return notFound;
      }
    }
    if (validator === undefined || params === undefined) {
      return { requestId, unreadable: `verifier ${verifier} does not show its requests (no getRequest or getZKPRequest answered)` };
    }
    if (/^0x0{40}$/i.test(validator)) return notFound; // an unset legacy request reads as zeros
    const query = decodeQueryParams(params);
    if (query === undefined) {
      return { requestId, validator, unreadable: `the params of request ${BigInt(id)} (validator ${validator}) are not a credential validator's query` };
    }
    const supported = await this.supportedCircuits(chain, validator);
    if (!query.circuitIds.some((c) => supported.includes(c))) {
      return {
        requestId, validator,
        unreadable: `validator ${validator} of request ${BigInt(id)} is not an iden3 credential validator of circuit ${query.circuitIds.join(', ')}`,
      };
    }
    return creator === undefined ? { requestId, validator, query } : { requestId, validator, query, creator };
  }

  private async readMulti(chain: ChainClient, verifier: Address, id: RequestId): Promise<StoredRequestEntry | undefined> {
    const raw = await call(chain, verifier, encodeFunctionData({ abi: requestAbi, functionName: 'getMultiRequest', args: [BigInt(id)] }));
    if (!raw.ok || raw.data === '0x') return undefined;
    let multi: { multiRequestId: bigint; requestIds: readonly bigint[]; groupIds: readonly bigint[] };
    try {
      multi = decodeFunctionResult({ abi: requestAbi, functionName: 'getMultiRequest', data: raw.data });
    } catch {
      return undefined;
    }
    if (multi.multiRequestId !== BigInt(id)) return undefined;
    // Every request, a page of MULTI_PAGE reads at a time (each page one JSON-RPC batch).
    const requests: StoredMultiRequest['requests'] = [];
    for (let i = 0; i < multi.requestIds.length; i += MULTI_PAGE) {
      requests.push(...await Promise.all(multi.requestIds.slice(i, i + MULTI_PAGE).map(async (r) => {
        const one = await this.readOne(chain, verifier, r);
        return 'requests' in one ? { requestId: r, unreadable: `request ${r} is itself a multi-request` } : one;
      })));
    }
    return { requestId: id, requests, groupIds: multi.groupIds };
  }

  private async supportedCircuits(chain: ChainClient, validator: Address): Promise<string[]> {
    const key = `${chain.chain}|${validator.toLowerCase()}`;
    const hit = this.circuits?.get(key);
    if (hit !== undefined) return hit;
    const raw = await call(chain, validator, encodeFunctionData({ abi: requestAbi, functionName: 'getSupportedCircuitIds' }));
    let ids: string[] = [];
    if (raw.ok && raw.data !== '0x') {
      try {
        ids = [...decodeFunctionResult({ abi: requestAbi, functionName: 'getSupportedCircuitIds', data: raw.data })];
      } catch { /* no such function */ }
    }
    keep(this.circuits, key, ids, REQUEST_TTL_MS);
    return ids;
  }
}

function isNotFound(data: Hex): boolean {
  if (data.length < 10) return false;
  try {
    const e = decodeErrorResult({ abi: requestAbi, data });
    const name: string = e.errorName;
    if (name === 'RequestIdNotFound' || name === 'MultiRequestIdNotFound') return true;
    return name === 'Error' && /request id doesn'?t exist/i.test(String(e.args?.[0] ?? ''));
  } catch {
    return false;
  }
}
