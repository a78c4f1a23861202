/** Shadow runs: a proposed revision evaluated beside every live execute, off the answer's path, its differences counted. */
import type { PlanCache, CachedPlan } from '../domain/plan-cache.js';
import { verdictOf } from '../domain/verdict.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { Scenario } from '../schemas/scenario.js';
import type {
  ScenarioRepository, ScenarioRevisionRepository, ShadowComparison, ShadowRepository, ShadowRule, ShadowRunPage, ShadowSkip,
} from '../store/types.js';
import type { Access } from './access.js';
import { NotProposed, RevisionNotFound, ShadowBusy, ShadowNotFound, ShadowUnsupported } from './errors.js';
import type { ShadowJob } from './executions.js';
import { reaches } from './revisions.js';
import { findScenarioIn } from './scenarios.js';

/** Evaluations at once: each spans several turns of the event loop, so 4 fell behind a saturated server (bench: 42% skipped). */
const CONCURRENCY = 64;
const FLUSH_EVERY_MS = 100;
const FLUSH_BATCH = 256;
/** How long close() waits for running evaluations before writing what was compared (a hung one holds no shutdown). */
const CLOSE_WAIT_MS = 5_000;

type ShadowOutcome = 'compared' | 'flipped' | 'undecided' | 'skipped' | 'error';

export interface ShadowRunnerOptions {
  store: ShadowRepository & Pick<ScenarioRevisionRepository, 'getRevision'>;
  plans: PlanCache;
  /** ExecutionLifecycle.shadowResults. */
  evaluate: (compiled: CachedPlan, job: ShadowJob) => Promise<ExecutionResult[]>;
  /** Pending evaluations beyond which a comparison is skipped (and counted). */
  limit: number;
  /** Pending evaluations' body bytes (ShadowJob.bytes) beyond which a comparison is skipped (and counted). */
  maxBytes: number;
  counted: (outcome: ShadowOutcome) => void;
  failed: (err: unknown, context: { scenarioId?: string; revision?: number }) => void;
  /** CLOSE_WAIT_MS unless given. */
  closeWaitMs?: number;
}

/**
 * Rules matched by id, the live revision's order first; a rule in one revision only differs. A shadow verdict of
 * `error` beside a live decision says nothing of what the revision would decide: undecided, not flipped.
 */
function compareRules(live: ShadowJob['live'], shadow: readonly ExecutionResult[]): { rules: ShadowRule[]; outcome: 'compared' | 'flipped' | 'undecided' } {
  const shadowed = new Map(shadow.map((r) => [r.objectId, r.result.status]));
  const rules: ShadowRule[] = live.map(({ id, status }) => ({ id, live: status, shadow: shadowed.get(id) ?? null }));
  const seen = new Set(live.map((r) => r.id));
  for (const [id, status] of shadowed) if (!seen.has(id)) rules.push({ id, live: null, shadow: status });
  const statuses = shadow.map((r) => ({ status: r.result.status }));
  const [was, would] = [verdictOf(live), verdictOf(statuses)];
  return { rules, outcome: was === would ? 'compared' : would === 'error' ? 'undecided' : 'flipped' };
}

/**
 * Per process: a bounded queue of evaluations (credentials held until evaluated, then dropped) and batched writes of
 * their comparisons. Closing drops what waits (counted skipped) and writes what was compared.
 */
export class ShadowRunner {
  private queue: ShadowJob[] = [];
  private running = 0;
  /** Of the jobs queued and running. */
  private bytes = 0;
  private comparisons: ShadowComparison[] = [];
  private skips = new Map<string, ShadowSkip>();
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  /** close() has written its last batch: what finishes later is dropped, never written to a closed store. */
  private done = false;
  private idle: (() => void) | undefined;

  constructor(private readonly options: ShadowRunnerOptions) {}

  offer(job: ShadowJob): void {
    // After close: counted in the metric only, nothing left to flush it to a closed store.
    if (this.closed) {
      this.options.counted('skipped');
      return;
    }
    const { limit, maxBytes } = this.options;
    if (this.queue.length + this.running >= limit || this.bytes + job.bytes > maxBytes || maxBytes === 0) {
      this.skip(job);
      return;
    }
    this.bytes += job.bytes;
    this.queue.push(job);
    this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      this.bytes -= job.bytes;
      this.skip(job);
    }
    if (this.running > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => (this.idle = resolve)),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, this.options.closeWaitMs ?? CLOSE_WAIT_MS).unref())),
      ]);
      clearTimeout(timer);
    }
    await this.flush();
    this.done = true;
  }

  private skip(job: ShadowJob): void {
    this.options.counted('skipped');
    const key = `${job.incarnation}:${job.revision}`;
    const skip = this.skips.get(key);
    if (skip) skip.count++;
    else this.skips.set(key, { incarnation: job.incarnation, revision: job.revision, count: 1 });
    this.scheduleFlush();
  }

  private pump(): void {
    while (this.running < CONCURRENCY && this.queue.length > 0) {
      const job = this.queue.shift() as ShadowJob;
      this.running++;
      // After this turn: the live answer is sent first.
      setImmediate(() => {
        this.run(job).catch(() => {}); // run catches its own
      });
    }
  }

  private async run(job: ShadowJob): Promise<void> {
    try {
      const compiled = await this.options.plans.keptPlan(job.incarnation, job.revision, () => this.load(job));
      const { rules, outcome } = compareRules(job.live, await this.options.evaluate(compiled, job));
      this.options.counted(outcome);
      const { incarnation, revision, executionId, createdAt } = job;
      this.comparisons.push({ incarnation, revision, executionId, createdAt, flipped: outcome === 'flipped', undecided: outcome === 'undecided', rules });
      this.scheduleFlush();
    } catch (err) {
      this.options.counted('error');
      this.options.failed(err, { scenarioId: job.scenarioId, revision: job.revision });
    } finally {
      this.bytes -= job.bytes;
      this.running--;
      if (this.running === 0 && this.closed) this.idle?.();
      if (!this.closed) this.pump();
    }
  }

  private async load(job: ShadowJob): Promise<CachedPlan> {
    const kept = await this.options.store.getRevision(job.incarnation, job.revision);
    if (!kept) throw new Error(`revision ${job.revision} of scenario ${job.scenarioId} is no longer kept`);
    const { input }: { input: Scenario } = JSON.parse(kept.content);
    return this.options.plans.prepare(job.scenarioId, kept.revision, input);
  }

  private scheduleFlush(): void {
    if (this.done) return;
    const flush = () => {
      this.flush().catch(() => {}); // flush counts and logs its own failures
    };
    if (this.comparisons.length >= FLUSH_BATCH) flush();
    else this.timer ??= setTimeout(flush, FLUSH_EVERY_MS).unref();
  }

  /** One write at a time; a failed batch is lost (logged by the caller's store observer), never retried forever. */
  private flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const comparisons = this.comparisons.splice(0);
    const skips = [...this.skips.values()];
    this.skips.clear();
    if (comparisons.length === 0 && skips.length === 0) return this.writing;
    this.writing = this.writing.then(() => this.options.store.recordComparisons(comparisons, skips)).catch((err: unknown) => {
      this.options.counted('error');
      this.options.failed(err, {});
    });
    return this.writing;
  }
}

/** What the shadow routes answer. */
export type ShadowState = ShadowRunPage & { scenarioId: string; revision: number };

export class ShadowService {
  constructor(private readonly store: ScenarioRepository & ScenarioRevisionRepository & ShadowRepository, private readonly now: () => number) {}

  private async revision(access: Access, id: string, n: number) {
    const live = await findScenarioIn(this.store, access, id);
    const revision = await this.store.getRevision(live.seq, n);
    if (!revision || revision.scenarioId !== id || !reaches(access, revision.projectId)) throw new RevisionNotFound(id, n);
    return { live, revision };
  }

  async start(access: Access, by: string | null, id: string, n: number): Promise<ShadowState> {
    const { live, revision } = await this.revision(access, id, n);
    if (revision.state !== 'proposed') throw new NotProposed(id, n, revision.state);
    const { input }: { input: Scenario } = JSON.parse(revision.content);
    if (live.input.type === 'OffChainZKP' || input.type === 'OffChainZKP') {
      throw new ShadowUnsupported(id);
    }
    const outcome = await this.store.startShadow(live.seq, n, by, new Date(this.now()).toISOString());
    if (outcome === 'busy') {
      const heads = await this.store.heads(id, access.projects);
      throw new ShadowBusy(id, heads.find((h) => h.seq === live.seq)?.shadow ?? 0);
    }
    if (outcome === 'not-proposed') throw new NotProposed(id, n, (await this.revision(access, id, n)).revision.state);
    if (outcome === 'gone') throw new RevisionNotFound(id, n);
    return this.state(access, id, n, 20);
  }

  async stop(access: Access, id: string, n: number): Promise<ShadowState> {
    const { live } = await this.revision(access, id, n);
    if (!(await this.store.hasShadowRun(live.seq, n))) throw new ShadowNotFound(id, n);
    await this.store.stopShadow(live.seq, n, new Date(this.now()).toISOString());
    return this.state(access, id, n, 20);
  }

  /** 404 for a revision never shadowed. */
  async state(access: Access, id: string, n: number, limit: number, after?: number): Promise<ShadowState> {
    const { live } = await this.revision(access, id, n);
    const run = await this.store.shadowRun(live.seq, n, limit, after);
    if (!run) throw new ShadowNotFound(id, n);
    return { scenarioId: id, revision: n, ...run };
  }
}
