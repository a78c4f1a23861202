import { runPlan, type FieldProblem } from '../../engine/index.js';
import { checkCredentialTypes, type CredentialTypes } from '../../domain/credential-types.js';
import type { Scenario } from '../../schemas/scenario.js';
import type { CredentialVerifier } from '../../trust/index.js';
import type { Evaluation, ExecuteInput, ScenarioStrategy } from '../types.js';

const VERIFICATION_OFF = Object.freeze({ verification: 'off' as const });

/** Trust first (cached per credential content), then the engine's rules. Rejects with CredentialTooLarge or ColdWorkRefused. */
export function challengeQueryStrategy(
  verifier: CredentialVerifier,
  options: { credentialTypes?: () => CredentialTypes } = {},
): ScenarioStrategy {
  const { credentialTypes } = options;
  return {
    type: 'ChallengeQuery',
    async validate(scenario: Scenario): Promise<FieldProblem[]> {
      return credentialTypes ? checkCredentialTypes(scenario.queryConfigurations, credentialTypes()) : [];
    },
    async execute({ compiled, address, credentials, digests, executionId, at, tenant }: ExecuteInput): Promise<Evaluation> {
      const trust = await verifier.verify(credentials, {
        address,
        now: at,
        trustedIssuers: compiled.scenario.trustedIssuers ?? undefined,
        relevantTypes: compiled.plan.credentialSlots,
        digests,
        tenant,
      });
      const extras = verifier.mode === 'off' ? VERIFICATION_OFF : undefined;
      return { results: runPlan(compiled.plan, { address, credentials, now: at, executionId, trust, extras }) };
    },
  };
}
