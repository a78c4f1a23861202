/** The answer is judged here; the execution service ends the execution. @iden3/js-iden3-auth (~26 MB) loads only where ZKP_VERIFIER_DID is set. */
import type { FieldProblem } from '../../engine/index.js';
import { executionResult, failed, withVerdict } from '../../engine/result.js';
import type { Scenario } from '../../schemas/scenario.js';
import type { ExecutionRecord, ExecutionRepository, NullifierRepository, PendingState } from '../../store/types.js';
// Not ../zkp/index.js: what needs @iden3/js-iden3-auth comes through loadIden3Auth.
import { createDocumentLoader, type JsonLdLoader } from '../../jsonld/documents.js';
import type { ZkpEnvConfig } from '../../zkp/env.js';
import { isZkpError } from '../../zkp/errors.js';
import { loadIden3Auth } from '../../zkp/lazy.js';
import { validateZkpQueries } from '../../zkp/queries.js';
import type { BuiltAuthorizationRequest, PendingAuthorization } from '../../zkp/request.js';
import { checkZkpQuerySchemas } from '../../zkp/schema-check.js';
import type { StateResolvers } from '../../zkp/state.js';
import type { ZkpVerifier } from '../../zkp/verify.js';
import type { Completion, Evaluation, ExecuteInput, PendingExecutions, ScenarioStrategy } from '../types.js';
import { ProofChecksBusy, TooManyAnswers } from '../errors.js';
import { MAX_WAITING_CHECKS, callbackPath } from './callback.js';
import { bindNullifiers } from './nullifiers.js';
import type { ExecutionView } from '../view.js';

export interface OffChainZkpOptions {
  zkp: ZkpEnvConfig;
  /** Never a request's Host. */
  publicBaseUrl?: string;
  pending: PendingExecutions;
  /** In the database: one answer budget across instances. */
  answers: Pick<ExecutionRepository, 'countAnswer'>;
  nullifiers: NullifierRepository;
  /** Default: ZKP_STATE_RESOLVERS (RPC). */
  stateResolvers?: StateResolvers;
  documentLoader?: JsonLdLoader;
}

export interface AnswerOutcome {
  ok: true;
  execution: ExecutionView;
}

export class OffChainZkp implements ScenarioStrategy {
  readonly type = 'OffChainZKP' as const;
  private readonly documents: JsonLdLoader;
  /** Made once: it reads the verification keys. */
  private verifier?: Promise<ZkpVerifier>;
  private readonly waiting: Array<() => void> = [];
  private checking = false;

  constructor(private readonly options: OffChainZkpOptions) {
    this.documents = options.documentLoader ?? createDocumentLoader();
  }

  get responsesPerMinute(): number {
    return this.options.zkp.responsesPerMinute;
  }

  /** At start, so that a bad setting stops the start. */
  async ready(): Promise<void> {
    if (this.options.zkp.verifierDid) await this.loadVerifier();
  }

  private loadVerifier(): Promise<ZkpVerifier> {
    this.verifier ??= loadIden3Auth().then(({ createZkpVerifier, createRpcStateResolvers }) => {
      const zkp = this.options.zkp;
      return createZkpVerifier({
        stateResolvers: this.options.stateResolvers ?? createRpcStateResolvers(zkp.stateResolvers),
        documentLoader: this.documents,
        circuitsDir: zkp.circuitsDir,
        proofMaxAgeMs: zkp.proofMaxAgeMs,
        clockSkewMs: zkp.clockSkewMs,
        stateTransitionDelayMs: zkp.stateTransitionDelayMs,
        allowPlainMessages: zkp.allowPlainMessages,
      });
    }).catch((err: unknown) => {
      this.verifier = undefined;
      throw err;
    });
    return this.verifier;
  }

  async validate(scenario: Scenario): Promise<FieldProblem[]> {
    const { contexts, defaultCircuitId } = this.options.zkp;
    const problems = validateZkpQueries(scenario.queryConfigurations, { contexts, documents: this.documents, defaultCircuitId });
    if (problems.length > 0) return problems;
    return checkZkpQuerySchemas(scenario.queryConfigurations, { documentLoader: this.documents, contexts });
  }

  async execute({ compiled, address, executionId, at }: ExecuteInput): Promise<Evaluation> {
    const { plan, scenario } = compiled;
    const zkp = this.options.zkp;
    const head = { objectType: plan.type, name: plan.name, scenarioId: plan.scenarioId, address, executionId };
    const errors = (reason: string): Evaluation => ({ results: plan.rules.map((r) => executionResult(head, r, 'error', failed([reason]))) });
    if (!zkp.verifierDid) {
      return errors('off-chain zero-knowledge proof verification is not configured on this service (ZKP_VERIFIER_DID is unset)');
    }
    const { buildAuthorizationRequest } = await loadIden3Auth();
    let built: BuiltAuthorizationRequest;
    try {
      built = buildAuthorizationRequest(scenario.queryConfigurations, {
        callbackUrl: `${this.options.publicBaseUrl ?? ''}${callbackPath(executionId)}`,
        verifierDid: zkp.verifierDid,
        reason: scenario.name,
        message: scenario.message ?? undefined,
        contexts: zkp.contexts,
        allowedIssuers: zkp.allowedIssuers,
        defaultCircuitId: zkp.defaultCircuitId,
        ttlMs: zkp.requestTtlMs,
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
    return { results, pending: { state: { ...pending }, expiresAt: new Date(pending.expiresAt * 1000).toISOString() } };
  }

  sweep(): Promise<void> {
    return this.options.pending.expireDue();
  }

  /** A check is ~50–90 ms of Groth16 CPU on one thread: a short queue keeps a burst of answers from piling up. */
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
   * The answer budget is spent only past the token's cheap checks, so garbage posted to the callback URL cannot lock
   * the holder out. Undefined: no pending execution has this id.
   */
  async answer(executionId: string, token: string): Promise<AnswerOutcome | undefined> {
    const execution = await this.options.pending.complete(executionId, (record, at) => this.judge(record, token, at));
    return execution && { ok: true, execution };
  }

  private async judge(record: ExecutionRecord, token: string, now: number): Promise<Completion> {
    const pending = record.pending;
    if (!pending || !isPendingAuthorization(pending)) throw new Error(`execution ${record.executionId} holds no pending authorization`);
    const max = this.options.zkp.answersPerExecution;
    const leftSeconds = Math.max(1, Math.ceil((pending.expiresAt * 1000 - now) / 1000));
    const beforeProof = async () => {
      if ((await this.options.answers.countAnswer(record.executionId, max)) === undefined) throw new TooManyAnswers(max, leftSeconds);
    };
    const verifier = await this.loadVerifier();
    const verification = await this.checkOneAtATime(() => verifier.verify(token, pending, { now, address: record.address, beforeProof }));
    const verdicts = await bindNullifiers(this.options.nullifiers, record, verification.verdicts, now);
    const results = record.results.map((r, i) => {
      const verdict = verdicts[i];
      if (verdict === undefined || verdict.objectId !== r.objectId) throw new Error(`the verifier gave no verdict for rule ${r.objectId}`);
      return withVerdict(r, verdict.status, { is_valid: verdict.status === 'valid', reasons: verdict.reasons });
    });
    const shown = results.map((r, i) => {
      const disclosed = verdicts[i]?.disclosed;
      return disclosed ? { ...r, result: { ...r.result, disclosure: disclosed } } : r;
    });
    return { results, shown };
  }
}
/** The parse boundary of the state the store keeps. */
function isPendingAuthorization(stored: PendingState): stored is PendingState & PendingAuthorization {
  return typeof stored.verifierDid === 'string' && typeof stored.createdAt === 'number' && Array.isArray(stored.rules) &&
    typeof stored.request === 'object';
}
