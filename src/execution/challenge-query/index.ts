/** Decided by the engine on the credentials sent with the execute call, after trust. */
import type { CredentialTypes } from '../../domain/credential-types.js';
import { challengeQueryEvaluator } from '../../engine/index.js';
import type { CredentialVerifier } from '../../trust/index.js';
import type { ScenarioModule } from '../types.js';

export interface ChallengeQueryDeps {
  verifier: CredentialVerifier;
  /** For the create/patch checks of rules' types and attributes. */
  credentialTypes?: () => CredentialTypes;
}

export const challengeQuery = {
  type: 'ChallengeQuery',
  policy: { requestId: { range: { max: 4_294_967_295, note: 'large ids are for OnChainZKP' } } },
  evaluator: challengeQueryEvaluator,
  resultFields: { adds: ['verification'], firstOnly: [] },
  // A credential whose subject DID encodes no address is valid for any address unless REQUIRE_HOLDER_BINDING.
  holderBinding: 'when-required',
  verifiesCredentials: true,
  async create({ verifier, credentialTypes }: ChallengeQueryDeps) {
    const { challengeQueryStrategy } = await import('./strategy.js');
    return challengeQueryStrategy(verifier, { credentialTypes });
  },
} as const satisfies ScenarioModule<'ChallengeQuery', ChallengeQueryDeps>;
