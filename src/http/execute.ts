import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { fieldError, unstorableText } from '../domain/storable-text.js';
import { Type } from '@sinclair/typebox';
import { AddressParser } from '../domain/address.js';
import { contentDigest, sha256Hex } from '../domain/canonical-json.js';
import { ExecuteRequest, ExecutionResult } from '../schemas/execution.js';
import type { Credential } from '../schemas/credential.js';
import { ProjectQuery, refOf } from '../schemas/common.js';
import type { ExecutionLifecycle } from '../services/executions.js';
import { ValidationFailed } from './errors.js';
import { AUTHENTICATED, EXAMPLES, also, answered, problemResponses } from './responses.js';
import { executeRequestExamples, executeResponseExamples } from '../schemas/examples.js';
import { accessOf } from './tenancy.js';
import { IdempotencyHeaders, type Idempotency } from './idempotency.js';
import type { Attestor } from '../domain/attestation.js';
import { AttestQuery, attestRequest, eip712Header } from './attest-request.js';

export interface ExecuteRoutesOptions {
  executions: ExecutionLifecycle;
  idempotent: Idempotency;
  /** CredentialVerifier.coldRefusal. */
  coldRefusal: (tenant: string) => Error | undefined;
  attestor: Attestor;
}

const ExecuteQuery = Type.Object({ ...ProjectQuery.properties, ...AttestQuery }, { additionalProperties: false });

const tenantOf = (request: FastifyRequest) => request.principal?.subject ?? `ip:${request.ip}`;

/** Bodies whose credentials' digests are kept, by the SHA-256 of the body's text. */
const DIGEST_MEMO_SIZE = 4096;

function countStatuses(results: readonly ExecutionResult[]): Record<ExecutionResult['result']['status'], number> {
  const counts = { valid: 0, 'not-valid': 0, error: 0, pending: 0 };
  for (const result of results) counts[result.result.status]++;
  return counts;
}

export const executeRoutes: FastifyPluginAsyncTypebox<ExecuteRoutesOptions> = async (app, { executions, idempotent, coldRefusal, attestor }) => {
  // A frontend re-checking a wallet sends the same body again: hashing its text as it is parsed (~6 µs for 8 KB) spares
  // canonicalising every credential anew (~15 µs each). Sound: equal texts parse to equal credentials.
  const addresses = new AddressParser();
  const bodyHashes = new WeakMap<object, string>();
  const bodyBytes = new WeakMap<object, number>();
  const digestMemo = new LRUCache<string, readonly string[]>({ max: DIGEST_MEMO_SIZE });
  const digestsOf = (request: object, credentials: Credential[]): readonly string[] => {
    const key = bodyHashes.get(request);
    const known = key === undefined ? undefined : digestMemo.get(key);
    if (known !== undefined) return known;
    const digests = Object.freeze(credentials.map((credential) => contentDigest(credential)));
    if (key !== undefined) digestMemo.set(key, digests);
    return digests;
  };

  app.post('/compliance/scenarios/execute', {
    config: {
      scope: 'scenarios:execute',
      body: {
        onText: (request, text) => {
          bodyHashes.set(request, sha256Hex(text));
          bodyBytes.set(request, Buffer.byteLength(text));
        },
      },
    },
    // Before the body is read: a flood of new credentials costs a refusal each, not a parse and digest of every body.
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
    const asked = request.query.attest === undefined ? undefined : attestRequest(request.query, attestor);
    const address = addresses.parse(body.address);
    if (!address.ok) {
      throw new ValidationFailed([fieldError(typeof body.address === 'string' ? ['address'] : ['address', 'address'], address.message)]);
    }
    // Credential ids are stored in the audit record.
    const badIds = body.credentials.flatMap((credential, i) => unstorableText(credential.id, ['credentials', i, 'id']));
    if (badIds.length > 0) throw new ValidationFailed(badIds, 'A credential id holds text the service cannot store');
    const { results, text, attestations } = await executions.execute({
      scenarioId: body.scenarioId,
      access: accessOf(request),
      address: address.address,
      addressChain: typeof body.address === 'object' ? body.address.chain : undefined,
      credentials: body.credentials,
      digests: () => digestsOf(request, body.credentials),
      tenant: tenantOf(request),
      bodyBytes: bodyBytes.get(request) ?? 0,
      attest: asked,
    }, {
      // Ids and counts only, never the address or a credential.
      evaluated: (executionId, evaluated) => {
        reply.log = request.log = request.log.child({ scenarioId: body.scenarioId, executionId, results: countStatuses(evaluated) });
      },
      serialize: (r) => {
        const serialized = reply.serialize(r);
        if (typeof serialized !== 'string') throw new TypeError('the response serializer gave no text');
        return serialized;
      },
    });
    if (attestations?.jws !== undefined) reply.header('Attestation', attestations.jws);
    if (attestations?.eip712 !== undefined) reply.header('Attestation-EIP712', eip712Header(attestations.eip712));
    // The audit record's text, not serialised a second time.
    return reply.type('application/json; charset=utf-8').serializer(() => text).send(results);
  });
};
