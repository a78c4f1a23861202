/** What `?attest=` asks of execute, checked against the keys this service holds, and the signing of it. */
import { Type } from '@sinclair/typebox';
import type { Attestor, Eip712Attestation } from '../domain/attestation.js';
import type { AttestRequest } from '../services/attestations.js';
import { BAD_CHECKSUM, evm, toChecksumAddress } from '../domain/address/evm.js';
import { ValidationFailed } from './errors.js';

/** The query asking for attestations (execute) or saying which EIP-712 one (GET .../attestation). */
export const AttestQuery = {
  attest: Type.Optional(Type.String({
    pattern: '^(jws|eip712)(,(jws|eip712))?$',
    description: 'Sign the verdict: `jws` (header `Attestation`: a compact JWS a backend verifies with ' +
      '/.well-known/jwks.json), `eip712` (header `Attestation-EIP712`: base64url JSON of the typed data and its ' +
      'signature, for a contract such as contracts/ComplianceGate.sol; needs `chainId` and `verifyingContract`, an ' +
      'EVM address, the holder bound to it (REQUIRE_HOLDER_BINDING=true for ChallengeQuery) and credentials verified), or `jws,eip712`. Absent: none (the answer is the same array either way). No example value: the ' +
      'docs page would fill it in and "Try it out" would then need the operator\'s keys.',
  })),
  chainId: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'EIP-712: the chain id of the verifying contract (e.g. 1).' })),
  verifyingContract: Type.Optional(Type.String({
    pattern: '^0x[0-9a-fA-F]{40}$',
    description: 'EIP-712: the contract that checks the attestation (the typed data\'s domain).',
  })),
};
interface AttestQuery { attest?: string; chainId?: string; verifyingContract?: string }

const field = (name: string, message: string) => ({ field: `querystring.${name}`, pointer: `/${name}`, message });

/** What the query asks, checked against what this service can sign; a 400 naming the field otherwise. */
export function attestRequest(query: AttestQuery, attestor: Attestor, asked = (query.attest ?? '').split(',')): AttestRequest {
  const jws = asked.includes('jws');
  const eip712 = asked.includes('eip712');
  const problems = [];
  if (jws && !attestor.jws) problems.push(field('attest', 'this service has no JWS attestation key (ATTESTATION_JWKS)'));
  if (eip712 && !attestor.eip712) problems.push(field('attest', 'this service has no EIP-712 attestation key (ATTESTATION_EIP712_KEY)'));
  if (eip712 && query.chainId === undefined) problems.push(field('chainId', 'is required with attest=eip712'));
  if (eip712 && query.verifyingContract === undefined) problems.push(field('verifyingContract', 'is required with attest=eip712'));
  if (query.chainId !== undefined && !Number.isSafeInteger(Number(query.chainId))) problems.push(field('chainId', 'must be at most 2^53-1'));
  if (query.verifyingContract !== undefined && evm.check(query.verifyingContract) !== undefined) {
    problems.push(field('verifyingContract', BAD_CHECKSUM));
  }
  if (problems.length > 0) throw new ValidationFailed(problems, 'The attestation asked for cannot be given');
  return {
    jws,
    // Checksummed here: viem refuses a mixed-case address whose checksum it has to check itself.
    ...(eip712 && query.verifyingContract !== undefined && {
      eip712: { chainId: Number(query.chainId), verifyingContract: toChecksumAddress(query.verifyingContract) },
    }),
  };
}

/** The EIP-712 attestation as the `Attestation-EIP712` header carries it: base64url of its JSON. */
export const eip712Header = (a: Eip712Attestation) => Buffer.from(JSON.stringify(a)).toString('base64url');
