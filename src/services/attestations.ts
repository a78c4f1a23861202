import { eip712Refusal, type Attestor, type AttestedExecution } from '../domain/attestation.js';
import { AttestationRefused } from './errors.js';

export interface AttestRequest {
  jws: boolean;
  eip712?: { chainId: number; verifyingContract: `0x${string}` };
}

export type Attestations = Awaited<ReturnType<typeof signAttestations>>;

/** A 400 when an EIP-712 attestation of such an execution is not given. */
export function refuseEip712(facts: Pick<AttestedExecution, 'holderBound' | 'credentialsVerified'>): void {
  const refusal = eip712Refusal(facts);
  if (refusal !== undefined) throw new AttestationRefused(refusal);
}

/** Signs what `asked` says of `execution`. */
export async function signAttestations(attestor: Attestor, asked: AttestRequest, execution: AttestedExecution, nowMs: number) {
  if (asked.eip712) refuseEip712(execution);
  const [jws, eip712] = await Promise.all([
    asked.jws ? attestor.signJws(execution, nowMs) : undefined,
    asked.eip712 ? attestor.signEip712(execution, asked.eip712, nowMs) : undefined,
  ]);
  if (asked.eip712 && eip712 === undefined) throw new AttestationRefused('an EIP-712 attestation needs an EVM address (0x + 40 hex)');
  return { jws, eip712 };
}
