/** Executions: resolve a scenario's plan, run it through its type's strategy, build the audit record and commit it. */
import { randomUUID } from 'node:crypto';
import type { CachedPlan, PlanCache } from '../domain/plan-cache.js';
import { MAX_RESULTS_BYTES } from '../engine/result.js';
import type { Executor, Started } from '../execution/index.js';
import { compactResults } from '../execution/registry.js';
import type { Credential } from '../schemas/credential.js';
import type { ExecutionResult } from '../schemas/execution.js';
import type { ExecutionRecord, Store } from '../store/types.js';
import { ScenarioNotFound } from './errors.js';
import { findScenarioIn, type Access } from './scenarios.js';

export interface ExecutionServiceOptions {
  store: Store;
  plans: PlanCache;
  now: () => number;
  executor: Executor;
  /** Told the results of every completed execute (metrics). */
  onVerdicts: (results: ExecutionResult[]) => void;
}

export interface ExecuteCall {
  scenarioId: string;
  access: Access;
  address: string;
  addressChain?: string;
  credentials: Credential[];
  /** Each credential's content digest, same order: asked for once the scenario is found. */
  digests: () => readonly string[];
  tenant: string;
}

interface Ran {
  entry: CachedPlan;
  record: ExecutionRecord;
  results: ExecutionResult[];
  pending: Started['pending'];
}

export interface ExecuteHooks {
  /** As the results are answered: the audit record keeps that very text. */
  serialize(results: ExecutionResult[]): string;
  started?(executionId: string, results: readonly ExecutionResult[]): void;
  /** The scenario is found, nothing has run yet: the route may still refuse the request whole. */
  planned?(entry: CachedPlan): void;
  /** The last step before the commit: the route signs, and adds the webhook row that joins the record's insert. */
  beforeCommit?(ran: Ran): Promise<void>;
}

export class ExecutionService {
  constructor(private readonly options: ExecutionServiceOptions) {}

  /**
   * The scenario's plan, compiled once per revision, from the caller's projects only (404 elsewhere, 409 when the id
   * is in two of them). The cached plan's project is checked again: the cache is keyed by revision, not by caller.
   */
  async plan(scenarioId: string, access: Access): Promise<CachedPlan> {
    const { store, plans } = this.options;
    const heads = await plans.head(scenarioId, access.key, () => store.heads(scenarioId, access.projects));
    const first = heads[0];
    if (first === undefined) throw new ScenarioNotFound(scenarioId);
    let entry = heads.length === 1 ? plans.current(first) : undefined;
    if (!entry) entry = plans.compile(await findScenarioIn(store, access, scenarioId));
    if (!access.sees(entry.projectId)) throw new ScenarioNotFound(scenarioId);
    return entry;
  }

  /** Runs the scenario and commits its audit record; answers the results and their text as recorded. */
  async execute(call: ExecuteCall, hooks: ExecuteHooks): Promise<{ results: ExecutionResult[]; text: string }> {
    const { store, now, executor, onVerdicts } = this.options;
    const entry = await this.plan(call.scenarioId, call.access);
    hooks.planned?.(entry);
    const at = now();
    const executionId = randomUUID();
    const digests = call.digests();
    // A credential over a size limit rejects with a 400 naming it, no room for its first checks with a 429 or 503.
    const started = await executor.execute({
      entry,
      address: call.address,
      addressChain: call.addressChain,
      credentials: call.credentials,
      digests,
      executionId,
      at,
      tenant: call.tenant,
    });
    let { results } = started;
    const { pending } = started;
    hooks.started?.(executionId, results);
    const timestamp = new Date(at).toISOString();
    // Results over MAX_RESULTS_BYTES (many long rules run with many credentials) are compacted first.
    let text = hooks.serialize(results);
    if (text.length > MAX_RESULTS_BYTES / 3 && Buffer.byteLength(text) > MAX_RESULTS_BYTES) { // UTF-8: at most 3 bytes per UTF-16 unit
      results = compactResults(results);
      text = hooks.serialize(results);
    }
    const record: ExecutionRecord = {
      executionId,
      scenarioId: call.scenarioId,
      scenarioRevision: entry.revision,
      projectId: entry.projectId,
      address: call.address,
      state: pending ? 'pending' : 'completed',
      results,
      resultsJson: text,
      pending: pending?.state ?? null,
      expiresAt: pending?.expiresAt ?? null,
      credentials: digested(call.credentials, digests),
      createdAt: timestamp,
      updatedAt: timestamp,
    };
    await hooks.beforeCommit?.({ entry, record, results, pending });
    // No verdict leaves the service unrecorded.
    await store.recordExecution(record);
    if (!pending) onVerdicts(results);
    return { results, text };
  }
}

/** Each credential's id with its digest: ExecuteCall.digests holds one per credential, in order (execute.ts maps the body's). */
function digested(credentials: readonly { id: string }[], digests: readonly string[]): { id: string; sha256: string }[] {
  if (digests.length !== credentials.length) throw new TypeError(`${digests.length} digests for ${credentials.length} credentials`);
  return digests.map((sha256, i) => ({ id: credentials[i]?.id ?? '', sha256 }));
}
