import { Type } from '@sinclair/typebox';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { FieldProblem } from '../engine/index.js';
import type { CachedPlan } from '../domain/plan-cache.js';
import { newDelivery } from '../domain/webhooks.js';
import type { Config } from '../config.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { Scenario } from '../schemas/scenario.js';
import type { ExecutionRecord, PendingZkp, Store } from '../store/types.js';
// Not ../zkp/index.js: what needs @iden3/js-iden3-auth comes through loadIden3Auth (see ready()).
import { createDocumentLoader, readDocumentsFile, type OfflineDocumentLoader } from '../zkp/documents.js';
import { isZkpError } from '../zkp/errors.js';
import { loadIden3Auth } from '../zkp/lazy.js';
import { validateZkpQueries } from '../zkp/queries.js';
import type { BuiltAuthorizationRequest, PendingAuthorization } from '../zkp/request.js';
import { checkZkpQuerySchemas } from '../zkp/schema-check.js';
import type { StateResolvers } from '../zkp/state.js';
import type { ZkpVerifier } from '../zkp/verify.js';
import { ExecutionNotFound, problemResponses, sendProblem } from './errors.js';
import type { Metrics } from './metrics.js';
import { executionView } from './executions.js';
import { LruCache } from '../domain/lru.js';

export interface OffChainDeps {
  store: Store;
  now: () => number;
  log: FastifyBaseLogger;
  metrics: Metrics;
  /** Issuer-state resolvers by chain; defaults to ZKP_STATE_RESOLVERS (RPC). Tests hand in their own. */
  stateResolvers?: StateResolvers;
}

/** Answers waiting for the proof check running in this process before more get 503. */
export const MAX_WAITING_CHECKS = 16;

/** `/compliance/executions/{id}/zkp-response`: where the wallet POSTs its answer. */
export const callbackPath = (executionId: string) => `/compliance/executions/${executionId}/zkp-response`;

/**
 * OffChainZKP: the wallet proves each rule with a zero-knowledge proof and the service verifies it. Execute answers
 * `pending` results carrying an iden3comm authorization request; the wallet's answer to the callback completes the
 * execution (CAS on its state), announced by webhook. Requests expire; an expired execution fails.
 * @iden3/js-iden3-auth (request building, proof verification, ~26 MB) loads only where OffChainZKP is configured
 * (ZKP_VERIFIER_DID set): then at start, through ready(), so that a bad setting (e.g. ZKP_CIRCUITS_DIR without the
 * verification keys) stops the start as before; without it never, since every OffChainZKP execute answers error.
 */
export class OffChain {
  private readonly documents: OfflineDocumentLoader;
  /** Made by ready() (or the first answer), then reused (it reads the verification keys). */
  private verifier?: Promise<ZkpVerifier>;
  /** Answers that reached the proof check, per pending execution (this process), kept until it expires. */
  private readonly answers = new LruCache<string, number>(10_000);
  /** The proof checks waiting for the one running (see checkOneAtATime). */
  private readonly waiting: Array<() => void> = [];
  private checking = false;

  constructor(private readonly config: Config, private readonly deps: OffChainDeps) {
    const z = config.zkp;
    this.documents = createDocumentLoader({ documents: z.documentsFile ? readDocumentsFile(z.documentsFile) : undefined });
  }

  /** Where OffChainZKP is configured, loads the library and makes the verifier now (it throws on a bad setting). */
  async ready(): Promise<void> {
    if (this.config.zkp.verifierDid) await this.loadVerifier();
  }

  private loadVerifier(): Promise<ZkpVerifier> {
    this.verifier ??= loadIden3Auth().then(({ createZkpVerifier, createRpcStateResolvers }) => {
      const z = this.config.zkp;
      return createZkpVerifier({
        stateResolvers: this.deps.stateResolvers ?? createRpcStateResolvers(z.stateResolvers),
        documentLoader: this.documents,
        circuitsDir: z.circuitsDir,
        proofMaxAgeMs: z.proofMaxAgeMs,
        clockSkewMs: z.clockSkewMs,
        stateTransitionDelayMs: z.stateTransitionDelayMs,
        allowPlainMessages: z.allowPlainMessages,
      });
    }).catch((err: unknown) => {
      this.verifier = undefined;
      throw err;
    });
    return this.verifier;
  }

  /** Create/patch-time checks of an OffChainZKP scenario's queries: what the circuits and the contexts allow. */
  async validate(scenario: Scenario): Promise<FieldProblem[]> {
    if (scenario.type !== 'OffChainZKP') return [];
    const options = { contexts: this.config.zkp.contexts, documents: this.documents };
    const problems = validateZkpQueries(scenario.queryConfigurations, options);
    if (problems.length > 0) return problems;
    return checkZkpQuerySchemas(scenario.queryConfigurations, { documentLoader: this.documents, contexts: this.config.zkp.contexts });
  }

  /** Execute: pending results and the authorization request, or error results when the verifier is not configured. */
  async start(entry: CachedPlan, address: string, executionId: string, callbackBase: string, at: number):
    Promise<{ results: ExecutionResult[]; zkp: PendingZkp | null; expiresAt: string | null }> {
    const { plan, scenario } = entry;
    const z = this.config.zkp;
    const result = (rule: CachedPlan['plan']['rules'][number], status: 'pending' | 'error', reasons: string[], authorizationRequest?: unknown): ExecutionResult => ({
      objectType: plan.type, objectId: rule.id, name: plan.name, address, scenarioId: plan.scenarioId, executionId,
      result: { result: { is_valid: false, reasons }, executionId, status, query: rule.query, ...(authorizationRequest !== undefined && { authorizationRequest }) },
    });
    if (!z.verifierDid) {
      const reason = 'off-chain zero-knowledge proof verification is not configured on this service (ZKP_VERIFIER_DID is unset)';
      return { results: plan.rules.map((r) => result(r, 'error', [reason])), zkp: null, expiresAt: null };
    }
    const { buildAuthorizationRequest } = await loadIden3Auth();
    let built: BuiltAuthorizationRequest;
    try {
      built = buildAuthorizationRequest(scenario.queryConfigurations, {
        callbackUrl: `${callbackBase}${callbackPath(executionId)}`,
        verifierDid: z.verifierDid,
        reason: scenario.name,
        message: scenario.message ?? undefined,
        contexts: z.contexts,
        allowedIssuers: z.allowedIssuers,
        defaultCircuitId: z.defaultCircuitId,
        ttlMs: z.requestTtlMs,
        now: at,
      });
    } catch (err) {
      // The scenario was valid when stored; the configuration (ZKP_CONTEXTS, documents) may have changed since.
      if (!isZkpError(err)) throw err;
      const reason = `the authorization request cannot be built with the current configuration: ${err.message}`;
      return { results: plan.rules.map((r) => result(r, 'error', [reason])), zkp: null, expiresAt: null };
    }
    const { request, pending } = built;
    const results = plan.rules.map((rule, i) => result(rule, 'pending', [
      `awaiting the wallet's zero-knowledge proof for request ${pending.rules[i]?.requestId}: send it the authorizationRequest`,
    ], request));
    return { results, zkp: pending as unknown as PendingZkp, expiresAt: new Date(pending.expiresAt * 1000).toISOString() };
  }

  /**
   * Ends a pending execution (answer verified, or expired) and queues its webhook, atomically. Answers the execution
   * as it now stands (the API view), or undefined when it was no longer pending.
   */
  private async finish(record: ExecutionRecord, state: 'completed' | 'failed', results: ExecutionResult[]) {
    const updatedAt = new Date(this.deps.now()).toISOString();
    const ended: ExecutionRecord = { ...record, state, results, updatedAt, zkp: null };
    const webhook = this.config.webhook
      ? newDelivery(record.executionId, state === 'completed' ? 'execution.completed' : 'execution.failed', executionView(ended), updatedAt)
      : undefined;
    if (!(await this.deps.store.completeExecution(record.executionId, { state, results, updatedAt, webhook }))) return undefined;
    this.deps.metrics.countVerdicts(results);
    return executionView(ended, webhook && [webhook]);
  }

  private expire(record: ExecutionRecord) {
    const reason = 'the authorization request expired before the wallet answered';
    return this.finish(record, 'failed', record.results.map((r) => ({
      ...r, result: { ...r.result, result: { is_valid: false, reasons: [reason] }, status: 'error', authorizationRequest: undefined },
    })));
  }

  /** Fails pending executions whose request expired (run periodically). */
  async sweep(): Promise<void> {
    const now = this.deps.now();
    const expired = await this.deps.store.expiredPendingExecutions(new Date(now).toISOString(), 100);
    for (const record of expired) await this.expire(record);
  }

  /**
   * Runs one proof check at a time in this process, with at most MAX_WAITING_CHECKS waiting (else undefined: the
   * caller answers 503). A check is ~50–90 ms of Groth16 CPU on the one thread of zkp/groth16.ts: one at a time, and a
   * short queue, keep a burst of answers from piling up behind it.
   */
  private async checkOneAtATime<T>(check: () => Promise<T>): Promise<{ value: T } | undefined> {
    if (this.checking) {
      if (this.waiting.length >= MAX_WAITING_CHECKS) return undefined;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.checking = true;
    try {
      return { value: await check() };
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.checking = false;
    }
  }

  /** The wallet's callback: outside bearer auth (the wallet has no token; the proof and the thread id bind it). */
  routes(app: FastifyInstance): void {
    app.register(async (child) => {
      // Wallets POST the token as text; a plain JSON message may come as application/json.
      child.addContentTypeParser(['text/plain', 'application/octet-stream'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
      // Anyone may answer (no token), and an answer whose cheap checks pass costs a proof check: a limit per client
      // address (besides the service-wide one), a budget per execution and one check at a time bound that cost.
      const perMinute = this.config.zkp.responsesPerMinute;
      const perAddress = perMinute > 0 && {
        max: perMinute,
        timeWindow: 60_000,
        keyGenerator: (request: FastifyRequest) => `zkp-response:${request.ip}`,
        errorResponseBuilder: (_request: FastifyRequest, context: { max: number; after: string; ttl: number }) => Object.assign(
          new Error(`Rate limit exceeded: at most ${context.max} answers a minute from this client address; retry in ${context.after}`),
          { statusCode: 429, code: 'SCS_RATE_LIMITED', retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)) },
        ),
      };
      child.post('/compliance/executions/:executionId/zkp-response', {
        // Instead of the service-wide limit (protection.ts); off with RATE_LIMIT_MAX=0, like every rate limit.
        ...(perAddress && { config: { rateLimit: perAddress } }),
        bodyLimit: 256 * 1024,
        schema: {
          operationId: 'answerZkpRequest',
          summary: 'The wallet\'s answer to an OffChainZKP authorization request',
          description:
            'iden3comm callback, no bearer token: the body is the JWZ token (text/plain), or a plain iden3comm message where ' +
            'ZKP_ALLOW_PLAIN_RESPONSES is on. The proofs are verified (Groth16 against the circuit keys, query match, issuer ' +
            'state, proof age, thread id of this execution) and the execution completes with a verdict per rule. Nothing ' +
            'changes on a refused answer. Where the proving identity is made from an Ethereum address, it must be the ' +
            "execution's address (422 otherwise); a BabyJubJub identity encodes no address, and only the delivery of the " +
            "authorization request to the holder's wallet binds it to the address. Limits: ZKP_RESPONSES_PER_MINUTE " +
            'answers per client address (429), ZKP_ANSWERS_PER_EXECUTION answers per execution (429), one proof check at ' +
            'a time per process with 16 waiting (503 beyond, with Retry-After).',
          tags: ['executions'],
          consumes: ['text/plain', 'application/octet-stream', 'application/json'],
          params: Type.Object({ executionId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
          body: Type.Union([Type.String({ minLength: 1, maxLength: 200_000 }), Type.Object({}, { additionalProperties: true })]),
          response: {
            200: Type.Ref('Execution'),
            ...problemResponses(400, 404, 409, 410, 413, 415, 422, 429, 503),
          },
        },
      }, async (request, reply) => {
        const { executionId } = request.params as { executionId: string };
        const body = request.body;
        const token = typeof body === 'string' ? body.trim() : JSON.stringify(body);
        const record = await this.deps.store.getExecution(executionId);
        if (!record || !record.zkp) throw new ExecutionNotFound(executionId);
        if (record.state !== 'pending') {
          return sendProblem(reply, 409, { code: 'SCS_EXECUTION_NOT_PENDING', detail: `This execution is ${record.state}: it takes no further answer` });
        }
        const now = this.deps.now();
        if (now > record.zkp.expiresAt * 1000) {
          await this.expire(record);
          return sendProblem(reply, 410, { code: 'SCS_REQUEST_EXPIRED', detail: 'The authorization request expired; start a new execution' });
        }
        const answered = this.answers.get(executionId) ?? 0;
        const leftSeconds = Math.max(1, Math.ceil((record.zkp.expiresAt * 1000 - now) / 1000));
        if (answered >= this.config.zkp.answersPerExecution) {
          reply.header('Retry-After', String(leftSeconds));
          return sendProblem(reply, 429, {
            code: 'SCS_TOO_MANY_ANSWERS',
            detail: `This execution has taken ${answered} answers, the most it takes (ZKP_ANSWERS_PER_EXECUTION); start a new execution`,
          });
        }
        this.answers.set(executionId, answered + 1, leftSeconds * 1000);
        const verifier = await this.loadVerifier();
        let verification;
        try {
          const checked = await this.checkOneAtATime(() => verifier.verify(token, record.zkp as unknown as PendingAuthorization, { now, address: record.address }));
          if (checked === undefined) {
            this.answers.set(executionId, Math.max(0, (this.answers.get(executionId) ?? 1) - 1), leftSeconds * 1000); // not checked: not counted
            reply.header('Retry-After', '1');
            return sendProblem(reply, 503, { code: 'SCS_OVERLOADED', detail: 'Too many answers are waiting for their proof check; send it again shortly' });
          }
          verification = checked.value;
        } catch (err) {
          if (!isZkpError(err)) throw err;
          if (err.statusCode === 410) await this.expire(record);
          if (err.statusCode === 503) reply.header('Retry-After', '5');
          request.log.info({ code: err.code }, 'zkp answer refused');
          return sendProblem(reply, err.statusCode >= 500 && err.statusCode !== 503 ? 500 : err.statusCode, { code: `SCS_${err.code}`, detail: err.message });
        }
        const results = record.results.map((r, i) => {
          const v = verification.verdicts.find((x) => x.objectId === r.objectId) ?? verification.verdicts[i];
          const status = v ? v.status : 'error';
          const reasons = v ? v.reasons : ['the answer holds no proof for this rule'];
          return { ...r, result: { result: { is_valid: status === 'valid', reasons }, executionId: r.executionId, status, query: r.result.query } } as ExecutionResult;
        });
        const ended = await this.finish(record, 'completed', results);
        if (!ended) {
          return sendProblem(reply, 409, { code: 'SCS_EXECUTION_NOT_PENDING', detail: 'This execution was completed by another answer or expired meanwhile' });
        }
        return ended;
      });
    });
  }
}
