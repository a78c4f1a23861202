import { runPlan, tracePlan, type FieldProblem, type TracedRun } from '../../engine/index.js';
import type { RunInput, TrustVerdict } from '../../engine/types.js';
import { checkCredentialTypes, type CredentialTypes } from '../../domain/credential-types.js';
import type { Scenario } from '../../schemas/scenario.js';
import type { CredentialVerifier } from '../../trust/index.js';
import type { Evaluation, ExecuteInput } from '../types.js';
import type { TracingStrategy } from '../dry-run.js';

const VERIFICATION_OFF = Object.freeze({ verification: 'off' as const });

/**
 * Trust first (cached per credential content), then the engine's rules. Rejects with CredentialTooLarge or
 * ColdWorkRefused before any check, so nothing is recorded then.
 */
export function challengeQueryStrategy(
  verifier: CredentialVerifier,
  options: { credentialTypes?: () => CredentialTypes } = {},
): TracingStrategy {
  const { credentialTypes } = options;
  // Plain functions: execute awaits the verifier alone.
  const verify = ({ address, credentials, digests, at, tenant, compiled, warmOnly }: ExecuteInput): Promise<TrustVerdict[]> =>
    verifier.verify(credentials, {
      address,
      now: at,
      trustedIssuers: compiled.scenario.trustedIssuers ?? undefined,
      relevantTypes: compiled.plan.credentialSlots,
      digests,
      tenant,
      warmOnly,
    });
  const runInput = ({ address, credentials, executionId, at }: ExecuteInput, trust: TrustVerdict[]): RunInput => ({
    address, credentials, now: at, executionId, trust, extras: verifier.mode === 'off' ? VERIFICATION_OFF : undefined,
  });
  return {
    type: 'ChallengeQuery',
    async validate(scenario: Scenario): Promise<FieldProblem[]> {
      return credentialTypes ? checkCredentialTypes(scenario.queryConfigurations, credentialTypes()) : [];
    },
    async execute(input: ExecuteInput): Promise<Evaluation> {
      return { results: runPlan(input.compiled.plan, runInput(input, await verify(input))) };
    },
    async dryRun(input: ExecuteInput): Promise<TracedRun> {
      const run = runInput(input, await verify(input));
      // Off, every verdict is ok, as good as none: the trace says skipped.
      return tracePlan(input.compiled.plan, verifier.mode === 'off' ? { ...run, trust: undefined } : run);
    },
  };
}
