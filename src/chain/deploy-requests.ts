/**
 * A scenario's OnChainZKP rules as UniversalVerifier requests (@iden3/contracts 3.x): params per validator as the
 * contracts decode them (src/chain/abi.ts), query hashes as js-sdk computes them (the ones request-match.ts checks),
 * type-1 request ids (keccak256 of params and creator, as the contract checks). Loads viem: import it lazily.
 */
import { encodeAbiParameters, encodeFunctionData, encodePacked, keccak256, type Address, type Hex } from 'viem';
import type { Query, QueryConfiguration } from '../schemas/scenario.js';
import { credentialAtomicQueryV2Params, credentialAtomicQueryV3Params, linkedMultiQueryParams } from './abi.js';
import { expectedQuery, queryHashV2, queryHashV3, VALUE_ARRAY_SIZE, type Expected, type RequestMatchOptions } from './request-match.js';
import { issuerIdsOf } from './request-params.js';
import { prepareCircuitArrayValues } from '../zkp/sdk.js';

export interface ValidatorCircuits {
  address: Address;
  /** Its getSupportedCircuitIds(). */
  circuits: readonly string[];
}

export interface VerifierRequest {
  requestId: bigint;
  metadata: string;
  validator: Address;
  params: Hex;
  creator: Address;
}

/** IVerifier.MultiRequest of @iden3/contracts 3.4: the single (ungrouped) requests and the groups asked together. */
export interface MultiRequest {
  multiRequestId: bigint;
  requestIds: bigint[];
  groupIds: bigint[];
  metadata: Hex;
}

export interface BuiltRequests {
  requests: VerifierRequest[];
  /** Per rule, in the scenario's order. */
  rules: { queryConfigurationId: string; requestId: string }[];
  /** Set (setMultiRequest, after setRequests) when the scenario asks several proofs at once. */
  multiRequest?: MultiRequest;
  /** Each request's group (0: none), in `requests`' order. */
  members: { requestId: bigint; groupId: bigint }[];
}

/** A rule the service cannot turn into a request; `pointer` under the scenario. */
export class RequestBuildError extends Error {
  constructor(message: string, readonly pointer?: string) {
    super(message);
  }
}

type Kind = 'credentialAtomicQuerySigV2' | 'credentialAtomicQueryMTPV2' | 'credentialAtomicQueryV3' | 'linkedMultiQuery';

/** On-chain circuits each rule circuit takes, the preferred (stable) first. */
const CHAIN_CIRCUITS: Record<Kind, (c: string) => number> = {
  credentialAtomicQuerySigV2: (c) => (c === 'credentialAtomicQuerySigV2OnChain' ? 0 : -1),
  credentialAtomicQueryMTPV2: (c) => (c === 'credentialAtomicQueryMTPV2OnChain' ? 0 : -1),
  credentialAtomicQueryV3: (c) => (c === 'credentialAtomicQueryV3OnChain' ? 0 : c === 'credentialAtomicQueryV3OnChain-beta.1' ? 1 : -1),
  linkedMultiQuery: (c) => (c === 'linkedMultiQuery10' ? 0 : c === 'linkedMultiQuery10-beta.1' ? 1 : -1),
};

const PROOF_TYPES = { BJJSignature2021: 1n, Iden3SparseMerkleTreeProof: 2n } as const;

/** What the rule asks decides the circuit where it names none: V3 for what only V3 carries. */
function kindOf(query: Query): Kind {
  if (query.circuitId !== undefined) return query.circuitId;
  if (query.groupId !== undefined || query.params?.nullifierSessionId !== undefined) return 'credentialAtomicQueryV3';
  return query.proofType === 'Iden3SparseMerkleTreeProof' ? 'credentialAtomicQueryMTPV2' : 'credentialAtomicQuerySigV2';
}

function validatorFor(kind: Kind, validators: readonly ValidatorCircuits[]): { address: Address; circuit: string } | undefined {
  let best: { address: Address; circuit: string; rank: number } | undefined;
  for (const v of validators) {
    for (const circuit of v.circuits) {
      const rank = CHAIN_CIRCUITS[kind](circuit);
      if (rank >= 0 && (best === undefined || rank < best.rank)) best = { address: v.address, circuit, rank };
    }
  }
  return best;
}

/** The contract's type-1 id: 0x0001 prefix, then keccak256(params ‖ creator) cut to 192 bits. */
function typeOneRequestId(params: Hex, creator: Address): bigint {
  const hash = BigInt(keccak256(encodePacked(['bytes', 'address'], [params, creator])));
  return (hash & ((1n << 192n) - 1n)) + (1n << 240n);
}

const metadataOf = (qc: QueryConfiguration) => JSON.stringify({
  queryConfigurationId: qc.id, type: qc.query.type, context: qc.query.context, attribute: qc.query.attribute, operator: qc.query.operator,
});

export interface BuildOptions extends RequestMatchOptions {
  trustedIssuers: readonly string[] | null | undefined;
  validators: readonly ValidatorCircuits[];
  creator: Address;
}

/** Every rule's request; the linkedMultiQuery rules of a group share one. Throws RequestBuildError. */
export async function buildRequests(rules: readonly QueryConfiguration[], options: BuildOptions): Promise<BuiltRequests> {
  const trusted = issuerIdsOf(options.trustedIssuers);
  if (trusted !== undefined && trusted.size === 0) {
    throw new RequestBuildError('the scenario trusts no iden3 issuer (trustedIssuers): a request would accept none or every one', '/trustedIssuers');
  }
  const allowedIssuers = trusted === undefined ? [] : [...trusted.keys()];
  const requests: VerifierRequest[] = [];
  const ids = new Map<string, bigint>();
  const linked = new Map<number, { rules: { qc: QueryConfiguration; expected: Expected }[] }>();
  const members: { requestId: bigint; groupId: bigint }[] = [];

  for (const [i, qc] of rules.entries()) {
    const pointer = `/queryConfigurations/${i}/query`;
    const expected = await expectedQuery(qc.query, options);
    if (typeof expected === 'string') throw new RequestBuildError(`rule "${qc.id}": ${expected}`, pointer);
    const kind = kindOf(qc.query);
    if (kind === 'linkedMultiQuery') {
      if (qc.query.groupId === undefined) throw new RequestBuildError(`rule "${qc.id}": a linkedMultiQuery rule needs a groupId`, `${pointer}/groupId`);
      const group = linked.get(qc.query.groupId) ?? { rules: [] };
      group.rules.push({ qc, expected });
      linked.set(qc.query.groupId, group);
      continue;
    }
    const validator = validatorFor(kind, options.validators);
    if (validator === undefined) {
      throw new RequestBuildError(`rule "${qc.id}": no configured validator proves ${kind} (CHAIN_VALIDATORS, or the body's validators)`, pointer);
    }
    const params = kind === 'credentialAtomicQueryV3'
      ? v3Params(qc.query, expected, validator.circuit, allowedIssuers)
      : v2Params(expected, validator.circuit, allowedIssuers);
    const requestId = typeOneRequestId(params, options.creator);
    requests.push({ requestId, metadata: metadataOf(qc), validator: validator.address, params, creator: options.creator });
    members.push({ requestId, groupId: kind === 'credentialAtomicQueryV3' ? BigInt(qc.query.groupId ?? 0) : 0n });
    ids.set(qc.id, requestId);
  }

  for (const [groupId, group] of linked) {
    const validator = validatorFor('linkedMultiQuery', options.validators);
    if (validator === undefined) throw new RequestBuildError(`group ${groupId}: no configured validator proves linkedMultiQuery (CHAIN_VALIDATORS)`);
    const params = linkedParams(group.rules.map((r) => r.expected), validator.circuit, BigInt(groupId));
    const requestId = typeOneRequestId(params, options.creator);
    requests.push({ requestId, metadata: JSON.stringify({ linkedGroup: groupId }), validator: validator.address, params, creator: options.creator });
    members.push({ requestId, groupId: BigInt(groupId) });
    for (const r of group.rules) ids.set(r.qc.id, requestId);
  }
  const multiRequest = multiRequestOf(members, options.creator);
  return {
    requests, rules: rules.map((qc) => ({ queryConfigurationId: qc.id, requestId: String(ids.get(qc.id)) })), ...(multiRequest && { multiRequest }), members,
  };
}

/**
 * The multi-request of a scenario's requests when there are two or more (one proof alone needs none): requests of a
 * group go in by their groupID, the others by id, each once in first-seen order. Its id is what VerifierLib's
 * setMultiRequest checks: keccak256(abi.encodePacked(requestIds, groupIds, creator)), no type prefix.
 */
function multiRequestOf(members: readonly { requestId: bigint; groupId: bigint }[], creator: Address): MultiRequest | undefined {
  const requestIds: bigint[] = [];
  const groupIds: bigint[] = [];
  const seen = new Set<bigint>();
  for (const m of members) {
    if (seen.has(m.requestId)) continue;
    seen.add(m.requestId);
    if (m.groupId === 0n) requestIds.push(m.requestId);
    else if (!groupIds.includes(m.groupId)) groupIds.push(m.groupId);
  }
  if (seen.size < 2) return undefined;
  const multiRequestId = BigInt(keccak256(encodePacked(['uint256[]', 'uint256[]', 'address'], [requestIds, groupIds, creator])));
  return { multiRequestId, requestIds, groupIds, metadata: '0x' };
}

function v2Params(expected: Expected, circuit: string, allowedIssuers: bigint[]): Hex {
  const { meta, schema, operator } = expected;
  return encodeAbiParameters(credentialAtomicQueryV2Params, [{
    schema, claimPathKey: meta.claimPathKey, operator: BigInt(operator), slotIndex: BigInt(meta.slotIndex),
    value: prepareCircuitArrayValues(meta.values.slice(), VALUE_ARRAY_SIZE), queryHash: queryHashV2(expected, 0n), allowedIssuers,
    circuitIds: [circuit], skipClaimRevocationCheck: false, claimPathNotExists: 0n,
  }]);
}

function v3Params(query: Query, expected: Expected, circuit: string, allowedIssuers: bigint[]): Hex {
  const { meta, schema, operator } = expected;
  const nullifierSessionID = query.params?.nullifierSessionId === undefined ? 0n : BigInt(query.params.nullifierSessionId);
  return encodeAbiParameters(credentialAtomicQueryV3Params, [{
    schema, claimPathKey: meta.claimPathKey, operator: BigInt(operator), slotIndex: BigInt(meta.slotIndex), value: meta.values,
    queryHash: queryHashV3(expected, { revocationChecked: true, nullifierSessionID }), allowedIssuers, circuitIds: [circuit],
    skipClaimRevocationCheck: false, groupID: BigInt(query.groupId ?? 0), nullifierSessionID,
    proofType: query.proofType === undefined ? 0n : PROOF_TYPES[query.proofType], verifierID: 0n,
  }]);
}

/** The conditions on the credential of the group's V3 request: no revocation flag, verifier or session of their own. */
function linkedParams(conditions: readonly Expected[], circuit: string, groupID: bigint): Hex {
  return encodeAbiParameters(linkedMultiQueryParams, [{
    claimPathKey: conditions.map((c) => c.meta.claimPathKey), operator: conditions.map((c) => BigInt(c.operator)),
    slotIndex: conditions.map((c) => BigInt(c.meta.slotIndex)), value: conditions.map((c) => c.meta.values),
    queryHash: conditions.map((c) => queryHashV3(c, { revocationChecked: false })), circuitIds: [circuit], groupID, verifierID: 0n,
  }]);
}

export const setRequestsAbi = [{
  type: 'function', name: 'setRequests', stateMutability: 'nonpayable', outputs: [],
  inputs: [{
    name: 'requests', type: 'tuple[]',
    components: [
      { name: 'requestId', type: 'uint256' }, { name: 'metadata', type: 'string' }, { name: 'validator', type: 'address' },
      { name: 'params', type: 'bytes' }, { name: 'creator', type: 'address' },
    ],
  }],
}] as const;

export const setRequestsData = (requests: readonly VerifierRequest[]): Hex =>
  encodeFunctionData({ abi: setRequestsAbi, functionName: 'setRequests', args: [requests] });

export const setMultiRequestAbi = [{
  type: 'function', name: 'setMultiRequest', stateMutability: 'nonpayable', outputs: [],
  inputs: [{
    name: 'multiRequest', type: 'tuple',
    components: [
      { name: 'multiRequestId', type: 'uint256' }, { name: 'requestIds', type: 'uint256[]' }, { name: 'groupIds', type: 'uint256[]' },
      { name: 'metadata', type: 'bytes' },
    ],
  }],
}] as const;

export const setMultiRequestData = (multi: MultiRequest): Hex =>
  encodeFunctionData({ abi: setMultiRequestAbi, functionName: 'setMultiRequest', args: [multi] });
