import { randomUUID } from 'node:crypto';
import { fieldError, storableText } from '../domain/storable-text.js';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { parseAddress } from '../domain/address.js';
import { contentDigest, sha256Hex } from '../domain/canonical-json.js';
import { LruCache } from '../domain/lru.js';
import { useJsonParser } from './json.js';
import type { CachedPlan, PlanCache } from '../domain/plan-cache.js';
import { evaluateOnChainRules, type ProofStatusReader } from '../chain/index.js';
import { runPlan } from '../engine/index.js';
import type { AddressInput, ExecutionResult } from '../schemas/execution.js';
import type { Credential } from '../schemas/credential.js';
import type { ExecutionRecord, PendingZkp, Store } from '../store/types.js';
import type { OffChain } from './offchain.js';
import { CredentialTooLarge, type CredentialVerifier } from '../trust/index.js';
import { ScenarioNotFound, ValidationFailed, problemResponses } from './errors.js';
import { canSee, narrowScope } from './tenancy.js';
import { ProjectQuery, findScenario, projectQuery } from './scenarios.js';
import { IdempotencyHeaders, type Idempotency } from './idempotency.js';
import type { Metrics } from './metrics.js';

/** OnChainZKP: one result per rule from the verifier contract's view of the address. */
async function onChainResults(
  chain: ProofStatusReader, entry: CachedPlan, address: string, addressChain: string | undefined, executionId: string,
): Promise<ExecutionResult[]> {
  const { plan, scenario } = entry;
  const outcomes = await evaluateOnChainRules(chain, {
    queryConfigurations: scenario.queryConfigurations,
    smartContractDeployments: scenario.smartContractDeployments,
    address,
    chain: addressChain,
  });
  return plan.rules.map((rule, i) => {
    const o = outcomes[i];
    return {
      objectType: plan.type,
      objectId: rule.id,
      name: plan.name,
      address,
      scenarioId: plan.scenarioId,
      executionId,
      result: {
        result: {
          is_valid: o.is_valid,
          reasons: o.reasons,
          ...(o.txHash !== undefined && { txHash: o.txHash }),
          scenarioVerifierAddress: o.scenarioVerifierAddress,
          blockNumber: o.blockNumber,
          chain: o.chain,
        },
        executionId,
        status: o.status,
        query: rule.query,
      },
    };
  });
}

export interface ExecuteRoutesOptions {
  store: Store;
  plans: PlanCache;
  /** The clock, epoch ms. */
  now: () => number;
  idempotent: Idempotency;
  metrics: Metrics;
  /** Reads OnChainZKP verification from the chain. */
  chain: ProofStatusReader;
  offChain: OffChain;
  /** Credential trust checks, run before the rules. */
  verifier: CredentialVerifier;
  /** Base of OffChainZKP callback URLs (PUBLIC_BASE_URL; set wherever OffChainZKP is configured). */
  publicBaseUrl?: string;
}

/** Bodies whose credentials' digests are remembered, by the SHA-256 of the body's text (hashes only, no content). */
const DIGEST_MEMO_SIZE = 4096;

export async function executeRoutes(app: FastifyInstance, { store, plans, now, idempotent, metrics, chain, offChain, verifier, publicBaseUrl }: ExecuteRoutesOptions) {
  // A body's text is hashed as it is parsed (~6 µs for 8 KB; the text itself is not kept). The same body sent again,
  // as a frontend re-checking a wallet does, then gets its credentials' digests from a small cache instead of
  // canonicalising every credential anew (~15 µs each). Sound: equal texts parse to equal credentials.
  const bodyHashes = new WeakMap<object, string>();
  const digestMemo = new LruCache<string, string[]>(DIGEST_MEMO_SIZE);
  useJsonParser(app, (request, text) => bodyHashes.set(request, sha256Hex(text)));
  const digestsOf = (request: object, credentials: Credential[]): string[] => {
    const key = bodyHashes.get(request);
    const known = key === undefined ? undefined : digestMemo.get(key);
    if (known !== undefined) return known;
    const digests = Object.freeze(credentials.map((c) => contentDigest(c))) as string[];
    if (key !== undefined) digestMemo.set(key, digests);
    return digests;
  };

  app.post('/compliance/scenarios/execute', {
    config: { scope: 'scenarios:execute' },
    preHandler: idempotent.preHandler,
    onSend: idempotent.onSend,
    schema: {
      operationId: 'executeScenario',
      summary: 'Execute a scenario (seed 4.1)',
      description:
        'Runs every query configuration of the scenario against the address and credentials and answers one result per ' +
        'rule, in the scenario\'s order, sharing one executionId. `address` may be a string or an object ' +
        '{address, chain?, namespace?}; results carry the address string. The call is recorded in the audit log ' +
        '(GET /compliance/executions/{executionId}) before it is answered; credentials are kept only as id and SHA-256.',
      tags: ['execute'],
      security: [{ bearerAuth: ['scenarios:execute'] }],
      body: Type.Ref('ExecuteRequest'),
      querystring: ProjectQuery,
      headers: IdempotencyHeaders,
      response: {
        200: Type.Array(Type.Ref('ExecutionResult'), { description: 'One execution result per rule of the scenario' }),
        ...problemResponses(400, 401, 403, 404, 409, 413, 415, 422, 429, 503),
      },
    },
  }, async (request, reply) => {
    const body = request.body as { address: AddressInput; credentials: Credential[]; scenarioId: string };
    const address = parseAddress(body.address);
    if (!address.ok) {
      const pointer = typeof body.address === 'string' ? '/address' : '/address/address';
      throw new ValidationFailed([{ field: `body${pointer.replace(/\//g, '.')}`, pointer, message: address.message }]);
    }
    // Credential ids are stored in the audit record: text a database cannot store is refused here, on every store.
    const badIds = body.credentials.flatMap((c, i) => (typeof c.id === 'string' && !storableText(c.id)
      ? [fieldError(['credentials', i, 'id'], 'must not contain U+0000 or an unpaired UTF-16 surrogate')] : []));
    if (badIds.length > 0) throw new ValidationFailed(badIds, 'A credential id holds text the service cannot store');
    // Ids are unique per project: the scenario is looked for in the token's projects only (404 elsewhere, 409 when
    // the id is in two of them). The single-flight read is shared by executes of one id with the same projects.
    const scope = narrowScope(request.principal, projectQuery(request));
    const heads = await plans.head(body.scenarioId, scope.key, () => store.heads(body.scenarioId, scope.projects));
    if (heads.length === 0) throw new ScenarioNotFound(body.scenarioId);
    let entry = heads.length === 1 ? plans.current(heads[0]) : undefined;
    if (!entry) {
      entry = plans.compile(await findScenario(store, request, body.scenarioId));
    }
    if (!canSee(request.principal, entry.projectId)) throw new ScenarioNotFound(body.scenarioId);
    const at = now();
    const executionId = randomUUID();
    // Each credential's digest, once: the audit record keeps it, and the trust checks key their cache on it.
    const digests = digestsOf(request, body.credentials);
    let results: ExecutionResult[];
    let zkp: PendingZkp | null = null;
    let expiresAt: string | null = null;
    if (entry.plan.type === 'OnChainZKP') {
      results = await onChainResults(chain, entry, address.address, typeof body.address === 'object' ? body.address.chain : undefined, executionId);
    } else if (entry.plan.type === 'OffChainZKP') {
      // Credentials in the body are not needed here: the wallet proves each rule itself.
      // The callback base is PUBLIC_BASE_URL (required where OffChainZKP is configured: config.ts), never the Host header.
      ({ results, zkp, expiresAt } = await offChain.start(entry, address.address, executionId, publicBaseUrl ?? '', at));
    } else {
      // Trust first (proof, issuer, revocation, holder; cached per credential content), then the pure rules. A
      // credential over a size limit is a 400; no room for new credentials' checks a 429 (this token's budget) or a
      // 503 (the service's queue), with Retry-After (ColdWorkRefused carries its status): nothing is recorded then.
      let trust;
      try {
        trust = await verifier.verify(body.credentials, {
          address: address.address,
          now: at,
          trustedIssuers: entry.scenario.trustedIssuers ?? undefined,
          relevantTypes: entry.plan.credentialSlots,
          digests,
          tenant: request.principal?.subject ?? `ip:${request.ip}`,
        });
      } catch (e) {
        if (e instanceof CredentialTooLarge) {
          const id = String(body.credentials[e.index]?.id ?? '').slice(0, 200);
          throw new ValidationFailed(
            [{ field: `body.credentials[${e.index}]`, pointer: `/credentials/${e.index}`, message: e.message }],
            `Credential ${e.index} (${JSON.stringify(id)}) is too large to be verified`,
          );
        }
        throw e;
      }
      results = runPlan(entry.plan, { address: address.address, credentials: body.credentials, now: at, executionId, trust });
      if (verifier.mode === 'off') for (const r of results) r.result.verification = 'off';
    }
    const timestamp = new Date(at).toISOString();
    // Serialised once, with the response schema: the audit record keeps the very text that is answered.
    const text = reply.serialize(results) as string;
    const record: ExecutionRecord = {
      executionId,
      scenarioId: body.scenarioId,
      scenarioRevision: entry.revision,
      projectId: entry.projectId,
      address: address.address,
      state: zkp ? 'pending' : 'completed',
      results,
      resultsJson: text,
      zkp,
      expiresAt,
      credentials: body.credentials.map((c, i) => ({ id: c.id, sha256: digests[i] })),
      createdAt: timestamp,
      updatedAt: timestamp,
    };
    // The parsed body (mostly credentials and their proofs) is not needed past this point: let it die young instead
    // of being copied by every scavenge while the request waits for its commit (~5 µs of CPU per execute under load).
    request.body = undefined;
    // Answered only once the audit record is committed: no verdict leaves the service unrecorded.
    await store.recordExecution(record);
    if (!zkp) metrics.countVerdicts(results);
    return reply.type('application/json; charset=utf-8').send(text);
  });
}
