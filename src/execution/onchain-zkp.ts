import { evaluateOnChainRules, type ProofStatusReader } from '../chain/index.js';
import { executionResult } from '../engine/result.js';
import type { ExecuteInput, ScenarioStrategy, Started } from './types.js';

/** OnChainZKP: one result per rule from the verifier contract's view of the address (read from the chain). */
export function onChainZkpStrategy(chain: ProofStatusReader): ScenarioStrategy {
  return {
    type: 'OnChainZKP',
    async execute({ entry, address, addressChain, executionId }: ExecuteInput): Promise<Started> {
      const { plan, scenario } = entry;
      const outcomes = await evaluateOnChainRules(chain, {
        queryConfigurations: scenario.queryConfigurations,
        smartContractDeployments: scenario.smartContractDeployments,
        address,
        chain: addressChain,
      });
      const head = { objectType: plan.type, name: plan.name, scenarioId: plan.scenarioId, address, executionId };
      const results = plan.rules.map((rule, i) => {
        const o = outcomes[i];
        if (o === undefined) throw new Error(`no on-chain outcome for rule ${i}`); // evaluateOnChainRules answers one per rule
        return executionResult(head, rule, o.status, {
          is_valid: o.is_valid,
          reasons: o.reasons,
          ...(o.txHash !== undefined && { txHash: o.txHash }),
          scenarioVerifierAddress: o.scenarioVerifierAddress,
          blockNumber: o.blockNumber,
          chain: o.chain,
        });
      });
      return { results };
    },
  };
}
