/** No viem here: only reader.ts (lazy) loads it. */
import type { Hex } from 'viem';
import type { VerifierMethod } from './abi.js';
import { parseChainRef } from './config.js';

export type RequestId = number | bigint;

export type ChainErrorCode =
  | 'no-rpc'
  | 'bad-request'
  | 'unreachable'
  | 'timeout'
  | 'rpc-error'
  | 'wrong-chain'
  | 'no-contract'
  | 'not-a-verifier'
  | 'request-not-found'
  | 'reverted';

export function requestIdOf(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : undefined;
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]{0,77})$/.test(value)) return undefined;
  const id = BigInt(value);
  return id < 2n ** 256n ? id : undefined;
}

export interface ProofStatusRead {
  requestId: RequestId;
  verified: boolean;
  /** Every read of a batch is made at one block. */
  blockNumber: bigint;
  txHash?: Hex;
  /** Unix seconds, where the contract reports it. */
  provedAt?: number;
  method: VerifierMethod | 'getMultiRequestProofsStatus';
  cached: boolean;
}

/** `blockNumber` is set when the chain answered (e.g. request-not-found). */
export interface ProofStatusError {
  requestId: RequestId;
  error: string;
  code: ChainErrorCode;
  blockNumber?: bigint;
  cached?: boolean;
}

export type ProofStatusEntry = ProofStatusRead | ProofStatusError;

export function isProofStatusError(e: ProofStatusEntry): e is ProofStatusError {
  return 'error' in e;
}

export function noRpcReason(chain: unknown): string {
  return `no RPC endpoint is configured for chain ${parseChainRef(chain)?.chain ?? JSON.stringify(String(chain))} (CHAIN_RPC_URLS)`;
}

export interface ReadProofStatusesRequest {
  chain: string;
  verifierAddress: string;
  /** msg.sender of the proof submission. */
  sender: string;
  requestIds: readonly RequestId[];
  /** The deployment block: the lowest worth searching for submission logs. */
  fromBlock?: bigint | number;
}

export interface ProofStatusReader {
  /** Never rejects. */
  readProofStatuses(request: ReadProofStatusesRequest): Promise<ProofStatusEntry[]>;
  /** Never rejects. Without it no rule's request can be compared. */
  readRequests?(request: ReadRequestsRequest): Promise<StoredRequestEntry[]>;
  hasChain(chain: string): boolean;
  readonly defaultChain: string | undefined;
}

export interface ChainReaderStats {
  cacheHits: number;
  /** Each counts once, however many callers shared the read. */
  chainReads: number;
  batches: number;
  errors: number;
  ethCalls: number;
  multicalls: number;
  logQueries: number;
}

export interface StoredQuery {
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
  claimPathNotExists?: bigint;
  groupID?: bigint;
  nullifierSessionID?: bigint;
  proofType?: bigint;
  verifierID?: bigint;
}

/** On the credential of the V3 request of its group. */
export interface StoredLinkedQuery {
  kind: 'linked';
  circuitIds: readonly string[];
  conditions: readonly { claimPathKey: bigint; operator: bigint; slotIndex: bigint; values: readonly bigint[]; queryHash: bigint }[];
  groupID: bigint;
}

interface StoredRequestRead {
  requestId: RequestId;
  validator: string;
  query: StoredQuery | StoredLinkedQuery;
  /** getRequest's creator (absent from legacy getZKPRequest): a multi-request's id is computed with it. */
  creator?: string;
}

export interface StoredMultiRequest {
  requestId: RequestId;
  requests: (StoredRequestRead | StoredRequestUnreadable | ProofStatusError)[];
  groupIds: readonly bigint[];
}

interface StoredRequestUnreadable {
  requestId: RequestId;
  validator?: string;
  unreadable: string;
}

export type StoredRequestEntry = StoredRequestRead | StoredRequestUnreadable | StoredMultiRequest | ProofStatusError;

export interface ReadRequestsRequest {
  chain: string;
  verifierAddress: string;
  requestIds: readonly RequestId[];
}
