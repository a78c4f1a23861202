/**
 * OffChainZKP: the wallet proves each rule with a zero-knowledge proof and the service verifies it. Execute answers
 * `pending` results carrying an iden3comm authorization request; the wallet's answer (answer(), through the callback route
 * of callback.ts) completes the execution
 * (CAS on its state) and queues its webhook; requests expire, and an expired execution fails (sweep()).
 * @iden3/js-iden3-auth (request building, proof verification, ~26 MB) loads only where OffChainZKP is configured
 * (ZKP_VERIFIER_DID set): then at start, through ready(), so that a bad setting (e.g. ZKP_CIRCUITS_DIR without the
 * verification keys) stops the start; without it never, since every OffChainZKP execute answers error.
 */
import { executionDelivery, webhookTarget, type WebhookConfig } from '../../domain/webhooks.js';
import type { FieldProblem } from '../../engine/index.js';
import { executionResult, failed, withVerdict } from '../../engine/result.js';
import type { ExecutionResult } from '../../schemas/execution.js';
import type { Scenario } from '../../schemas/scenario.js';
import type { ExecutionRecord, PendingState, Store } from '../../store/types.js';
// Not ../zkp/index.js: what needs @iden3/js-iden3-auth comes through loadIden3Auth (see ready()).
import { createDocumentLoader, type JsonLdLoader } from '../../jsonld/documents.js';
import type { ZkpEnvConfig } from '../../zkp/env.js';
import { isZkpError } from '../../zkp/errors.js';
import { loadIden3Auth } from '../../zkp/lazy.js';
import { validateZkpQueries } from '../../zkp/queries.js';
import type { BuiltAuthorizationRequest, PendingAuthorization } from '../../zkp/request.js';
import { checkZkpQuerySchemas } from '../../zkp/schema-check.js';
import type { StateResolvers } from '../../zkp/state.js';
import type { ZkpVerifier } from '../../zkp/verify.js';
import type { ExecuteInput, ScenarioStrategy, Started } from '../types.js';
import { ExecutionNotPending, ProofChecksBusy, RequestExpired, TooManyAnswers } from '../errors.js';
import { MAX_WAITING_CHECKS, callbackPath } from './callback.js';
import { bindNullifiers } from './nullifiers.js';
import { executionView } from '../view.js';

export interface OffChainZkpOptions {
  zkp: ZkpEnvConfig;
  /** Base of callback URLs (PUBLIC_BASE_URL; required where ZKP_VERIFIER_DID is set), never a request's Host. */
  publicBaseUrl?: string;
  /** Execution webhooks (WEBHOOK_SECRET is set): each ended execution queues its event, where one is configured. */
  webhook?: WebhookConfig;
  store: Store;
  now: () => number;
  /** Issuer-state resolvers by chain; defaults to ZKP_STATE_RESOLVERS (RPC). Tests hand in their own. */
  stateResolvers?: StateResolvers;
  /** Told the final results of every execution this strategy ends (metrics). */
  onVerdicts?: (results: ExecutionResult[]) => void;
  /** The JSON-LD documents of rules' contexts (the operator's JSONLD_DOCUMENTS_FILE); default: the bundled ones. */
  documentLoader?: JsonLdLoader;
}

/** An accepted answer: the execution, completed. A refused one throws (execution/errors.ts, zkp/errors.ts). */
export interface AnswerOutcome {
  ok: true;
  execution: ReturnType<typeof executionView>;
}

export class OffChainZkp implements ScenarioStrategy {
  readonly type = 'OffChainZKP' as const;
  private readonly documents: JsonLdLoader;
  /** Made by ready() (or the first answer), then reused (it reads the verification keys). */
  private verifier?: Promise<ZkpVerifier>;
  /** The proof checks waiting for the one running (see checkOneAtATime). */
  private readonly waiting: Array<() => void> = [];
  private checking = false;

  constructor(private readonly options: OffChainZkpOptions) {
    this.documents = options.documentLoader ?? createDocumentLoader();
  }

  /** Answers its callback takes per client address and minute (ZKP_RESPONSES_PER_MINUTE; 0: the service-wide limit only). */
  get responsesPerMinute(): number {
    return this.options.zkp.responsesPerMinute;
  }

  /** Where OffChainZKP is configured, loads the library and makes the verifier now (it throws on a bad setting). */
  async ready(): Promise<void> {
    if (this.options.zkp.verifierDid) await this.loadVerifier();
  }

  private loadVerifier(): Promise<ZkpVerifier> {
    this.verifier ??= loadIden3Auth().then(({ createZkpVerifier, createRpcStateResolvers }) => {
      const z = this.options.zkp;
      return createZkpVerifier({
        stateResolvers: this.options.stateResolvers ?? createRpcStateResolvers(z.stateResolvers),
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
    const { contexts, defaultCircuitId } = this.options.zkp;
    const problems = validateZkpQueries(scenario.queryConfigurations, { contexts, documents: this.documents, defaultCircuitId });
    if (problems.length > 0) return problems;
    return checkZkpQuerySchemas(scenario.queryConfigurations, { documentLoader: this.documents, contexts });
  }

  /** Pending results and the authorization request, or error results when the verifier is not configured. */
  async execute({ entry, address, executionId, at }: ExecuteInput): Promise<Started> {
    const { plan, scenario } = entry;
    const z = this.options.zkp;
    const head = { objectType: plan.type, name: plan.name, scenarioId: plan.scenarioId, address, executionId };
    const errors = (reason: string): Started => ({ results: plan.rules.map((r) => executionResult(head, r, 'error', failed([reason]))) });
    if (!z.verifierDid) {
      return errors('off-chain zero-knowledge proof verification is not configured on this service (ZKP_VERIFIER_DID is unset)');
    }
    const { buildAuthorizationRequest } = await loadIden3Auth();
    let built: BuiltAuthorizationRequest;
    try {
      built = buildAuthorizationRequest(scenario.queryConfigurations, {
        callbackUrl: `${this.options.publicBaseUrl ?? ''}${callbackPath(executionId)}`,
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
      return errors(`the authorization request cannot be built with the current configuration: ${err.message}`);
    }
    const { request, pending } = built;
    const results = plan.rules.map((rule, i) => executionResult(head, rule, 'pending', failed([
      `awaiting the wallet's zero-knowledge proof for request ${pending.rules[i]?.requestId}: send it the authorizationRequest`,
    ]), { authorizationRequest: request }));
    // The scenario's webhookUrl as it was at execute: its event goes there when the execution ends.
    const state: PendingState = { ...pending, ...(scenario.webhookUrl && { webhookUrl: scenario.webhookUrl }) };
    return { results, pending: { state, expiresAt: new Date(pending.expiresAt * 1000).toISOString() } };
  }

  /**
   * Ends a pending execution (answer verified, or expired) and queues its webhook, atomically. Answers the execution
   * as it now stands (the API view), or undefined when it was no longer pending.
   */
  private async finish(record: ExecutionRecord, state: 'completed' | 'failed', results: ExecutionResult[], shown = results) {
    const updatedAt = new Date(this.options.now()).toISOString();
    // `shown` (the answer and the webhook) may carry disclosed values; the audit record keeps `results`, without them.
    const ended: ExecutionRecord = { ...record, state, results: shown, updatedAt, pending: null };
    const scenarioUrl = typeof record.pending?.webhookUrl === 'string' ? record.pending.webhookUrl : null;
    const webhook = webhookTarget(this.options.webhook, scenarioUrl) === undefined ? undefined : executionDelivery(ended, shown, scenarioUrl);
    if (!(await this.options.store.completeExecution(record.executionId, { state, results, updatedAt, webhook }))) return undefined;
    this.options.onVerdicts?.(results);
    return executionView(ended, webhook && [webhook]);
  }

  private expire(record: ExecutionRecord) {
    const reason = 'the authorization request expired before the wallet answered';
    return this.finish(record, 'failed', record.results.map((r) => withVerdict(r, 'error', failed([reason]))));
  }

  /** Fails pending executions whose request expired (run periodically). */
  async sweep(): Promise<void> {
    const expired = await this.options.store.expiredPendingExecutions(new Date(this.options.now()).toISOString(), 100);
    for (const record of expired) await this.expire(record);
  }

  /**
   * Runs one proof check at a time in this process, with at most MAX_WAITING_CHECKS waiting (else ProofChecksBusy,
   * a 503). A check is ~50–90 ms of Groth16 CPU on the one thread of zkp/groth16.ts: one at a time, and a
   * short queue, keep a burst of answers from piling up behind it.
   */
  private async checkOneAtATime<T>(check: () => Promise<T>): Promise<T> {
    if (this.checking) {
      if (this.waiting.length >= MAX_WAITING_CHECKS) throw new ProofChecksBusy();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    this.checking = true;
    try {
      return await check();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.checking = false;
    }
  }

  /**
   * The wallet's answer (a JWZ token, or a plain message where allowed) to a pending execution: the cheap refusals
   * first (unknown, not pending, expired, not decodable, another thread or recipient), then the execution's answer
   * budget, which only answers past those checks spend (so garbage posted to the callback URL cannot lock the holder
   * out) and which the database keeps (one budget across instances), then the proof check; a verified answer completes
   * the execution with a verdict per rule. Undefined: no pending OffChainZKP execution has this id (404). A refused
   * answer throws an error carrying its status: ExecutionNotPending, RequestExpired, TooManyAnswers, ProofChecksBusy,
   * or the verifier's ZkpError.
   */
  async answer(executionId: string, token: string): Promise<AnswerOutcome | undefined> {
    const record = await this.options.store.getExecution(executionId);
    if (!record || !record.pending) return undefined;
    if (record.state !== 'pending') {
      throw new ExecutionNotPending(`This execution is ${record.state}: it takes no further answer`);
    }
    const now = this.options.now();
    if (now > record.pending.expiresAt * 1000) {
      await this.expire(record);
      throw new RequestExpired();
    }
    const max = this.options.zkp.answersPerExecution;
    const leftSeconds = Math.max(1, Math.ceil((record.pending.expiresAt * 1000 - now) / 1000));
    const beforeProof = async () => {
      if ((await this.options.store.countAnswer(executionId, max)) === undefined) throw new TooManyAnswers(max, leftSeconds);
    };
    const verifier = await this.loadVerifier();
    // Expiry was refused above at this same instant; the verifier's ZkpError is a 4xx refusal or 503 (a dependency is down).
    const pending = record.pending;
    if (!isPendingAuthorization(pending)) throw new Error(`execution ${executionId} holds no pending authorization`);
    const verification = await this.checkOneAtATime(() => verifier.verify(token, pending, { now, address: record.address, beforeProof }));
    // verify answers one verdict per rule of the pending request, in its order (zkp/verify.ts).
    const verdicts = await bindNullifiers(this.options.store, record, verification.verdicts, now);
    const results = record.results.map((r, i) => {
      const v = verdicts[i];
      if (v === undefined || v.objectId !== r.objectId) throw new Error(`the verifier answered no verdict for rule ${r.objectId}`);
      return withVerdict(r, v.status, { is_valid: v.status === 'valid', reasons: v.reasons });
    });
    const shown = results.map((r, i) => {
      const disclosed = verdicts[i]?.disclosed;
      return disclosed ? { ...r, result: { ...r.result, disclosure: disclosed } } : r;
    });
    const ended = await this.finish(record, 'completed', results, shown);
    if (!ended) throw new ExecutionNotPending('This execution was completed by another answer or expired meanwhile');
    return { ok: true, execution: ended };
  }
}

/** The parse boundary of the OffChainZKP state the store keeps (JSON): execute() stored a PendingAuthorization there. */
function isPendingAuthorization(stored: PendingState): stored is PendingState & PendingAuthorization {
  return typeof stored.verifierDid === 'string' && typeof stored.createdAt === 'number' && Array.isArray(stored.rules) &&
    typeof stored.request === 'object';
}
