import { LRUCache } from 'lru-cache';
import { compilePlan, type Plan, type TypeDeclarations } from '../engine/index.js';
import { contentDigest } from './canonical-json.js';
import type { Scenario } from '../schemas/scenario.js';
import type { ScenarioHead, ScenarioRow } from '../store/types.js';

export interface CachedPlan {
  plan: Plan;
  seq: number;
  revision: number;
  projectId: string | null;
  scenario: Readonly<Scenario>;
  /** What every execution record and attestation of this revision names: made once, with the plan. */
  digest: string;
}

/**
 * Compiled plans keyed by (seq, revision), used only while the store says the scenario is at that revision. Heads are
 * read single-flight per id and scope: another instance's write is seen by every execute starting after the read in
 * flight when it committed.
 */
export class PlanCache {
  private readonly entries: LRUCache<number, CachedPlan>;
  private readonly heads = new Map<string, Map<string, Promise<ScenarioHead[]>>>();
  /** Kept revisions' plans (a shadow's), by `seq:revision`: a kept revision's rules never change. */
  private readonly kept: LRUCache<string, Promise<CachedPlan>>;
  constructor(private readonly types: TypeDeclarations, max = 1000) {
    this.entries = new LRUCache({ max });
    this.kept = new LRUCache({ max: 100 });
  }

  /** Loaded once however many ask at once; a failed load is asked again next time. */
  keptPlan(seq: number, revision: number, load: () => Promise<CachedPlan>): Promise<CachedPlan> {
    const key = `${seq}:${revision}`;
    let plan = this.kept.get(key);
    if (plan === undefined) {
      const loading = load();
      plan = loading;
      this.kept.set(key, loading);
      loading.catch(() => {
        if (this.kept.get(key) === loading) this.kept.delete(key);
      });
    }
    return plan;
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
    const cached = this.entries.get(head.seq);
    if (!cached || cached.revision !== head.revision) return undefined;
    return cached;
  }

  compile(row: ScenarioRow): CachedPlan {
    const compiled = { ...this.prepare(row.id, row.revision, row.input), seq: row.seq };
    this.entries.set(row.seq, compiled);
    return compiled;
  }

  /** Not kept: a scenario given whole (`seq` 0). */
  prepare(id: string, revision: number, scenario: Scenario): CachedPlan {
    return {
      plan: compilePlan(id, revision, scenario, this.types), seq: 0, revision, projectId: scenario.projectId ?? null, scenario,
      digest: contentDigest(scenario),
    };
  }

  forget(id: string, seq?: number): void {
    if (seq !== undefined) this.entries.delete(seq);
    this.heads.delete(id);
  }
}
