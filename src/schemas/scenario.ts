import { Type, type Static } from '@sinclair/typebox';
import { IdString, Nullable, RefString, StringEnum, Timestamp, refOf } from './common.js';

/** Seed 2.3 `type`, and 2.2 `objectType`. */
export const ScenarioTypes = ['ChallengeQuery', 'OnChainZKP', 'OffChainZKP'] as const;
export const ScenarioType = StringEnum(ScenarioTypes, {
  $id: 'ScenarioType',
  description: 'How the rules are checked. ChallengeQuery: against the credentials sent with the execute call. ' +
    'OnChainZKP: by reading the verifier contract the scenario is deployed to. OffChainZKP: by asking the holder\'s ' +
    'wallet for a zero-knowledge proof (the results stay pending until it answers). Also the objectType of each execution result.',
});
export type ScenarioType = Static<typeof ScenarioType>;

/** The query language of DOMAIN.md (iden3 / Privado ID operators). */
export const Operators = [
  '$noop', '$eq', '$ne', '$lt', '$lte', '$gt', '$gte', '$in', '$nin', '$exists', '$between', '$nonbetween',
] as const;
export type Operator = (typeof Operators)[number];

const Scalar = Type.Union([Type.String({ maxLength: 1024 }), Type.Number(), Type.Boolean()]);
export const QueryValue = Type.Union(
  [Scalar, Type.Array(Type.Union([Type.String({ maxLength: 1024 }), Type.Number()]), { maxItems: 256 })],
  { description: 'boolean, string, number, or an array of strings/numbers; which shapes are allowed depends on the operator.' },
);
export type QueryValue = Static<typeof QueryValue>;

/** Seed 2.4 `query`. */
export const Query = Type.Object(
  {
    type: Type.String({
      minLength: 1, maxLength: 256,
      description: 'Credential type the query reads, matched against the credential `type` array (e.g. IDInformation).',
      examples: ['IDInformation'],
    }),
    requestId: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: 'ZKP request number.' })),
    attribute: Type.Optional(Type.String({
      minLength: 1, maxLength: 256,
      pattern: '^[^.]+(\\.[^.]+)*$',
      description: 'Dot path inside credentialSubject (e.g. personalData.age). Required for every operator but $noop.',
      examples: ['personalData.age'],
    })),
    value: Type.Optional(QueryValue),
    operator: StringEnum(Operators, {
      description: 'How the attribute is compared with `value`: $eq, $ne equal / not equal; $lt, $lte, $gt, $gte ' +
        'numbers or ISO 8601 dates; $in, $nin in / not in a list; $between, $nonbetween inside / outside [min, max]; ' +
        '$exists true (present) or false (absent); $noop no condition (the credential type alone).',
    }),
    context: Type.Optional(Type.String({
      minLength: 1, maxLength: 2048,
      description: 'OffChainZKP: absolute URL of the JSON-LD context defining `type` (else ZKP_CONTEXTS maps the type). Not in the seed.',
      examples: ['https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld'],
    })),
    circuitId: Type.Optional(StringEnum(
      ['credentialAtomicQuerySigV2', 'credentialAtomicQueryMTPV2'],
      { description: 'OffChainZKP: the circuit the wallet proves with (default ZKP_DEFAULT_CIRCUIT_ID). Not in the seed.' },
    )),
  },
  { $id: 'Query', additionalProperties: false },
);
export type Query = Static<typeof Query>;

/** Seed 2.4. */
export const QueryConfiguration = Type.Object(
  { id: IdString, query: refOf(Query) },
  { $id: 'QueryConfiguration', additionalProperties: false },
);
export type QueryConfiguration = { id: string; query: Query };

/** Seed 2.6. */
export const Transaction = Type.Object(
  {
    id: RefString,
    actionName: Type.Optional(Type.String({ maxLength: 128, examples: ['ScenarioDeploy'] })),
    status: Type.Optional(Type.String({
      maxLength: 128, examples: ['TxPosted'],
      description: 'TxPosted -> TxConfirmed (needs txHash) | TxFailed.',
    })),
    smartContractDeploymentId: Type.Optional(RefString),
    txHash: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
    blockNumber: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    timestamp: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    errorMessage: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
  },
  { $id: 'Transaction', additionalProperties: false },
);

/** Seed 2.5. */
export const SmartContractDeployment = Type.Object(
  {
    id: RefString,
    contractName: Type.Optional(Type.String({ maxLength: 128, examples: ['ScenarioVerifier'] })),
    status: Type.Optional(Type.String({
      maxLength: 128, examples: ['DeploymentStarted'],
      description: 'DeploymentStarted -> Deployed | DeploymentFailed; Deployed -> Deprecated. Only Deployed with an address is used by execute; a PATCH that moves a status backwards is refused.',
    })),
    version: Type.Optional(Type.String({ maxLength: 128 })),
    scenarioId: Type.Optional(RefString),
    projectId: Type.Optional(RefString),
    address: Type.Optional(Nullable(Type.String({ maxLength: 256 }))),
    chain: Type.Optional(Nullable(Type.String({
      pattern: '^eip155:[1-9][0-9]{0,18}$',
      description: 'CAIP-2 chain of the deployment (e.g. eip155:80002); absent or null = CHAIN_DEFAULT. Not in the seed.',
      examples: ['eip155:80002'],
    }))),
    transactions: Type.Optional(Type.Array(refOf(Transaction), { maxItems: 256 })),
    errorMessage: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
  },
  { $id: 'SmartContractDeployment', additionalProperties: false },
);

/** Static types of 2.5/2.6 (`transactions` is a $ref, so it is spelled out). */
export type TransactionValue = Static<typeof Transaction>;
export type DeploymentValue = Omit<Static<typeof SmartContractDeployment>, 'transactions'> & { transactions?: TransactionValue[] };

/** Seed 2.3, field by field. */
const fieldSchemas = {
  name: Type.String({ minLength: 1, maxLength: 256, description: 'Name of the scenario.', examples: ['Adult KYC'] }),
  description: Nullable(Type.String({ maxLength: 4096 })),
  message: Nullable(Type.String({ maxLength: 4096, description: 'Optional message associated with the scenario.' })),
  isIdentityWidgetScenario: Nullable(Type.Boolean({ description: 'Whether the scenario relates to an identity widget.' })),
  queryConfigurations: Type.Array(refOf(QueryConfiguration), { maxItems: 256 }),
  smartContractDeployments: Type.Array(refOf(SmartContractDeployment), { maxItems: 64 }),
  type: refOf(ScenarioType),
  projectId: Nullable(Type.String({ minLength: 1, maxLength: 128, description: 'Project associated with the scenario.' })),
  vcsIncluded: Nullable(Type.Array(Type.String({ maxLength: 256 }), {
    maxItems: 64, description: 'Verifiable credentials included in the scenario.',
  })),
  trustedIssuers: Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 512, pattern: '^(\\*|did:[a-z0-9]+:\\S+)$' }), {
    maxItems: 64,
    description: 'Not in the seed: issuer DIDs this scenario accepts credentials from. It narrows the service-wide TRUSTED_ISSUERS ' +
      '(an issuer must be in both); absent or null = the service list alone; "*" = no narrowing.',
    examples: [['did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa']],
  })),
};
const f = fieldSchemas;

/** Seed 2.3: the Scenario as stored and returned. The four required fields are name, queryConfigurations, smartContractDeployments and type. */
export const Scenario = Type.Object({
  name: f.name,
  description: Type.Optional(f.description),
  message: Type.Optional(f.message),
  isIdentityWidgetScenario: Type.Optional(f.isIdentityWidgetScenario),
  queryConfigurations: f.queryConfigurations,
  smartContractDeployments: f.smartContractDeployments,
  type: f.type,
  projectId: Type.Optional(f.projectId),
  vcsIncluded: Type.Optional(f.vcsIncluded),
  trustedIssuers: Type.Optional(f.trustedIssuers),
}, {
  $id: 'Scenario',
  additionalProperties: false,
  examples: [{
    name: 'Adult KYC',
    description: 'Holder is at least 18 and passed KYC',
    queryConfigurations: [
      { id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } },
      { id: 'q-age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 18, operator: '$gte' } },
    ],
    smartContractDeployments: [],
    type: 'ChallengeQuery',
  }],
});
export type Scenario = {
  name: string;
  description?: string | null;
  message?: string | null;
  isIdentityWidgetScenario?: boolean | null;
  queryConfigurations: QueryConfiguration[];
  smartContractDeployments: DeploymentValue[];
  type: ScenarioType;
  projectId?: string | null;
  vcsIncluded?: string[] | null;
  trustedIssuers?: string[] | null;
};

/**
 * The body of PATCH: a JSON Merge Patch (RFC 7396) of a Scenario. Every field may be absent (unchanged) or null
 * (removed); the merged document is then validated as a whole Scenario, so null on a required field is a 400.
 */
export const ScenarioPatch = Type.Object(
  {
    name: Type.Optional(Nullable(f.name)),
    description: Type.Optional(f.description),
    message: Type.Optional(f.message),
    isIdentityWidgetScenario: Type.Optional(f.isIdentityWidgetScenario),
    queryConfigurations: Type.Optional(Nullable(f.queryConfigurations)),
    smartContractDeployments: Type.Optional(Nullable(f.smartContractDeployments)),
    type: Type.Optional(Nullable(f.type)),
    projectId: Type.Optional(f.projectId),
    vcsIncluded: Type.Optional(f.vcsIncluded),
    trustedIssuers: Type.Optional(f.trustedIssuers),
  },
  {
    $id: 'ScenarioPatch',
    additionalProperties: false,
    description: 'JSON Merge Patch of a Scenario: absent = unchanged, null = cleared (400 on a required field), arrays replaced whole.',
    examples: [{ description: 'Now also checks citizenship', message: null }],
  },
);

export const ScenarioRecord = Type.Object(
  {
    id: IdString,
    input: refOf(Scenario),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    revision: Type.Integer({ minimum: 1, description: 'Starts at 1, grows by one with every update.' }),
  },
  { $id: 'ScenarioRecord', additionalProperties: false },
);
