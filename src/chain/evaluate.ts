/**
 * OnChainZKP execution in one call: pick the verifier deployment, read the proof statuses of the address for every
 * requestId of the scenario (one batched read), and turn them into one outcome per query configuration.
 */
import type { QueryConfiguration } from '../schemas/scenario.js';
import type { SmartContractDeployment } from '../domain/deployments.js';
import { requestIdsOf, resolveVerifierTarget, ruleOutcomes, type OnChainRuleOutcome } from './outcomes.js';
import type { ProofStatusEntry, ProofStatusReader } from './proof-status.js';

export interface OnChainInput {
  queryConfigurations: readonly QueryConfiguration[];
  smartContractDeployments: readonly SmartContractDeployment[] | null | undefined;
  /** The execute request's address (the proof submitter). */
  address: string;
  /** The execute request's `address.chain`, when given: a usable deployment on that chain is preferred. */
  chain?: string;
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** One outcome per query configuration, in order. Never rejects; every failure is an `error` outcome with a reason. */
export async function evaluateOnChainRules(reader: ProofStatusReader, input: OnChainInput): Promise<OnChainRuleOutcome[]> {
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
      requestId: typeof qc.query?.requestId === 'number' ? qc.query.requestId : null,
      status: 'not-valid',
      is_valid: false,
      reasons: [reason],
      scenarioVerifierAddress: target.address,
      chain: target.chain,
      blockNumber: null,
    }));
  }
  let statuses: ProofStatusEntry[] = [];
  const requestIds = requestIdsOf(configurations);
  if (target.ok && requestIds.length > 0) {
    try {
      statuses = await reader.readProofStatuses({
        chain: target.chain,
        verifierAddress: target.address,
        sender: input.address,
        requestIds,
        fromBlock: target.fromBlock,
      });
    } catch (err) {
      // A reader is not supposed to reject; a foreign implementation might.
      const message = err instanceof Error ? err.message : String(err);
      statuses = requestIds.map((requestId) => ({ requestId, error: `the chain read failed: ${message}`, code: 'rpc-error' as const }));
    }
  }
  return ruleOutcomes(configurations, target, input.address, statuses);
}
