/** The execution lifecycle of every scenario type: strategies decide, this service writes records, webhooks and attestations. */
import type { Attestor } from '../domain/attestation.js';
import { contentDigest } from '../domain/canonical-json.js';
import type { CachedPlan, PlanCache } from '../domain/plan-cache.js';
import { timeOrderedId } from '../domain/ids.js';
import { executionDelivery, webhookTarget, type WebhookConfig } from '../domain/webhooks.js';
import { MAX_RESULTS_BYTES, failed, withVerdict } from '../engine/result.js';
import { ExecutionNotFound, ExecutionNotPending, RequestExpired } from '../execution/errors.js';
import type { Completion, Evaluation, Executor, PendingExecutions } from '../execution/index.js';
import { compactResults } from '../execution/registry.js';
import { attestedExecution, executionView, type ExecutionView } from '../execution/view.js';
import type { Credential } from '../schemas/credential.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { Scenario, ScenarioType } from '../schemas/scenario.js';
import type { RuleTrace } from '../schemas/trace.js';
import type {
  ExecutionFilter, ExecutionPage, ExecutionRecord, ExecutionRepository, ScenarioRepository, ExecutionDelivery, SummaryBucket, WebhookOutbox,
} from '../store/types.js';
import type { Access } from './access.js';
import { refuseEip712, signAttestations, type AttestRequest, type Attestations } from './attestations.js';
import { ForbiddenProject, ScenarioChanged, ScenarioNotFound, ScenarioRecreated, WebhookDeliveryNotFound } from './errors.js';
import type { RevisionRan, RevisionService } from './revisions.js';
import { findScenarioIn } from './scenarios.js';

export type { ExecutionFilter, SummaryBucket };

export const SUMMARY_BUCKETS_MAX = 1000;
/** A scenario has at most 256 rules a revision; the period may span revisions. */
const SUMMARY_RULES_MAX = 256;
const BUCKET_MS: Record<SummaryBucket, number> = { hour: 3_600_000, day: 86_400_000 };

type VerdictCounts = { passed: number; failed: number; error: number; pending: number };
export interface ExecutionSummary {
  from: string;
  to: string;
  bucket: SummaryBucket;
  totals: VerdictCounts;
  buckets: Array<{ start: string } & VerdictCounts>;
  rules: Array<{ id: string; notValid: number; error: number }>;
}

/** How many UTC buckets [from, to) touches. */
export function bucketCount(from: string, to: string, bucket: SummaryBucket): number {
  const size = BUCKET_MS[bucket];
  return Math.ceil((Date.parse(to) - Math.floor(Date.parse(from) / size) * size) / size);
}

function bucketStarts(from: string, to: string, bucket: SummaryBucket): string[] {
  const size = BUCKET_MS[bucket];
  const first = Math.floor(Date.parse(from) / size) * size;
  return Array.from({ length: Math.min(bucketCount(from, to, bucket), SUMMARY_BUCKETS_MAX) }, (_, k) => new Date(first + k * size).toISOString());
}

export interface ExecutionLifecycleOptions {
  scenarios: ScenarioRepository;
  executions: ExecutionRepository;
  outbox: WebhookOutbox;
  plans: PlanCache;
  now: () => number;
  executor: Executor;
  onVerdicts: (results: readonly ExecutionResult[]) => void;
  webhook?: WebhookConfig;
  attestor: Attestor;
  attestationFacts: (type: ScenarioType) => { holderBound: boolean; credentialsVerified: boolean };
  revisions: Pick<RevisionService, 'ranBy' | 'get'>;
  /** Told of each execution of a scenario with a revision in shadow, once recorded. */
  shadows?: { offer(job: ShadowJob): void };
}

/** What a shadowed revision is evaluated with: the live execution's inputs, held in memory only until then. */
export interface ShadowJob {
  scenarioId: string;
  incarnation: number;
  revision: number;
  executionId: string;
  at: number;
  createdAt: string;
  subject: Omit<Subject, 'digests'> & { digests: readonly string[] };
  /** The execute body's bytes: what its parsed credentials, held until evaluated, are bounded by. */
  bytes: number;
  live: readonly { id: string; status: ExecutionResult['result']['status'] }[];
}

export interface Subject {
  address: string;
  addressChain?: string;
  credentials: Credential[];
  /** Asked for once the scenario is found. */
  digests: () => readonly string[];
  tenant: string;
}

export interface ExecuteCall extends Subject {
  scenarioId: string;
  access: Access;
  attest?: AttestRequest;
  /** The body's length in bytes, for the shadow queue's bound (0 when not known). */
  bodyBytes?: number;
}

export interface ExecuteHooks {
  /** The audit record keeps the very text the caller receives. */
  serialize(results: ExecutionResult[]): string;
  evaluated?(executionId: string, results: readonly ExecutionResult[]): void;
}

export interface Executed {
  results: ExecutionResult[];
  text: string;
  attestations?: Attestations;
}

export type EvaluateCall = Subject & { access: Access } & (
  | { scenarioId: string; revision?: number }
  | { scenario: Scenario; scenarioId: string; revision: number }
);

export interface DryRun {
  executionId: string;
  revision: number;
  results: ExecutionResult[];
  trace: RuleTrace[];
}

const EXPIRED = 'the authorization request expired before the wallet answered';

export class ExecutionLifecycle implements PendingExecutions {
  constructor(private readonly options: ExecutionLifecycleOptions) {}

  async plan(scenarioId: string, access: Access): Promise<CachedPlan> {
    return (await this.located(scenarioId, access)).compiled;
  }

  /** The cached plan's project is checked again: the cache is keyed by revision, not by caller. */
  private async located(scenarioId: string, access: Access): Promise<{ compiled: CachedPlan; shadow: number | null }> {
    const { scenarios, plans } = this.options;
    const heads = await plans.head(scenarioId, access.key, () => scenarios.heads(scenarioId, access.projects));
    const first = heads[0];
    if (first === undefined) throw new ScenarioNotFound(scenarioId);
    let compiled = heads.length === 1 ? plans.current(first) : undefined;
    compiled ??= plans.compile(await findScenarioIn(scenarios, access, scenarioId));
    if (!access.sees(compiled.projectId)) throw new ScenarioNotFound(scenarioId);
    // The head of the plan compiled: a scenario deleted and created again between the two reads has another.
    const { seq } = compiled;
    return { compiled, shadow: heads.find((h) => h.seq === seq)?.shadow ?? null };
  }

  async execute(call: ExecuteCall, hooks: ExecuteHooks): Promise<Executed> {
    const { executions, now, attestor, attestationFacts, onVerdicts } = this.options;
    const { compiled, shadow } = await this.located(call.scenarioId, call.access);
    const facts = attestationFacts(compiled.scenario.type);
    if (call.attest?.eip712) refuseEip712(facts); // before any work
    const run = await this.run(compiled, call, hooks.serialize);
    hooks.evaluated?.(run.executionId, run.results);
    const { results, pending } = run;
    const timestamp = new Date(run.at).toISOString();
    const webhookUrl = compiled.scenario.webhookUrl ?? null;
    const scenarioDigest = compiled.digest;
    const record: ExecutionRecord & { scenarioDigest: string } = {
      executionId: run.executionId,
      scenarioId: call.scenarioId,
      scenarioRevision: compiled.revision,
      projectId: compiled.projectId,
      address: call.address,
      state: pending ? 'pending' : 'completed',
      results,
      resultsJson: run.text,
      pending: pending ? { ...pending.state, ...(webhookUrl !== null && { webhookUrl }) } : null,
      expiresAt: pending?.expiresAt ?? null,
      credentials: digested(call.credentials, run.digests),
      createdAt: timestamp,
      updatedAt: timestamp,
      scenarioDigest,
      holderBound: facts.holderBound,
    };
    // Signed first: the webhook written with the record carries what the caller receives.
    const attestations = call.attest && await signAttestations(attestor, call.attest, attestedExecution(record), now());
    if (!pending) record.webhook = this.delivery(record, results, webhookUrl, attestations);
    await executions.recordExecution(record);
    if (!pending) onVerdicts(results);
    if (shadow !== null && !pending) {
      const { address, addressChain, credentials, tenant } = call;
      this.options.shadows?.offer({
        scenarioId: call.scenarioId, incarnation: compiled.seq, revision: shadow, executionId: run.executionId, at: run.at, createdAt: timestamp,
        subject: { address, addressChain, credentials, tenant, digests: run.digests }, bytes: call.bodyBytes ?? 0,
        live: results.map((r) => ({ id: r.objectId, status: r.result.status })),
      });
    }
    return { results, text: run.text, ...(attestations && { attestations }) };
  }

  /** What execute would give, storing nothing. A scenario given whole must have passed ScenarioService's validation. */
  async evaluate(call: EvaluateCall): Promise<Evaluation & { executionId: string }> {
    const { executionId, results, pending } = await this.run(await this.compiledFor(call), call, JSON.stringify);
    return { executionId, results, ...(pending && { pending }) };
  }

  /** evaluate's results with each rule's trace. */
  async dryRun(call: EvaluateCall): Promise<DryRun> {
    const compiled = await this.compiledFor(call);
    const { executionId, results, trace } = await this.run(compiled, call, JSON.stringify, true);
    return { executionId, revision: compiled.revision, results, trace: trace ?? [] };
  }

  /** A stored scenario's live revision, or its kept `revision`, or a scenario given whole. */
  private async compiledFor(call: EvaluateCall): Promise<CachedPlan> {
    if (!('scenario' in call)) {
      if (call.revision === undefined) return this.plan(call.scenarioId, call.access);
      const kept = await this.options.revisions.get(call.access, call.scenarioId, call.revision);
      const content: { input: Scenario } = JSON.parse(kept.content);
      return this.options.plans.prepare(call.scenarioId, kept.revision, content.input);
    }
    if (!call.access.sees(call.scenario.projectId)) throw new ForbiddenProject('This token does not hold the scenario\'s project');
    return this.options.plans.prepare(call.scenarioId, call.revision, call.scenario);
  }

  /**
   * A shadowed revision's results for a live execution's inputs: the same executor and verification, nothing kept.
   * Verification from what the live run left known only: a shadow never does cold work or spends the tenant's budget.
   */
  async shadowResults(compiled: CachedPlan, job: ShadowJob): Promise<ExecutionResult[]> {
    const input = inputOf(compiled, job.subject, job.subject.digests, job.executionId, job.at);
    return (await this.options.executor.execute({ ...input, warmOnly: true })).results;
  }

  private async run(compiled: CachedPlan, subject: Subject, serialize: (results: ExecutionResult[]) => string, traced = false) {
    const { executor } = this.options;
    const at = this.options.now();
    const executionId = timeOrderedId();
    const digests = subject.digests();
    const input = inputOf(compiled, subject, digests, executionId, at);
    const evaluation: Evaluation & { trace?: RuleTrace[] } = traced ? await executor.dryRun(input) : await executor.execute(input);
    let { results } = evaluation;
    let text = serialize(results);
    // At most 3 UTF-8 bytes per UTF-16 unit: most texts skip the byte count.
    if (text.length > MAX_RESULTS_BYTES / 3 && Buffer.byteLength(text) > MAX_RESULTS_BYTES) {
      results = compactResults(results);
      text = serialize(results);
    }
    return { at, executionId, digests, results, text, pending: evaluation.pending, trace: evaluation.trace };
  }

  private delivery(record: ExecutionRecord, shown: readonly ExecutionResult[], url: string | null, attestations?: Attestations) {
    if (webhookTarget(this.options.webhook, url) === undefined) return undefined;
    const attestation = attestations && {
      ...(attestations.jws !== undefined && { jws: attestations.jws }),
      ...(attestations.eip712 !== undefined && { eip712: attestations.eip712 }),
    };
    return executionDelivery(record, shown, url, { attestation });
  }

  async complete(executionId: string, judge: (record: ExecutionRecord, at: number) => Promise<Completion>): Promise<ExecutionView | undefined> {
    const record = await this.options.executions.getExecution(executionId);
    if (!record?.pending) return undefined;
    if (record.state !== 'pending') throw new ExecutionNotPending(`This execution is ${record.state}: it takes no further answer`);
    const at = this.options.now();
    if (at > record.pending.expiresAt * 1000) {
      await this.expire(record);
      throw new RequestExpired();
    }
    const { results, shown } = await judge(record, at);
    const ended = await this.finish(record, 'completed', results, shown);
    if (!ended) throw new ExecutionNotPending('This execution was completed by another answer or expired meanwhile');
    return ended;
  }

  async expireDue(): Promise<void> {
    const expired = await this.options.executions.expiredPendingExecutions(new Date(this.options.now()).toISOString(), 100);
    for (const record of expired) await this.expire(record);
  }

  private expire(record: ExecutionRecord) {
    return this.finish(record, 'failed', record.results.map((r) => withVerdict(r, 'error', failed([EXPIRED]))));
  }

  /** Atomic; undefined when no longer pending. `shown` may carry disclosed values, which the audit record never keeps. */
  private async finish(record: ExecutionRecord, state: 'completed' | 'failed', results: ExecutionResult[], shown = results) {
    const updatedAt = new Date(this.options.now()).toISOString();
    const ended: ExecutionRecord = { ...record, state, results: shown, updatedAt, pending: null };
    const url = typeof record.pending?.webhookUrl === 'string' ? record.pending.webhookUrl : null;
    const webhook = this.delivery(ended, shown, url);
    if (!(await this.options.executions.completeExecution(record.executionId, { state, results, updatedAt, webhook }))) return undefined;
    this.options.onVerdicts(results);
    return executionView(ended, webhook && [webhook]);
  }

  /** With the link to the revision it ran; `withRules`: that revision's rules too. */
  async find(access: Access, executionId: string, withRules = false): Promise<ExecutionView & RevisionRan> {
    const record = await this.recorded(access, executionId);
    const [webhooks, ran] = await Promise.all([this.options.outbox.webhooksOf(executionId), this.options.revisions.ranBy(record, withRules)]);
    return { ...executionView(record, webhooks), ...ran };
  }

  /** Whoever holds the id now: a deleted scenario's history stays its project's. */
  list(access: Access, scenarioId: string, limit: number, before?: number, filter: ExecutionFilter = {}): Promise<ExecutionPage> {
    return this.options.executions.listExecutions(scenarioId, limit, before, access.projects, filter);
  }

  /**
   * Verdicts per bucket of [from, to) and each rule's failures, counted by the store; `from` is rounded down to its
   * bucket. Undefined when the period holds more than `max` executions.
   */
  async summary(
    access: Access, scenarioId: string, filter: ExecutionFilter & { from: string; to: string }, bucket: SummaryBucket, max?: number,
  ): Promise<ExecutionSummary | undefined> {
    const starts = bucketStarts(filter.from, filter.to, bucket);
    const counts = await this.options.executions.countExecutions(scenarioId, filter, bucket, access.projects, max);
    if (counts === undefined) return undefined;
    const byStart = new Map(starts.map((start) => [start, { start, passed: 0, failed: 0, error: 0, pending: 0 }]));
    const totals = { passed: 0, failed: 0, error: 0, pending: 0 };
    for (const { bucket: key, verdict, n } of counts.buckets) {
      const row = byStart.get(bucket === 'hour' ? `${key}:00:00.000Z` : `${key}T00:00:00.000Z`);
      if (row === undefined || !(verdict in totals)) continue;
      row[verdict] += n;
      totals[verdict] += n;
    }
    const rules = new Map<string, { id: string; notValid: number; error: number }>();
    for (const { id, status, n } of counts.rules) {
      const rule = rules.get(id) ?? { id, notValid: 0, error: 0 };
      rule[status === 'not-valid' ? 'notValid' : 'error'] += n;
      rules.set(id, rule);
    }
    const ranked = [...rules.values()].sort((a, b) => b.notValid - a.notValid || b.error - a.error || a.id.localeCompare(b.id));
    return { from: filter.from, to: filter.to, bucket, totals, buckets: [...byStart.values()], rules: ranked.slice(0, SUMMARY_RULES_MAX) };
  }

  async replayWebhook(access: Access, executionId: string, deliveryId: string): Promise<ExecutionDelivery> {
    await this.recorded(access, executionId);
    const delivery = await this.options.outbox.replayWebhook(executionId, deliveryId, new Date(this.options.now()).toISOString());
    if (!delivery) throw new WebhookDeliveryNotFound(executionId, deliveryId);
    return delivery;
  }

  async attest(access: Access, executionId: string, asked: AttestRequest): Promise<Attestations> {
    const record = await this.recorded(access, executionId);
    const scenarioDigest = await this.revisionDigest(record);
    return signAttestations(this.options.attestor, asked, attestedExecution({ ...record, scenarioDigest }), this.options.now());
  }

  private async recorded(access: Access, executionId: string): Promise<ExecutionRecord> {
    const record = await this.options.executions.getExecution(executionId);
    if (!record || !access.sees(record.projectId)) throw new ExecutionNotFound(executionId);
    return record;
  }

  /**
   * A scenario deleted and created again, or moved in, at the same revision is another one unless its content is the
   * same; a record without a digest compares times.
   */
  private async revisionDigest(record: ExecutionRecord): Promise<string> {
    const rows = await this.options.scenarios.find(record.scenarioId, [record.projectId ?? '']);
    const row = rows.find((r) => r.revision === record.scenarioRevision);
    if (!row) throw new ScenarioChanged(JSON.stringify(record.scenarioId), record.scenarioRevision);
    const digest = contentDigest(row.input);
    const recreated = record.scenarioDigest === undefined
      ? Date.parse(row.createdAt) > Date.parse(record.createdAt)
      : record.scenarioDigest !== digest;
    if (recreated) throw new ScenarioRecreated(JSON.stringify(record.scenarioId));
    return digest;
  }
}

function inputOf(compiled: CachedPlan, subject: Omit<Subject, 'digests'>, digests: readonly string[], executionId: string, at: number) {
  const { address, addressChain, credentials, tenant } = subject;
  return { compiled, address, addressChain, credentials, digests, executionId, at, tenant };
}

function digested(credentials: readonly { id: string }[], digests: readonly string[]): { id: string; sha256: string }[] {
  if (digests.length !== credentials.length) throw new TypeError(`${digests.length} digests for ${credentials.length} credentials`);
  return digests.map((sha256, i) => ({ id: credentials[i]?.id ?? '', sha256 }));
}
