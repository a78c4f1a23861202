import { Type, type Static } from '@sinclair/typebox';
import { IdOf, Nullable, RefString, StringEnum, Timestamp, refOf } from './common.js';
import { exampleScenario } from './example-scenario.js';

/** A scenario's `type`, and an execution result's `objectType`. */
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
  '$noop', '$eq', '$ne', '$lt', '$lte', '$gt', '$gte', '$in', '$nin', '$exists', '$between', '$nonbetween', '$sd',
] as const;
export type Operator = (typeof Operators)[number];

const Scalar = Type.Union([Type.String({ maxLength: 1024 }), Type.Number(), Type.Boolean()]);
export const QueryValue = Type.Union(
  [Scalar, Type.Array(Type.Union([Type.String({ maxLength: 1024 }), Type.Number()]), { maxItems: 256 })],
  { description: 'boolean, string, number, or an array of strings/numbers; which shapes are allowed depends on the operator.' },
);
export type QueryValue = Static<typeof QueryValue>;

/** A query configuration's `query`. */
export const Query = Type.Object(
  {
    type: Type.String({
      minLength: 1, maxLength: 256,
      description: 'Credential type the query reads, matched against the credential `type` array (e.g. IDInformation).',
      examples: ['IDInformation'],
    }),
    requestId: Type.Optional(Type.Union([
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
      Type.String({ pattern: '^(0|[1-9][0-9]{0,77})$', maxLength: 78 }),
    ], {
      description: 'Number of the zero-knowledge proof request: required in OnChainZKP and OffChainZKP scenarios, where ' +
        'the wallet proves (and a verifier contract records) the rule under this number. A JSON integer up to ' +
        '2^53-1, or a decimal string for larger ids: OnChainZKP takes any uint256 (UniversalVerifier request ids of ' +
        '64 bits and the type-prefixed 256-bit ids); OffChainZKP and ChallengeQuery take ' +
        'integers from 0 (OffChainZKP: 1) to 4294967295.',
      examples: [1, '1766847064778387718112045955079886503624711098445418933835811865445692516'],
    })),
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
        '$exists true (present) or false (absent); $noop no condition (the credential type alone); $sd selective ' +
        'disclosure: the wallet reveals the attribute\'s value, no `value` (OffChainZKP; OnChainZKP with circuitId ' +
        'credentialAtomicQueryV3, naming a request that discloses on chain: the contract keeps the value, the rule says whether it was proved).',
    }),
    context: Type.Optional(Type.String({
      minLength: 1, maxLength: 2048,
      description: 'OffChainZKP: absolute URL of the JSON-LD context defining `type` (else ZKP_CONTEXTS maps the type).',
      examples: ['https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld'],
    })),
    circuitId: Type.Optional(StringEnum(
      ['credentialAtomicQuerySigV2', 'credentialAtomicQueryMTPV2', 'credentialAtomicQueryV3', 'linkedMultiQuery'],
      {
        description: 'OffChainZKP: the circuit the wallet proves with. Default: credentialAtomicQueryV3 where the query ' +
          'asks what only V3 proves ($lte, $gte, $between, $nonbetween, $exists, proofType, groupId, params), else ' +
          'ZKP_DEFAULT_CIRCUIT_ID. linkedMultiQuery: more conditions on the credential of the credentialAtomicQueryV3 ' +
          'rule with the same groupId; the linkedMultiQuery rules of a group share one requestId (at most 10 conditions). ' +
          'OnChainZKP: when given, the contract\'s request must use this circuit (else the rule answers error); ' +
          'credentialAtomicQueryV3 (and linkedMultiQuery) also allow $lte and $gte, and V3 $sd.',
      },
    )),
    proofType: Type.Optional(StringEnum(['BJJSignature2021', 'Iden3SparseMerkleTreeProof'], {
      description: 'credentialAtomicQueryV3: the credential proof the wallet must use (default: either). OnChainZKP: ' +
        'the contract\'s request must ask this proof type (else error); one that asks a type the rule leaves open stands, saying so.',
    })),
    groupId: Type.Optional(Type.Integer({
      minimum: 1, maximum: 4294967295,
      description: 'credentialAtomicQueryV3 and linkedMultiQuery: rules with the same groupId are proved on one ' +
        'credential (same type and context). OnChainZKP: the contract\'s request must be in this group (else error).',
    })),
    params: Type.Optional(Type.Object(
      {
        nullifierSessionId: Type.Union([
          Type.Integer({ minimum: 1 }),
          Type.String({ pattern: '^[1-9][0-9]{0,76}$' }),
        ], {
          description: 'Asks the wallet for a nullifier: one identifier per holder, verifier and session id. OffChainZKP: ' +
          'the same nullifier already seen in this scenario for another address answers not-valid. OnChainZKP: the ' +
          'contract\'s request must ask a nullifier of this session (else error).',
        }),
      },
      { additionalProperties: false, description: 'credentialAtomicQueryV3: iden3 request params.' },
    )),
  },
  { $id: 'Query', additionalProperties: false },
);
export type Query = Static<typeof Query>;

/** A query configuration: one rule of a scenario. */
export const QueryConfiguration = Type.Object(
  {
    id: IdOf('The rule\'s id, unique in the scenario: the objectId of its execution result.', 'q-age'),
    query: refOf(Query),
  },
  { $id: 'QueryConfiguration', additionalProperties: false, description: 'One rule of the scenario: an id and the condition a credential must meet.' },
);
export type QueryConfiguration = { id: string; query: Query };

/** A transaction of a smart contract deployment. */
export const Transaction = Type.Object(
  {
    id: Type.String({ ...RefString, description: 'Id of the transaction, unique in its deployment.' }),
    actionName: Type.Optional(Type.String({ maxLength: 128, examples: ['ScenarioDeploy'], description: 'What the transaction does.' })),
    status: Type.Optional(Type.String({
      maxLength: 128, examples: ['TxPosted'],
      description: 'TxPosted (broadcast, not final), then TxConfirmed (mined; needs txHash) or TxFailed (reverted, ' +
        'dropped or replaced; errorMessage says why). A change that moves it backwards or leaves a final status is ' +
        'refused (400).',
    })),
    smartContractDeploymentId: Type.Optional(Type.String({ ...RefString, description: 'When given, the id of the deployment that holds this transaction.' })),
    txHash: Type.Optional(Nullable(Type.String({ maxLength: 256, description: 'Hash of the transaction on chain.' }))),
    blockNumber: Type.Optional(Nullable(Type.Integer({ minimum: 0, description: 'The block the transaction is in.' }))),
    timestamp: Type.Optional(Nullable(Type.Integer({ minimum: 0, description: 'When the transaction happened, as the deploying system records it.' }))),
    errorMessage: Type.Optional(Nullable(Type.String({ maxLength: 4096, description: 'Why the transaction failed.' }))),
  },
  { $id: 'Transaction', additionalProperties: false, description: 'A transaction of a smart contract deployment.' },
);

/** A decimal uint256, as the deployment's request ids are written. */
const Uint256 = { pattern: '^(0|[1-9][0-9]{0,77})$', maxLength: 78 };

/** A smart contract deployment. */
export const SmartContractDeployment = Type.Object(
  {
    id: Type.String({ ...RefString, description: 'Id of the deployment, unique in the scenario.' }),
    contractName: Type.Optional(Type.String({ maxLength: 128, examples: ['ScenarioVerifier'], description: 'Name of the deployed contract.' })),
    status: Type.Optional(Type.String({
      maxLength: 128, examples: ['DeploymentStarted'],
      description: 'DeploymentStarted (on its way), then Deployed (on chain at `address`) or DeploymentFailed ' +
        '(errorMessage says why); a Deployed one may become Deprecated. OnChainZKP execute reads only a Deployed ' +
        'deployment with an address. A change that moves it backwards or leaves a final status is refused (400).',
    })),
    version: Type.Optional(Type.String({ maxLength: 128, description: 'Version of the deployed contract.' })),
    scenarioId: Type.Optional(Type.String({ ...RefString, description: 'The scenario the contract was deployed for.' })),
    projectId: Type.Optional(Type.String({ ...RefString, description: 'The project the contract was deployed for.' })),
    address: Type.Optional(Nullable(Type.String({
      maxLength: 256,
      description: 'Address of the contract (0x + 40 hex): required once Deployed, and it never changes afterwards.',
    }))),
    chain: Type.Optional(Nullable(Type.String({
      pattern: '^eip155:[1-9][0-9]{0,18}$',
      description: 'CAIP-2 chain of the deployment (e.g. eip155:80002); absent or null = CHAIN_DEFAULT.',
      examples: ['eip155:80002'],
    }))),
    transactions: Type.Optional(Type.Array(refOf(Transaction), { maxItems: 256, description: 'The transactions of the deployment.' })),
    requests: Type.Optional(Type.Array(Type.Object({
      queryConfigurationId: Type.String({ ...RefString, description: 'The rule (its id in queryConfigurations).' }),
      requestId: Type.String({ ...Uint256, description: 'The request the deployment set for it on the verifier.' }),
    }, { additionalProperties: false }), {
      maxItems: 256,
      description: 'Written by POST …/deployments: each rule\'s request on the verifier. The rules take these requestIds at once ' +
        'when no other deployment is Deployed, else when this one is (the one it supersedes becomes Deprecated then).',
    })),
    multiRequest: Type.Optional(Type.Object({
      multiRequestId: Type.String({ ...Uint256, description: 'Its id on the verifier (VerifierLib.setMultiRequest\'s keccak256).' }),
      requestIds: Type.Array(Type.String(Uint256), { maxItems: 256, description: 'The ungrouped requests, in the order sent.' }),
      groupIds: Type.Array(Type.String(Uint256), { maxItems: 256, description: 'The groups, in the order sent.' }),
      transactions: Type.Optional(Type.Array(Type.String({ ...RefString }), {
        maxItems: 256, description: 'The deployment\'s transactions (ids) that send it: absent while its setMultiRequest is on its way; empty when the verifier held it already (nothing sent).',
      })),
    }, {
      additionalProperties: false,
      description: 'Read-only, written by POST …/deployments where the rules make several requests: the multi-request sent ' +
        '(setMultiRequest) after setRequests. The follower marks the deployment Deployed only when the verifier holds exactly ' +
        'this one; a deployment without it is asked for none. A create or PATCH that sets or changes it is refused (400); a ' +
          'PATCH that leaves it out (the contract\'s shape without it) keeps it; key order does not count. A dry run may carry it.',
    })),
    errorMessage: Type.Optional(Nullable(Type.String({ maxLength: 4096, description: 'Why the deployment failed.' }))),
  },
  { $id: 'SmartContractDeployment', additionalProperties: false, description: 'A verifier contract the scenario is deployed to.' },
);

/** Static types of 2.5/2.6 (`transactions` is a $ref, so it is spelled out). */
type TransactionValue = Static<typeof Transaction>;
export type DeploymentValue = Omit<Static<typeof SmartContractDeployment>, 'transactions'> & { transactions?: TransactionValue[] };

/** A scenario's input, field by field. */
const fieldSchemas = {
  name: Type.String({
    minLength: 1, maxLength: 256, description: 'Name of the scenario, shown to users; also the `name` of each execution result.',
    examples: ['Adult KYC'],
  }),
  description: Nullable(Type.String({ maxLength: 4096, description: 'What the scenario checks, in words.' })),
  message: Nullable(Type.String({ maxLength: 4096, description: 'Optional message associated with the scenario.' })),
  isIdentityWidgetScenario: Nullable(Type.Boolean({ description: 'Whether the scenario relates to an identity widget.' })),
  queryConfigurations: Type.Array(refOf(QueryConfiguration), {
    maxItems: 256,
    description: 'The rules: at most 256, and at most 128 KiB as JSON (400 naming this field beyond). Execute answers one result per rule, in this order; the address passes when every one is valid.',
  }),
  smartContractDeployments: Type.Array(refOf(SmartContractDeployment), {
    maxItems: 64,
    description: 'The verifier contracts the scenario is deployed to: OnChainZKP reads the one that is Deployed; other types may leave it empty.',
  }),
  type: refOf(ScenarioType),
  projectId: Nullable(Type.String({
    minLength: 1, maxLength: 128,
    description: 'Project the scenario belongs to: only tokens holding this project see it. Null or absent: no project (operator tokens only).',
  })),
  vcsIncluded: Nullable(Type.Array(Type.String({ maxLength: 256 }), {
    maxItems: 64, description: 'Verifiable credentials included in the scenario.',
  })),
  trustedIssuers: Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 512, pattern: '^(\\*|did:[a-z0-9]+:\\S+)$' }), {
    maxItems: 64,
    description: 'Issuer DIDs this scenario accepts credentials from. It narrows the service-wide TRUSTED_ISSUERS ' +
      '(an issuer must be in both); absent or null = the service list alone; "*" = no narrowing. OnChainZKP: the ' +
      'allowedIssuers of the contract\'s requests must be among them (a request accepting any issuer or another one answers error).',
    examples: [['did:iden3:polygon:amoy:x9GjpMsjNkcHtSoWMdvhbhZrmXfH1tk9RxjSx8FXa']],
  })),
  webhookUrl: Nullable(Type.String({
    minLength: 8, maxLength: 2048, pattern: '^https?://[^\\s]+$',
    description: 'Where the end of each of this scenario\'s executions (`execution.completed`, `execution.failed`) and each ' +
      'change the service records to its deployments (`deployment.updated`: scenarioId, projectId, revision and the ' +
      'deployment as stored) are POSTed (Standard Webhooks, signed with its ' +
      'project\'s secret, GET /compliance/webhooks/secret; the service must have WEBHOOK_SECRET: 400 otherwise), instead ' +
      'of WEBHOOK_URL. http or https, no credentials; a loopback, private or link-local address or localhost is refused ' +
      '(400), and so is, at delivery, a host resolving to one, unless the operator allows them. Absent or null: WEBHOOK_URL, if set.',
    examples: ['https://dapp.example/webhooks/compliance'],
  })),
};
const f = fieldSchemas;

/** The Scenario as stored and returned. The four required fields are name, queryConfigurations, smartContractDeployments and type. */
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
  webhookUrl: Type.Optional(f.webhookUrl),
}, {
  $id: 'Scenario',
  additionalProperties: false,
  description: 'A compliance scenario: its rules (queryConfigurations), how they are checked (type) and, for OnChainZKP, where.',
  examples: [exampleScenario],
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
  webhookUrl?: string | null;
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
    webhookUrl: Type.Optional(f.webhookUrl),
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
    id: IdOf('The scenario\'s id: the scenarioId of execute and the {scenarioId} of its URL.', 'adult-kyc'),
    input: refOf(Scenario),
    createdAt: Type.String({ ...Timestamp, description: 'When the scenario was created.' }),
    updatedAt: Type.String({ ...Timestamp, description: 'When the scenario last changed.' }),
    revision: Type.Integer({ minimum: 1, description: 'Starts at 1, grows by one with every update.' }),
  },
  { $id: 'ScenarioRecord', additionalProperties: false },
);

export const ScenarioRevision = Type.Object(
  {
    scenarioId: IdOf('The scenario\'s id.', 'adult-kyc'),
    incarnation: Type.Integer({
      minimum: 1,
      description: 'Tells apart scenarios created one after another with this id (one deleted, then created again): the ' +
        'first number of the scenario\'s ETag. Pass it as ?incarnation= to read a revision of an earlier one.',
    }),
    revision: Type.Integer({
      minimum: 1,
      description: 'The scenario\'s revision: 1 at create, one more with every PATCH; a proposal takes the number after every ' +
        'revision kept, and the scenario takes it when it is approved.',
    }),
    projectId: Type.Union([Type.String(), Type.Null()], { description: 'The scenario\'s project at this revision; null: none.' }),
    digest: Type.String({
      pattern: '^[0-9a-f]{64}$',
      description: 'SHA-256 of `content.input` as canonical JSON (RFC 8785): the scenarioDigest of the executions and ' +
        'attestations of this revision.',
    }),
    author: Type.Union([Type.String(), Type.Null()], {
      description: 'Who wrote it: the token\'s subject (`token:` and a fingerprint of a static token, `jwt:<iss>:<sub>` ' +
        'for a JWT); null where unknown (the revision was live when the service began keeping revisions).',
    }),
    createdAt: Type.String({ ...Timestamp, description: 'When it was written: went live, or was proposed.' }),
    state: StringEnum(['live', 'proposed', 'approved', 'rejected'], {
      description: '`live`: went live when written; `proposed`: awaits approval (its project requires it), execute does ' +
        'not run it; `approved`: a proposal made live; `rejected`: a proposal closed.',
    }),
    baseRevision: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: 'A proposal\'s: the live revision it was made from. It can be approved only while that revision is live.',
    }),
    decidedBy: Type.Union([Type.String(), Type.Null()], {
      description: 'Who approved or rejected a proposal (a subject, as `author`); null otherwise.',
    }),
    decidedAt: Type.Union([Type.String({ ...Timestamp }), Type.Null()], { description: 'When it was approved or rejected.' }),
    patch: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description: 'The JSON Merge Patch (RFC 7396) that turns the previous revision\'s `content.input` into this one\'s: ' +
        'unchanged members absent, removed ones null, arrays whole. Sent as a PATCH\'s `input`, it makes the same change. ' +
        'Null for revision 1, and where the previous revision is not kept.',
    }),
    content: refOf(ScenarioRecord, {
      description: 'The scenario as GET /compliance/scenarios/{scenarioId} answered it while this revision was live, to the ' +
        'byte; for a proposal, as it would answer were it live, and once approved, as it answers from then on.',
    }),
  },
  {
    $id: 'ScenarioRevision',
    additionalProperties: false,
    description: 'A scenario as one of its revisions was: kept unchanged for as long as the scenario lives, and after a ' +
      'delete for as long as executions that ran it are kept.',
  },
);
