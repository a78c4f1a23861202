import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { fieldError, unstorableText } from '../domain/storable-text.js';
import { Type } from '@sinclair/typebox';
import { AddressParser } from '../domain/address.js';
import { contentDigest, sha256Hex } from '../domain/canonical-json.js';
import type { CachedPlan, PlanCache } from '../domain/plan-cache.js';
import type { Executor } from '../execution/index.js';
import { ExecuteRequest, ExecutionResult } from '../schemas/execution.js';
import type { Credential } from '../schemas/credential.js';
import type { ScenarioType } from '../schemas/scenario.js';
import { ProjectQuery, refOf } from '../schemas/common.js';
import type { Store } from '../store/types.js';
import { ExecutionService } from '../services/executions.js';
import { ValidationFailed } from './errors.js';
import { AUTHENTICATED, EXAMPLES, also, answered, problemResponses } from './responses.js';
import { executeRequestExamples, executeResponseExamples } from '../schemas/examples.js';
import { accessOf } from './tenancy.js';
import { IdempotencyHeaders, type Idempotency } from './idempotency.js';
import { executionDelivery, webhookTarget, type WebhookConfig } from '../domain/webhooks.js';
import type { Attestor } from '../domain/attestation.js';
import { attestedExecution } from '../execution/view.js';
import { AttestQuery, attestRequest, attestationsOf, eip712Header, refuseEip712 } from './attest-request.js';

export interface ExecuteRoutesOptions {
  store: Store;
  plans: PlanCache;
  /** The clock, epoch ms. */
  now: () => number;
  idempotent: Idempotency;
  /** Runs a scenario by its type (src/execution). */
  executor: Executor;
  /** Told the results of every completed execute (metrics). */
  onVerdicts: (results: ExecutionResult[]) => void;
  /** The refusal of a tenant at its budget of first credential checks (CredentialVerifier.coldRefusal), or undefined. */
  coldRefusal: (tenant: string) => Error | undefined;
  /** Execution webhooks (WEBHOOK_SECRET is set): an execution that ends at execute queues its event with its record. */
  webhook?: WebhookConfig;
  /** Signs the verdicts asked for with `?attest=`. */
  attestor: Attestor;
  /** Whether a scenario type's verdicts are tied to the request's address (attestations say so). */
  /** What an attestation of a type's execution will say of its holder binding and credential verification. */
  attestationFacts: (type: ScenarioType) => { holderBound: boolean; credentialsVerified: boolean };
}

const ExecuteQuery = Type.Object({ ...ProjectQuery.properties, ...AttestQuery }, { additionalProperties: false });

/** Whose budgets an execute spends: the token's subject (the client address without one). */
const tenantOf = (request: FastifyRequest) => request.principal?.subject ?? `ip:${request.ip}`;

/** Bodies whose credentials' digests are remembered, by the SHA-256 of the body's text (hashes only, no content). */
const DIGEST_MEMO_SIZE = 4096;

/** How many results of an execution have each status. */
function countStatuses(results: readonly ExecutionResult[]): Record<ExecutionResult['result']['status'], number> {
  const counts = { valid: 0, 'not-valid': 0, error: 0, pending: 0 };
  for (const r of results) counts[r.result.status]++;
  return counts;
}

/** POST /compliance/scenarios/execute: parses the request for ExecutionService.execute, signs what `?attest=` asks for, and answers the recorded results. */
export const executeRoutes: FastifyPluginAsyncTypebox<ExecuteRoutesOptions> = async (app, { store, plans, now, idempotent, executor, onVerdicts, coldRefusal, webhook, attestor, attestationFacts }) => {
  const executions = new ExecutionService({ store, plans, now, executor, onVerdicts });
  // A body's text is hashed as it is parsed (~6 µs for 8 KB; the text itself is not kept). The same body sent again,
  // as a frontend re-checking a wallet does, then gets its credentials' digests from a small cache instead of
  // canonicalising every credential anew (~15 µs each). Sound: equal texts parse to equal credentials.
  // Addresses parsed again and again (a frontend re-checking wallets) come from a bounded memo (~10 µs saved each).
  const addresses = new AddressParser();
  const bodyHashes = new WeakMap<object, string>();
  const digestMemo = new LRUCache<string, readonly string[]>({ max: DIGEST_MEMO_SIZE });
  const digestsOf = (request: object, credentials: Credential[]): readonly string[] => {
    const key = bodyHashes.get(request);
    const known = key === undefined ? undefined : digestMemo.get(key);
    if (known !== undefined) return known;
    const digests = Object.freeze(credentials.map((c) => contentDigest(c)));
    if (key !== undefined) digestMemo.set(key, digests);
    return digests;
  };

  // A scenario revision's digest, computed at its first attested execute (a cached plan is one revision).
  const scenarioDigests = new WeakMap<CachedPlan, string>();
  const scenarioDigest = (entry: CachedPlan): string => {
    let d = scenarioDigests.get(entry);
    if (d === undefined) scenarioDigests.set(entry, (d = contentDigest(entry.scenario)));
    return d;
  };

  app.post('/compliance/scenarios/execute', {
    config: { scope: 'scenarios:execute', body: { onText: (request, text) => bodyHashes.set(request, sha256Hex(text)) } },
    // A token at its budget of first checks is refused before its body is read (after authentication): a flood of
    // new credentials then costs the request thread a refusal each, not a read, parse and digest of every body.
    onRequest: async (request) => {
      const refused = coldRefusal(tenantOf(request));
      if (refused) throw refused;
    },
    preHandler: idempotent.preHandler,
    onSend: idempotent.onSend,
    schema: {
      operationId: 'executeScenario',
      summary: 'Execute a scenario',
      description:
        'Runs every query configuration (rule) of the scenario against the address and the credentials sent, and answers ' +
        'one result per rule, in the scenario\'s order, sharing one executionId. The address passes the scenario when ' +
        'every result has status `valid`. `address` may be a string or an object {address, chain?, namespace?}; results ' +
        'carry the address string. The call is recorded in the audit log (GET /compliance/executions/{executionId}) ' +
        'before it is answered; credentials are kept there only as id and SHA-256. Answer and record are bounded: a ' +
        'result echoes its rule\'s query with a value list over 128 bytes abbreviated (`valueCount`), reasons quote no ' +
        'such list and name at most 10 credentials per rule, and results over 1 MiB keep only the first line of each ' +
        'result\'s reasons (and the authorization request on the first result only). To try it: create the scenario of ' +
        'the create example, run the service with DEMO_ISSUER=1 and send the example below (or credentials from ' +
        '`node dist/scripts/demo-credentials.js`).',
      tags: ['execute'],
      security: [{ bearerAuth: ['scenarios:execute'] }],
      body: refOf(ExecuteRequest),
      'x-request-examples': executeRequestExamples,
      querystring: ExecuteQuery,
      headers: IdempotencyHeaders,
      response: {
        200: answered(
          Type.Array(refOf(ExecutionResult), {
            description: 'One execution result per rule of the scenario',
            'x-examples': executeResponseExamples,
          }),
          'The scenario ran (whatever the verdicts): one result per rule. Read each `result.status`: valid passes; ' +
          'not-valid fails, and `result.result.reasons` says why; error could not be decided (an issuer, a status ' +
          'service or a chain did not answer): never a pass, executing again later may decide it; pending ' +
          '(OffChainZKP): hand `result.authorizationRequest` to the holder\'s wallet, then read GET ' +
          '/compliance/executions/{executionId} until its state is completed (or failed: the request expired).',
          ['Idempotent-Replayed', 'Attestation', 'Attestation-EIP712'],
        ),
        ...problemResponses([...AUTHENTICATED, 404, 409, 413, 415, 422], {
          400: also(400, 'The address is checked too (body.address: an EVM address is 0x + 40 hex, and mixed case ' +
            'must pass the EIP-55 checksum), and a credential too large to be verified is named (body.credentials[i]).'),
          404: 'No scenario with this scenarioId in the token\'s projects (code SCS_SCENARIO_NOT_FOUND). Check the id, ' +
            'or create the scenario first (POST /compliance/scenarios).',
          409: 'SCS_SCENARIO_AMBIGUOUS: several of the token\'s projects have a scenario with this id; add ?projectId= ' +
            'to name one. SCS_IDEMPOTENCY_IN_PROGRESS: a request with this Idempotency-Key is still running; send ' +
            'again after Retry-After.',
          413: also(413, 'Send fewer credentials in one call.'),
          429: also(429, 'SCS_VERIFICATION_BUDGET: this token has too many credentials new to the service waiting ' +
            'to be verified; send again after Retry-After (credentials verified once are checked quickly afterwards).'),
          503: also(503, 'SCS_VERIFICATION_QUEUE_FULL: the service is verifying too many new credentials for all ' +
            'callers together.'),
        }, { retryAfter: [409], examples: { 400: EXAMPLES.invalidExecute, 404: EXAMPLES.scenarioNotFound, 409: EXAMPLES.ambiguous } }),
      },
    },
  }, async (request, reply) => {
    const body = request.body;
    // The attestation asked for is checked before any work: a request that cannot get it is refused whole.
    const asked = request.query.attest === undefined ? undefined : attestRequest(request.query, attestor);
    const address = addresses.parse(body.address);
    if (!address.ok) {
      throw new ValidationFailed([fieldError(typeof body.address === 'string' ? ['address'] : ['address', 'address'], address.message)]);
    }
    // Credential ids are stored in the audit record: text a database cannot store is refused here, on every store.
    const badIds = body.credentials.flatMap((c, i) => unstorableText(c.id, ['credentials', i, 'id']));
    if (badIds.length > 0) throw new ValidationFailed(badIds, 'A credential id holds text the service cannot store');
    const principal = request.principal;
    let signed: Awaited<ReturnType<typeof attestationsOf>> | undefined;
    const { results, text } = await executions.execute({
      scenarioId: body.scenarioId,
      access: accessOf(principal, request.query.projectId),
      address: address.address,
      addressChain: typeof body.address === 'object' ? body.address.chain : undefined,
      credentials: body.credentials,
      digests: () => digestsOf(request, body.credentials),
      tenant: tenantOf(request),
    }, {
      // The request's log lines from here on, its completion line among them, name the execution and count its
      // results: ids and counts only, never the address or a credential.
      // An EIP-712 attestation this execution cannot get (holder not bound, or credentials not verified) is refused before any work.
      planned: (entry) => {
        if (asked?.eip712) refuseEip712(attestationFacts(entry.scenario.type));
      },
      started: (executionId, started) => {
        reply.log = request.log = request.log.child({ scenarioId: body.scenarioId, executionId, results: countStatuses(started) });
      },
      // With the response schema: the audit record keeps the very text that is answered.
      serialize: (r) => {
        const text = reply.serialize(r);
        if (typeof text !== 'string') throw new TypeError('the response serializer gave no text');
        return text;
      },
      beforeCommit: async ({ record, entry, results, pending }) => {
        // The parsed body (mostly credentials and their proofs) is not needed past this point: let it die young
        // instead of being copied by every scavenge while the request waits for its commit (~5 µs of CPU per execute).
        Reflect.set(request, 'body', undefined);
        // The event of an execution that ended here joins its record's insert (the same group commit, no round trip of
        // its own); a pending OffChainZKP execution's is queued when it ends (execution/offchain-zkp/strategy.ts).
        // Signed before the commit so that the webhook, written with the record, carries what the caller receives.
        // Kept with the record, for attestations signed later of this very execution (GET …/attestation).
        record.scenarioDigest = scenarioDigest(entry);
        record.holderBound = attestationFacts(entry.scenario.type).holderBound;
        signed = asked ? await attestationsOf(attestor, asked, attestedExecution({ ...record, scenarioDigest: record.scenarioDigest }), now()) : undefined;
        if (!pending && webhookTarget(webhook, entry.scenario.webhookUrl) !== undefined) {
          const attestation = signed && { ...(signed.jws !== undefined && { jws: signed.jws }), ...(signed.eip712 !== undefined && { eip712: signed.eip712 }) };
          record.webhook = executionDelivery(record, results, entry.scenario.webhookUrl ?? null, { attestation });
        }
      },
    });
    // Answered only once the audit record is committed (ExecutionService.execute).
    if (signed) {
      if (signed.jws !== undefined) reply.header('Attestation', signed.jws);
      if (signed.eip712 !== undefined) reply.header('Attestation-EIP712', eip712Header(signed.eip712));
    }
    // Sent as serialised above (the audit record's text), not serialised a second time.
    return reply.type('application/json; charset=utf-8').serializer(() => text).send(results);
  });
};
