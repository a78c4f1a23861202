/**
 * What a verifier contract stores for a request id (`getRequest` / `getZKPRequest`), as the service reads it: the
 * credential validator's query decoded, or why it could not be read as one. Types and pure helpers only (no viem).
 */
import type { ProofStatusError, RequestId } from './proof-status.js';

/** The query of a credential validator's params (CredentialAtomicQuery of the V2 validators, CredentialAtomicQueryV3). */
export interface StoredQuery {
  /** 'v2': CredentialAtomicQuerySigV2 / MTPV2 validators; 'v3': the V3 (beta and stable) validators. */
  kind: 'v2' | 'v3';
  circuitIds: readonly string[];
  schema: bigint;
  claimPathKey: bigint;
  operator: bigint;
  slotIndex: bigint;
  values: readonly bigint[];
  queryHash: bigint;
  allowedIssuers: readonly bigint[];
  skipClaimRevocationCheck: boolean;
  /** V2 only. */
  claimPathNotExists?: bigint;
  /** V3 only. */
  groupID?: bigint;
  nullifierSessionID?: bigint;
  proofType?: bigint;
  verifierID?: bigint;
}

/** A request whose params are a credential validator's query. */
export interface StoredRequestRead {
  requestId: RequestId;
  validator: string;
  query: StoredQuery;
}

/** A request that exists but cannot be read as a credential validator's query (a custom validator, a test double). */
export interface StoredRequestUnreadable {
  requestId: RequestId;
  validator?: string;
  unreadable: string;
}

export type StoredRequestEntry = StoredRequestRead | StoredRequestUnreadable | ProofStatusError;

export interface ReadRequestsRequest {
  chain: string;
  verifierAddress: string;
  requestIds: readonly RequestId[];
}

/** The request id of a query (a JSON integer or a decimal string), or undefined when it is none or not a uint256. */
export function requestIdOf(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : undefined;
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]{0,77})$/.test(value)) return undefined;
  const id = BigInt(value);
  return id < 2n ** 256n ? id : undefined;
}
