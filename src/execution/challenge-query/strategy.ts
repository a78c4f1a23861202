import { runPlan, type FieldProblem } from '../../engine/index.js';
import { checkCredentialTypes, type CredentialTypes } from '../../domain/credential-types.js';
import type { Scenario } from '../../schemas/scenario.js';
import type { CredentialVerifier } from '../../trust/index.js';
import type { Evaluation, ExecuteInput, ScenarioStrategy } from '../types.js';

/** What every result carries when credential verification is off (CREDENTIAL_VERIFICATION=off). */
const VERIFICATION_OFF = Object.freeze({ verification: 'off' as const });

/**
 * ChallengeQuery: trust first (proof, issuer, revocation, holder; cached per credential content), then the pure
 * rules of the engine. A credential over a size limit rejects with CredentialTooLarge; no room for new credentials'
 * checks with ColdWorkRefused (this token's budget, or the service's queue): nothing is recorded then.
 */
export function challengeQueryStrategy(
  verifier: CredentialVerifier,
  options: { credentialTypes?: () => CredentialTypes } = {},
): ScenarioStrategy {
  const { credentialTypes } = options;
  return {
    type: 'ChallengeQuery',
    // At create/patch: a rule's type near a known credential type but not it, or an attribute its type lacks.
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
