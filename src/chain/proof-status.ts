/**
 * What a chain read answers, and the interface execute reads through: types and pure helpers only, no viem, so that
 * the modules the app loads at start (outcomes, evaluate, execute) need not load it. reader.ts (ChainReader, viem)
 * implements ProofStatusReader and is loaded through lazy.ts.
 */
import type { Hex } from 'viem';
import type { VerifierMethod } from './abi.js';
import { parseChainRef } from './config.js';

export type RequestId = number | bigint;

export type ChainErrorCode =
  /** No RPC endpoint configured for the chain. */
  | 'no-rpc'
  /** The request itself is unusable (bad address, bad requestId). */
  | 'bad-request'
  /** Connection refused, reset, DNS failure, HTTP error status. */
  | 'unreachable'
  /** No answer within the deadline. */
  | 'timeout'
  /** The node answered a JSON-RPC error that is not a revert. */
  | 'rpc-error'
  /** The endpoint serves another chain than the one configured. */
  | 'wrong-chain'
  /** Nothing is deployed at the verifier address. */
  | 'no-contract'
  /** The contract has none of the verifier read functions. */
  | 'not-a-verifier'
  /** The verifier knows no such requestId (`RequestIdNotFound` / "request id doesn't exist"). */
  | 'request-not-found'
  /** The read reverted for another reason. */
  | 'reverted';

/** The request id of a query (a JSON integer or a decimal string), or undefined when it is none or not a uint256. */
export function requestIdOf(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : undefined;
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]{0,77})$/.test(value)) return undefined;
  const id = BigInt(value);
  return id < 2n ** 256n ? id : undefined;
}

/** A status read from the chain. */
export interface ProofStatusRead {
  requestId: RequestId;
  verified: boolean;
  /** The block every read of this batch was made at. */
  blockNumber: bigint;
  /** Hash of the proof-submission transaction, when found. */
  txHash?: Hex;
  /** When the proof was verified (unix seconds), when the contract reports it. */
  provedAt?: number;
  /** The verifier function that answered (getMultiRequestProofsStatus: the id is a multi-request's). */
  method: VerifierMethod | 'getMultiRequestProofsStatus';
  /** Whether this entry came from the cache. */
  cached: boolean;
}

/** A status that could not be read. `blockNumber` is set when the chain answered (e.g. request-not-found). */
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

/** The reason of a `no-rpc` entry: no RPC endpoint is configured for the request's chain. */
export function noRpcReason(chain: unknown): string {
  return `no RPC endpoint is configured for chain ${parseChainRef(chain)?.chain ?? JSON.stringify(String(chain))} (CHAIN_RPC_URLS)`;
}

export interface ReadProofStatusesRequest {
  /** CAIP-2 chain reference, e.g. eip155:80002. */
  chain: string;
  verifierAddress: string;
  /** The address whose proofs are asked about (the proof submitter, msg.sender of the submission). */
  sender: string;
  requestIds: readonly RequestId[];
  /** Lowest block worth searching for submission logs (the deployment block); optional. */
  fromBlock?: bigint | number;
}

/** What execute needs from the chain: the interface to hand in (tests may hand in a fake). */
export interface ProofStatusReader {
  /** One entry per requested id, in the request's order. Never rejects. */
  readProofStatuses(request: ReadProofStatusesRequest): Promise<ProofStatusEntry[]>;
  /**
   * The requests as the verifier stores them, one entry per id. Never rejects. A reader without it cannot show
   * requests, so no rule's request can be compared.
   */
  readRequests?(request: ReadRequestsRequest): Promise<StoredRequestEntry[]>;
  /** Whether an RPC endpoint is configured for the chain (CAIP-2). */
  hasChain(chain: string): boolean;
  /** Chain of deployments that name none. */
  readonly defaultChain: string | undefined;
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
interface StoredRequestRead {
  requestId: RequestId;
  validator: string;
  query: StoredQuery;
}

/** A request that exists but cannot be read as a credential validator's query (a custom validator, a test double). */
/** A multi-request (`getMultiRequest`): its requests as stored, and its groups of linked requests. */
interface StoredMultiRequest {
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
