import type { QueryConfiguration } from '../schemas/scenario.js';
import type { SmartContractDeployment } from '../domain/deployments.js';
import { requestIdsOf, resolveVerifierTarget, ruleOutcomes, type OnChainRuleOutcome } from './outcomes.js';
import type { ProofStatusEntry, ProofStatusError, ProofStatusReader, StoredRequestEntry } from './proof-status.js';
import { RequestCheck } from './request-check.js';

/** Every rule the chain decided answers error: it cannot be compared. */
const STRICT = new RequestCheck();

export interface OnChainInput {
  queryConfigurations: readonly QueryConfiguration[];
  smartContractDeployments: readonly SmartContractDeployment[] | null | undefined;
  address: string;
  chain?: string;
  /** The scenario's trustedIssuers: a request that accepts other issuers does not ask what the scenario means. */
  trustedIssuers?: readonly string[] | null;
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Never rejects; every failure is an `error` outcome with a reason. */
export async function evaluateOnChainRules(
  reader: ProofStatusReader, input: OnChainInput, check: RequestCheck = STRICT,
): Promise<OnChainRuleOutcome[]> {
  const target = resolveVerifierTarget(input.smartContractDeployments, {
    hasChain: (c) => reader.hasChain(c),
    defaultChain: reader.defaultChain,
    preferChain: input.chain,
  });
  const configurations = input.queryConfigurations;
  if (target.ok && !EVM_ADDRESS.test(input.address)) {
    const reason = 'OnChainZKP proofs are submitted from an EVM address (0x + 40 hex); this address is not one';
    return configurations.map((qc) => ({
      objectId: qc.id,
      requestId: requestIdsOf([qc])[0]?.toString() ?? null,
      status: 'not-valid',
      is_valid: false,
      reasons: [reason],
      scenarioVerifierAddress: target.address,
      chain: target.chain,
      blockNumber: null,
    }));
  }
  let statuses: ProofStatusEntry[] = [];
  let requests: StoredRequestEntry[] = [];
  const requestIds = requestIdsOf(configurations);
  if (target.ok && requestIds.length > 0) {
    const read = { chain: target.chain, verifierAddress: target.address, requestIds };
    const readRequests = reader.readRequests?.bind(reader);
    [statuses, requests] = await Promise.all([
      guarded(requestIds, () => reader.readProofStatuses({ ...read, sender: input.address, fromBlock: target.fromBlock })),
      readRequests === undefined
        ? requestIds.map((requestId) => ({ requestId, unreadable: 'the chain reader does not show requests' }))
        : guarded(requestIds, () => readRequests(read)),
    ]);
  }
  return check.apply(ruleOutcomes(configurations, target, input.address, statuses), configurations, requests, input.trustedIssuers);
}

/** A reader is not supposed to reject, a foreign implementation might. */
async function guarded<T>(requestIds: readonly (number | bigint)[], read: () => Promise<T[]>): Promise<(T | ProofStatusError)[]> {
  try {
    return await read();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return requestIds.map((requestId) => ({ requestId, error: `the chain read failed: ${message}`, code: 'rpc-error' as const }));
  }
}
