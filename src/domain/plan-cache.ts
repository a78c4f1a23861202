import { LRUCache } from 'lru-cache';
import { compilePlan, type Plan, type TypeDeclarations } from '../engine/index.js';
import type { Scenario } from '../schemas/scenario.js';
import type { ScenarioHead, ScenarioRow } from '../store/types.js';

export interface CachedPlan {
  plan: Plan;
  seq: number;
  revision: number;
  projectId: string | null;
  scenario: Readonly<Scenario>;
}

/**
 * Compiled plans keyed by (seq, revision), used only while the store says the scenario is at that revision; LRU.
 * The store's answer is read single-flight: executes of one id and scope that start while a read is in flight share
 * it. A write here is seen at once (forget); another instance's by every execute starting after the read in flight
 * when it committed.
 */
export class PlanCache {
  private readonly entries: LRUCache<number, CachedPlan>;
  /** scenario id -> scope key (http/tenancy.ts) -> read. */
  private readonly heads = new Map<string, Map<string, Promise<ScenarioHead[]>>>();
  /**
   * `types`: the registered scenario types' declarations (execution/registry.ts): each type's compile step, and the
   * policies compiled rules are checked against.
   */
  constructor(private readonly types: TypeDeclarations, max = 1000) {
    this.entries = new LRUCache({ max });
  }

  head(id: string, scope: string, read: () => Promise<ScenarioHead[]>): Promise<ScenarioHead[]> {
    let byScope = this.heads.get(id);
    let pending = byScope?.get(scope);
    if (pending === undefined) {
      const p = read();
      pending = p;
      if (byScope === undefined) this.heads.set(id, (byScope = new Map()));
      byScope.set(scope, p);
      const done = () => {
        setImmediate(() => {
          const now = this.heads.get(id);
          if (now?.get(scope) !== p) return;
          now.delete(scope);
          if (now.size === 0) this.heads.delete(id);
        });
      };
      p.then(done, done);
    }
    return pending;
  }

  current(head: ScenarioHead): CachedPlan | undefined {
    const entry = this.entries.get(head.seq);
    if (!entry || entry.revision !== head.revision) return undefined;
    return entry;
  }

  compile(row: ScenarioRow): CachedPlan {
    const compiled = { ...this.prepare(row.id, row.revision, row.input), seq: row.seq };
    this.entries.set(row.seq, compiled);
    return compiled;
  }

  /** A scenario's plan, not kept (a scenario given whole, as a dry run evaluates it; `seq` 0). */
  prepare(id: string, revision: number, scenario: Scenario): CachedPlan {
    return { plan: compilePlan(id, revision, scenario, this.types), seq: 0, revision, projectId: scenario.projectId ?? null, scenario };
  }

  forget(id: string, seq?: number): void {
    if (seq !== undefined) this.entries.delete(seq);
    this.heads.delete(id);
  }
}
