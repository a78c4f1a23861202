import { evaluateOnChainRules, type ProofStatusReader } from '../../chain/index.js';
import { RequestCheck } from '../../chain/request-check.js';
import { RequestMatcher } from '../../chain/request-match.js';
import { requestIdOf } from '../../chain/proof-status.js';
import type { FieldProblem } from '../../engine/index.js';
import { executionResult } from '../../engine/result.js';
import type { Scenario } from '../../schemas/scenario.js';
import type { JsonLdLoader } from '../../jsonld/documents.js';
import type { Evaluation, ExecuteInput, ScenarioStrategy } from '../types.js';

/** As OnChainZkpDeps (index.ts) says. */
export interface OnChainZkpOptions {
  allowUncheckedRequests?: boolean;
  contexts?: Readonly<Record<string, string>>;
  documentLoader?: JsonLdLoader;
}

/** Each rule is compared with the contract's request for its requestId (src/chain/request-check.ts). */
export function onChainZkpStrategy(chain: ProofStatusReader, options: OnChainZkpOptions = {}): ScenarioStrategy {
  const { documentLoader } = options;
  const check = new RequestCheck({
    allowUnchecked: options.allowUncheckedRequests === true,
    ...(documentLoader && { matcher: new RequestMatcher({ contexts: options.contexts, documentLoader }) }),
  });
  return {
    type: 'OnChainZKP',
    async validate(scenario: Scenario): Promise<FieldProblem[]> {
      const problems: FieldProblem[] = [];
      scenario.queryConfigurations.forEach((qc, i) => {
        const at = `/queryConfigurations/${i}/query`;
        const rid = qc.query.requestId;
        if (rid !== undefined && requestIdOf(rid) === undefined) {
          problems.push({ pointer: `${at}/requestId`, message: 'requestId must be an integer from 0 to 2^256-1 (a decimal string above 2^53-1)' });
        }
        const context = qc.query.context;
        if (context !== undefined && documentLoader !== undefined && !documentLoader.has(context)) {
          problems.push({
            pointer: `${at}/context`,
            message: `the JSON-LD context ${context} is not one the service holds (bundled, or JSONLD_DOCUMENTS_FILE): ` +
              'the rule could not be compared with the contract\'s request',
          });
        }
      });
      return problems;
    },
    async execute({ compiled, address, addressChain, executionId }: ExecuteInput): Promise<Evaluation> {
      const { plan, scenario } = compiled;
      const outcomes = await evaluateOnChainRules(chain, {
        queryConfigurations: scenario.queryConfigurations,
        smartContractDeployments: scenario.smartContractDeployments,
        address,
        chain: addressChain,
        trustedIssuers: scenario.trustedIssuers,
      }, check);
      const head = { objectType: plan.type, name: plan.name, scenarioId: plan.scenarioId, address, executionId };
      const results = plan.rules.map((rule, i) => {
        const outcome = outcomes[i];
        if (outcome === undefined) throw new Error(`no on-chain outcome for rule ${i}`); // evaluateOnChainRules gives one per rule
        return executionResult(head, rule, outcome.status, {
          is_valid: outcome.is_valid,
          reasons: outcome.reasons,
          ...(outcome.txHash !== undefined && { txHash: outcome.txHash }),
          scenarioVerifierAddress: outcome.scenarioVerifierAddress,
          blockNumber: outcome.blockNumber,
          chain: outcome.chain,
        });
      });
      return { results };
    },
  };
}
