import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, refOf } from './common.js';
import { RuleStatus } from './execution.js';

/** The verifier's checks of one credential, in the order it runs them (src/trust/verifier.ts). */
export const TRUST_CHECKS = ['structure', 'issuer', 'holder', 'proof', 'issuerKey', 'revocation'] as const;
export type TrustCheck = (typeof TRUST_CHECKS)[number];

/** Every check a trace names, in the order a rule's decision applies them. */
export const TRACE_CHECKS = [
  'rule', 'presented', 'dates', 'issued', 'expiry', 'verification', ...TRUST_CHECKS, 'attribute', 'type', 'value',
  'chain', 'authorizationRequest',
] as const;

export const TraceCheck = StringEnum(TRACE_CHECKS, {
  $id: 'TraceCheck',
  description: 'A check of a rule\'s decision. rule: the rule can be decided here (it compiles; its type is decided by ' +
    'the rule engine). presented: a credential of the query\'s type was presented. Per credential, in this order: ' +
    'dates: issuanceDate and expirationDate are RFC 3339 date-times; issued: issuanceDate is not after the evaluation ' +
    'time (not yet valid otherwise); expiry: expirationDate is after it; then the verifier\'s checks: structure, ' +
    'issuer (trusted by the service and the scenario), holder (bound to the request\'s address), proof (signature or ' +
    'Merkle tree proof), issuerKey (the signing key has not expired), revocation; verification stands for them all ' +
    'when verification is off (skipped) or failed without naming its check; then the query: attribute (present), ' +
    'type (its value has the type the operator compares), value (the value against the operator; for $exists the ' +
    'only query check). OnChainZKP: chain (the verifier contract\'s proof status for the address). OffChainZKP: ' +
    'authorizationRequest (built and issued; the rule then awaits the wallet\'s proof).',
});
export type TraceCheck = Static<typeof TraceCheck>;

export const CheckOutcome = StringEnum(['pass', 'fail', 'undecided', 'skipped'], {
  $id: 'CheckOutcome',
  description: 'pass, fail, undecided (it could not be decided: an issuer or a status service did not answer, say; the ' +
    'rule is then error unless another credential passes), or skipped (not run: an earlier check failed, or ' +
    'verification is off).',
});
export type CheckOutcome = Static<typeof CheckOutcome>;

export const CheckTrace = Type.Object(
  {
    check: refOf(TraceCheck),
    outcome: refOf(CheckOutcome),
    reason: Type.Optional(Type.String({
      description: 'Why a query check failed, in the rule\'s own terms (its attribute, operator and value). Never a value ' +
        'of the credential: a failed trust or date check\'s wording is in the result\'s `reasons`.',
    })),
  },
  { $id: 'CheckTrace', additionalProperties: false, description: 'One check of one credential against one rule.' },
);
export type CheckTrace = Static<typeof CheckTrace>;

const CredentialIndex = Type.Integer({ minimum: 0, description: 'The credential\'s position in the request\'s `credentials`, from 0.' });
const CredentialId = Type.String({ description: 'The credential\'s `id`, where it has one.' });

export const CredentialTrace = Type.Object(
  {
    index: CredentialIndex,
    id: Type.Optional(CredentialId),
    checks: Type.Array(refOf(CheckTrace), { description: 'Its checks in the order the rule applies them; the first not passed decides.' }),
    decidingCheck: Type.Optional(refOf(TraceCheck, {
      description: 'Its first check that did not pass (failed or undecided); absent when it passed them all.',
    })),
  },
  { $id: 'CredentialTrace', additionalProperties: false, description: 'How one credential of the query\'s type fared against the rule.' },
);
export type CredentialTrace = Static<typeof CredentialTrace>;

export const RuleTrace = Type.Object(
  {
    ruleId: Type.String({ description: 'The query configuration id (the result\'s objectId).' }),
    status: refOf(RuleStatus),
    credentialType: Type.Optional(Type.String({ description: 'ChallengeQuery: the query\'s credential type, the credentials considered.' })),
    credentials: Type.Array(refOf(CredentialTrace), {
      description: 'ChallengeQuery: the credentials of the query\'s type the rule considered, in the request\'s order: up ' +
        'to the one that passed, or all of them when none did; at most 10 (credentialsNotListed counts the rest). ' +
        'Empty for the other types.',
    }),
    credentialsNotListed: Type.Optional(Type.Integer({ minimum: 1, description: 'How many considered credentials are not in `credentials`.' })),
    decidingCredential: Type.Optional(Type.Object(
      { index: CredentialIndex, id: Type.Optional(CredentialId) },
      { additionalProperties: false, description: 'A valid ChallengeQuery rule: the credential that passed it (the first that did).' },
    )),
    decidingCheck: Type.Optional(Type.Object(
      {
        check: refOf(TraceCheck),
        credential: Type.Optional(Type.Integer({ minimum: 0, description: 'The position (from 0) of the credential whose check it is, if any.' })),
      },
      {
        additionalProperties: false,
        description: 'A rule not valid (not-valid or error): the check that decided it. error: the first credential\'s ' +
          'check that was undecided. not-valid: of each credential\'s first failed check, the one latest in the order, ' +
          'i.e. the credential that came closest to passing (the earliest such credential); `presented` when none was ' +
          'presented.',
      },
    )),
    note: Type.Optional(Type.String({ description: 'What else decided the rule: the chain read (OnChainZKP), the request issued (OffChainZKP).' })),
  },
  { $id: 'RuleTrace', additionalProperties: false, description: 'How one rule was decided: each credential\'s checks, and what decided.' },
);
export type RuleTrace = Static<typeof RuleTrace>;

/** The schemas to register where a route answers a trace. */
export const traceSchemas = [TraceCheck, CheckOutcome, CheckTrace, CredentialTrace, RuleTrace];
