/**
 * Contracts 3.x: `uint256` request ids, an unknown one reverts `RequestIdNotFound`. Legacy 1.x/2.x: `uint64` ids, an
 * unknown one reverts "request id doesn't exist".
 */
import type { Abi } from 'viem';

const requestProofStatus = [
  { name: 'requestId', type: 'uint256' },
  { name: 'isVerified', type: 'bool' },
  { name: 'validatorVersion', type: 'string' },
  { name: 'timestamp', type: 'uint256' },
] as const;

export const verifierAbi = [
  {
    type: 'function', name: 'getRequestProofStatus', stateMutability: 'view',
    inputs: [{ name: 'sender', type: 'address' }, { name: 'requestId', type: 'uint256' }],
    outputs: [{
      name: '', type: 'tuple',
      components: requestProofStatus,
    }],
  },
  {
    type: 'function', name: 'isRequestProofVerified', stateMutability: 'view',
    inputs: [{ name: 'sender', type: 'address' }, { name: 'requestId', type: 'uint256' }],
    outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'function', name: 'getProofStatus', stateMutability: 'view',
    inputs: [{ name: 'sender', type: 'address' }, { name: 'requestId', type: 'uint64' }],
    outputs: [{
      name: '', type: 'tuple',
      components: [
        { name: 'isVerified', type: 'bool' },
        { name: 'validatorVersion', type: 'string' },
        { name: 'blockNumber', type: 'uint256' },
        { name: 'blockTimestamp', type: 'uint256' },
      ],
    }],
  },
  {
    type: 'function', name: 'isProofVerified', stateMutability: 'view',
    inputs: [{ name: 'sender', type: 'address' }, { name: 'requestId', type: 'uint64' }],
    outputs: [{ name: '', type: 'bool' }],
  },
  { type: 'error', name: 'RequestIdNotFound', inputs: [{ name: 'requestId', type: 'uint256' }] },
  {
    type: 'event', name: 'ResponseSubmitted', anonymous: false,
    inputs: [{ name: 'requestId', type: 'uint256', indexed: true }, { name: 'caller', type: 'address', indexed: true }],
  },
  {
    type: 'event', name: 'ZKPResponseSubmitted', anonymous: false,
    inputs: [{ name: 'requestId', type: 'uint64', indexed: true }, { name: 'caller', type: 'address', indexed: true }],
  },
] as const satisfies Abi;

export const requestAbi = [
  {
    type: 'function', name: 'getRequest', stateMutability: 'view',
    inputs: [{ name: 'requestId', type: 'uint256' }],
    outputs: [{
      name: 'request', type: 'tuple',
      components: [
        { name: 'requestId', type: 'uint256' },
        { name: 'metadata', type: 'string' },
        { name: 'validator', type: 'address' },
        { name: 'params', type: 'bytes' },
        { name: 'creator', type: 'address' },
      ],
    }],
  },
  {
    type: 'function', name: 'getZKPRequest', stateMutability: 'view',
    inputs: [{ name: 'requestId', type: 'uint64' }],
    outputs: [{
      name: '', type: 'tuple',
      components: [
        { name: 'metadata', type: 'string' },
        { name: 'validator', type: 'address' },
        { name: 'data', type: 'bytes' },
      ],
    }],
  },
  {
    type: 'function', name: 'getMultiRequest', stateMutability: 'view',
    inputs: [{ name: 'multiRequestId', type: 'uint256' }],
    outputs: [{
      name: 'multiRequest', type: 'tuple',
      components: [
        { name: 'multiRequestId', type: 'uint256' },
        { name: 'requestIds', type: 'uint256[]' },
        { name: 'groupIds', type: 'uint256[]' },
        { name: 'metadata', type: 'bytes' },
      ],
    }],
  },
  {
    type: 'function', name: 'getMultiRequestProofsStatus', stateMutability: 'view',
    inputs: [{ name: 'multiRequestId', type: 'uint256' }, { name: 'userAddress', type: 'address' }],
    outputs: [{
      name: '', type: 'tuple[]',
      components: requestProofStatus,
    }],
  },
  { type: 'error', name: 'MultiRequestIdNotFound', inputs: [{ name: 'multiRequestId', type: 'uint256' }] },
  {
    type: 'function', name: 'getSupportedCircuitIds', stateMutability: 'view',
    inputs: [], outputs: [{ name: 'ids', type: 'string[]' }],
  },
  { type: 'error', name: 'RequestIdNotFound', inputs: [{ name: 'requestId', type: 'uint256' }] },
] as const satisfies Abi;

const queryHead = [
  { name: 'schema', type: 'uint256' },
  { name: 'claimPathKey', type: 'uint256' },
  { name: 'operator', type: 'uint256' },
  { name: 'slotIndex', type: 'uint256' },
  { name: 'value', type: 'uint256[]' },
  { name: 'queryHash', type: 'uint256' },
  { name: 'allowedIssuers', type: 'uint256[]' },
  { name: 'circuitIds', type: 'string[]' },
  { name: 'skipClaimRevocationCheck', type: 'bool' },
] as const;

/** CredentialAtomicQueryV2ValidatorBase.CredentialAtomicQuery */
export const credentialAtomicQueryV2Params = [
  { name: 'query', type: 'tuple', components: [...queryHead, { name: 'claimPathNotExists', type: 'uint256' }] },
] as const;

export const credentialAtomicQueryV3Params = [
  {
    name: 'query', type: 'tuple',
    components: [
      ...queryHead,
      { name: 'groupID', type: 'uint256' },
      { name: 'nullifierSessionID', type: 'uint256' },
      { name: 'proofType', type: 'uint256' },
      { name: 'verifierID', type: 'uint256' },
    ],
  },
] as const;

export const linkedMultiQueryParams = [
  {
    name: 'query', type: 'tuple',
    components: [
      { name: 'claimPathKey', type: 'uint256[]' },
      { name: 'operator', type: 'uint256[]' },
      { name: 'slotIndex', type: 'uint256[]' },
      { name: 'value', type: 'uint256[][]' },
      { name: 'queryHash', type: 'uint256[]' },
      { name: 'circuitIds', type: 'string[]' },
      { name: 'groupID', type: 'uint256' },
      { name: 'verifierID', type: 'uint256' },
    ],
  },
] as const;

/** In the order they are tried on a contract whose interface is not known yet. */
export const VERIFIER_METHODS = ['getRequestProofStatus', 'isRequestProofVerified', 'getProofStatus', 'isProofVerified'] as const;
export type VerifierMethod = (typeof VERIFIER_METHODS)[number];

export function interfaceOf(method: VerifierMethod): 'current' | 'legacy' {
  return method === 'getRequestProofStatus' || method === 'isRequestProofVerified' ? 'current' : 'legacy';
}

export function submissionEventOf(method: VerifierMethod) {
  return interfaceOf(method) === 'current' ? verifierAbi[5] : verifierAbi[6];
}

/** `payable` on chain, declared `view`: it is only used through eth_call (same encoding). */
export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11' as const;

export const multicall3Abi = [
  {
    type: 'function', name: 'aggregate3', stateMutability: 'view',
    inputs: [{
      name: 'calls', type: 'tuple[]',
      components: [
        { name: 'target', type: 'address' },
        { name: 'allowFailure', type: 'bool' },
        { name: 'callData', type: 'bytes' },
      ],
    }],
    outputs: [{
      name: 'returnData', type: 'tuple[]',
      components: [{ name: 'success', type: 'bool' }, { name: 'returnData', type: 'bytes' }],
    }],
  },
] as const satisfies Abi;

const error = (name: string, ...inputs: [string, string][]) => ({ type: 'error', name, inputs: inputs.map(([type, n]) => ({ name: n, type })) });

/** The UniversalVerifier's custom errors (@iden3/contracts 3.x), to name a reverted deployment's reason. */
export const verifierErrorsAbi = [
  error('AuthMethodIsNotActive', ['string', 'authMethod']),
  error('ChallengeIsInvalid'),
  error('InvalidRequestOwner', ['address', 'requestOwner'], ['address', 'sender']),
  error('MultiRequestIdAlreadyExists', ['uint256', 'multiRequestId']),
  error('MultiRequestIdNotFound', ['uint256', 'multiRequestId']),
  error('NotAnOwnerOrRequestOwner', ['address', 'account']),
  error('OwnableUnauthorizedAccount', ['address', 'account']),
  error('RequestIdAlreadyExists', ['uint256', 'requestId']),
  error('RequestIdNotFound', ['uint256', 'requestId']),
  error('RequestIsDisabled', ['uint256', 'requestId']),
  error('UserNotAuthenticated'),
  error('ValidatorIsNotWhitelisted', ['address', 'validator']),
  error('ValidatorNotSupportInterface', ['address', 'validator']),
  // VerifierLib's, which setRequests reverts with.
  error('GroupIdAlreadyExists', ['uint256', 'groupID']),
  error('GroupIdNotFound', ['uint256', 'groupId']),
  error('GroupIdNotValid'),
  error('GroupMustHaveAtLeastTwoRequests', ['uint256', 'groupID']),
  error('LinkIDNotTheSameForGroupedRequests'),
  error('MissingUserIDInGroupOfRequests', ['uint256', 'groupID']),
  error('MissingUserIDInRequest', ['uint256', 'requestId']),
  error('MultiRequestIdNotValid', ['uint256', 'expected'], ['uint256', 'actual']),
  error('NullifierSessionIDAlreadyExists', ['uint256', 'nullifierSessionID']),
  error('RequestIdNotValid', ['uint256', 'expected'], ['uint256', 'actual']),
  error('RequestIdTypeNotValid'),
  error('RequestIdUsesReservedBytes'),
  error('RequestShouldNotHaveAGroup', ['uint256', 'requestId']),
  error('VerifierIDIsNotValid', ['uint256', 'expected'], ['uint256', 'actual']),
] as Abi;
