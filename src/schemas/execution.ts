import { Type, type Static } from '@sinclair/typebox';
import { IdOf, StringEnum, refOf } from './common.js';
import { Credential } from './credential.js';
import { Query, QueryConfiguration, ScenarioType } from './scenario.js';

/**
 * The contract types `address` as an object while results carry a string: both are accepted. An object names the
 * address in `address` and may say which chain family it belongs to (`namespace`, a CAIP-2 namespace such as
 * eip155, tezos, polkadot, cosmos, cardano, aptos, starknet) and which chain (`chain`, e.g. eip155:1).
 */
const AddressObject = Type.Object(
  {
    address: Type.String({ minLength: 1, maxLength: 256 }),
    chain: Type.Optional(Type.String({ minLength: 1, maxLength: 128, examples: ['eip155:1'] })),
    namespace: Type.Optional(Type.String({ minLength: 1, maxLength: 32, examples: ['eip155'] })),
  },
  { additionalProperties: false },
);
export const AddressInput = Type.Union(
  [Type.String({ minLength: 1, maxLength: 256 }), AddressObject],
  {
    $id: 'AddressInput',
    description: 'A blockchain address as a string, or an object {address, chain?, namespace?}. EVM addresses are 0x + 40 hex; mixed case must pass the EIP-55 checksum.',
    examples: ['0x52908400098527886E0F7030069857D2E4169EE7'],
  },
);
export type AddressInput = Static<typeof AddressInput>;

/** The execute request body. */
export const ExecuteRequest = Type.Object(
  {
    address: refOf(AddressInput),
    credentials: Type.Array(refOf(Credential), {
      maxItems: 100,
      description: 'The credentials the holder of the address presents, as their wallet holds them (at most 100). ' +
        'The audit log keeps only their ids and SHA-256 digests.',
    }),
    scenarioId: IdOf('The scenario to run: the id given or generated when it was created.', 'adult-kyc'),
  },
  {
    $id: 'ExecuteRequest',
    additionalProperties: false,
    description: 'What to check: a scenario, an address, and the credentials its holder presents.',
  },
);

export const RuleStatus = StringEnum(['valid', 'not-valid', 'error', 'pending'], {
  $id: 'RuleStatus',
  description: 'valid: the rule passes. not-valid: it fails (`reasons` says why). error: it could not be decided ' +
    '(an issuer or a chain did not answer, say): never a pass; executing again may decide it. pending: OffChainZKP, ' +
    'awaiting the wallet\'s proof.',
});
export type RuleStatus = Static<typeof RuleStatus>;

/**
 * The query as a result echoes it: the rule's query, with a long value list abbreviated (see VALUE_QUOTE_BYTES in
 * src/engine/query.ts) so that results do not repeat it. Not `Query` itself: `valueCount` is not a query field.
 */
export const QueryEcho = Type.Object(
  {
    ...Query.properties,
    valueCount: Type.Optional(Type.Integer({
      minimum: 1,
      description: 'Present only when `value` is abbreviated: a list whose JSON is over 128 bytes is echoed as its first ' +
        'values that fit in 128 bytes, and valueCount is how many values the rule has. The whole rule: GET ' +
        '/compliance/scenarios/{scenarioId} (the execution records the scenario revision that ran).',
    })),
  },
  {
    $id: 'QueryEcho',
    additionalProperties: false,
    description: 'The query the result checked, as in the scenario, except that a long `value` list is abbreviated (valueCount).',
  },
);

/** The inner `result` of an execution result, shaped as the platform client (RuleEngineResponse) parses it. */
export const RuleResult = Type.Object(
  {
    result: Type.Object(
      {
        is_valid: Type.Boolean({ description: 'true when the rule passes (status valid), false otherwise.' }),
        reasons: Type.Array(Type.String(), {
          description: 'Why the rule is not valid or could not be decided, in words to show; empty when it is valid. ' +
            'Never any value of the holder\'s credentials.',
        }),
        txHash: Type.Optional(Type.String({ description: 'OnChainZKP: the transaction that submitted the proof, where known.' })),
        scenarioVerifierAddress: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'OnChainZKP: the verifier contract read.' })),
        blockNumber: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'OnChainZKP: the block the status was read at.' })),
        chain: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'OnChainZKP: CAIP-2 chain of the verifier.' })),
      },
      { additionalProperties: false, description: 'The verdict of the rule.' },
    ),
    executionId: Type.String({ format: 'uuid', description: 'The executionId of the execution result.' }),
    status: refOf(RuleStatus),
    query: refOf(QueryEcho),
    disclosure: Type.Optional(Type.Object(
      {
        attribute: Type.String({ description: 'The attribute the rule asked ($sd).' }),
        value: Type.Union([Type.String(), Type.Number(), Type.Boolean()], { description: 'Its value, as the proof shows it.' }),
      },
      {
        additionalProperties: false,
        description: 'OffChainZKP, a valid $sd rule: the value the holder disclosed. Only in the answer to the wallet\'s ' +
          'callback and in the webhook; never in the audit log (GET executions) nor in a log line.',
      },
    )),
    authorizationRequest: Type.Optional(Type.Object({}, {
      additionalProperties: true,
      description: 'OffChainZKP, while pending: the iden3comm authorization request to hand to the wallet (the same for every rule of the execution).',
    })),
    verification: Type.Optional(Type.Literal('off', {
      description: 'Present when CREDENTIAL_VERIFICATION=off: credentials were believed without checking proofs, issuers or revocation (development only).',
    })),
  },
  { $id: 'RuleResult', additionalProperties: false, description: 'The verdict of one rule, and the query it checked (as in the scenario; a long value list abbreviated).' },
);

export const Verdict = StringEnum(['passed', 'failed', 'error', 'pending'], {
  $id: 'Verdict',
  description: 'The execution\'s overall verdict, folded from its rules\' statuses: passed when every rule is valid; failed ' +
    'when any is not-valid; else error when any could not be decided; else pending (awaiting a proof).',
});

/** An execution result: one per rule. */
export const ExecutionResult = Type.Object(
  {
    objectType: refOf(ScenarioType),
    objectId: Type.String({ description: 'The query configuration id the result is for.' }),
    name: Type.String({ description: 'The scenario name.' }),
    address: Type.String({ description: 'The address checked, as a string.' }),
    result: refOf(RuleResult),
    executionId: Type.String({
      format: 'uuid',
      description: 'One per execute call, shared by all its results: GET /compliance/executions/{executionId} reads the call back.',
    }),
    scenarioId: Type.String({ description: 'The scenario that ran.' }),
  },
  { $id: 'ExecutionResult', additionalProperties: false, description: 'The result of one rule of the scenario for the address.' },
);
export type ExecutionResult = Static<typeof ExecutionResult>;

/** One webhook delivery of an execution, as its delivery log shows it. */
export const WebhookDeliveryView = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Id of the delivery: its `webhook-id` header, the same on every retry and replay.' }),
    event: StringEnum(['execution.completed', 'execution.failed'], { description: 'The event announced (`type` of the payload).' }),
    state: StringEnum(['pending', 'delivered', 'failed'], {
      description: 'pending: not delivered yet (retried); delivered: the receiver answered 2xx; failed: given up after WEBHOOK_MAX_ATTEMPTS (replay it).',
    }),
    attempts: Type.Integer({ minimum: 0, description: 'Deliveries tried so far (since the last replay).' }),
    lastStatus: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status of the last attempt; null: none answered.' }),
    lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed; null: it did not.' }),
    nextAttemptAt: Type.Optional(Type.String({ format: 'date-time', description: 'When it is tried next; only while pending.' })),
    createdAt: Type.String({ format: 'date-time', description: 'When the delivery was queued (with the execution\'s end).' }),
    updatedAt: Type.String({ format: 'date-time', description: 'When the delivery last changed.' }),
  },
  { $id: 'WebhookDelivery', additionalProperties: false, description: 'A webhook delivery and its last attempt: never its payload.' },
);

/** One execute call as the audit log keeps it: never any credential content, only ids and digests. */
export const Execution = Type.Object(
  {
    executionId: Type.String({ format: 'uuid', description: 'Id of the execute call: the executionId of its results.' }),
    scenarioId: Type.String({ description: 'The scenario that ran.' }),
    scenarioRevision: Type.Integer({ minimum: 1, description: 'The scenario revision the rules came from.' }),
    projectId: Type.Union([Type.String(), Type.Null()], { description: 'The scenario\'s project; null: none.' }),
    address: Type.String({ description: 'The address checked.' }),
    state: StringEnum(['completed', 'pending', 'failed'], {
      description: 'completed: every rule has its verdict; pending: some await a proof; failed: could not complete.',
    }),
    createdAt: Type.String({ format: 'date-time', description: 'When execute was called.' }),
    updatedAt: Type.String({ format: 'date-time', description: 'When the record last changed (OffChainZKP: the wallet\'s answer, or the expiry).' }),
    credentials: Type.Array(
      Type.Object(
        {
          id: Type.String({ description: 'The credential\'s id.' }),
          sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the credential as canonical JSON (RFC 8785).' }),
        },
        { additionalProperties: false },
      ),
      { description: 'The presented credentials: id and digest only.' },
    ),
    results: Type.Array(refOf(ExecutionResult), {
      description: 'The results as execute answered them; for OffChainZKP, with the verdicts once the wallet answered.',
    }),
    verdict: refOf(Verdict),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'OffChainZKP, while pending: when the authorization request expires.' })),
    authorizationRequest: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'OffChainZKP, while pending: the request for the wallet.' })),
    links: Type.Optional(Type.Object({
      revision: Type.String({ description: 'GET it: the scenario revision this execution ran (absent when it is not kept).' }),
    }, { additionalProperties: false, description: 'GET /compliance/executions/{executionId}: related resources.' })),
    rules: Type.Optional(Type.Array(refOf(QueryConfiguration), {
      description: 'With ?embed=rules: the rules of the revision that ran, as that revision states them.',
    })),
    webhooks: Type.Optional(Type.Array(refOf(WebhookDeliveryView), {
      description: 'The delivery log of the webhook announcing this execution\'s end (where WEBHOOK_URL or the scenario\'s webhookUrl is set).',
    })),
  },
  {
    $id: 'Execution',
    additionalProperties: false,
    description: 'One execute call as the audit log keeps it: never any credential content, only ids and digests.',
  },
);
