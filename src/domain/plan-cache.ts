import { LRUCache } from 'lru-cache';
import { compilePlan, type Plan } from '../engine/index.js';
import type { Scenario } from '../schemas/scenario.js';
import type { ScenarioHead, ScenarioRow } from '../store/types.js';

/** A compiled scenario revision and what execute needs of the scenario besides its rules. */
export interface CachedPlan {
  plan: Plan;
  seq: number;
  revision: number;
  projectId: string | null;
  /** The scenario itself (read-only), for evaluators that need more than the compiled rules. */
  scenario: Readonly<Scenario>;
}

/**
 * Compiled plans per scenario, keyed by (seq, revision): a cached plan is used only when the store says the
 * scenario is still at that revision. Bounded, least recently used out.
 *
 * The store's answer (the heads of the scenarios with an id in a token's projects) is read single-flight: executes
 * naming one id with the same projects that start while a read of it is in flight, or in the same turn of the event
 * loop, share that read. A write through this instance is seen at once (forget); a write by another instance is seen
 * by every execute that starts after the read in flight when it committed (one round trip on PostgreSQL, one
 * event-loop turn on SQLite). Under load this turns a read per execute into a read per turn.
 */
export class PlanCache {
  private readonly entries: LRUCache<number, CachedPlan>;
  /** Reads in flight: scenario id -> scope key (the `.key` of http/tenancy.ts scopeOf/narrowScope) -> read. */
  private readonly heads = new Map<string, Map<string, Promise<ScenarioHead[]>>>();
  constructor(max = 1000) {
    this.entries = new LRUCache({ max });
  }

  /** The heads of the scenarios with this id in a scope, from `read` or from the read of them in flight (see above). */
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

  /** The cached entry when it is current, else undefined. */
  current(head: ScenarioHead): CachedPlan | undefined {
    const entry = this.entries.get(head.seq);
    if (!entry || entry.revision !== head.revision) return undefined;
    return entry;
  }

  compile(row: ScenarioRow): CachedPlan {
    const entry: CachedPlan = {
      plan: compilePlan(row.id, row.revision, row.input),
      seq: row.seq,
      revision: row.revision,
      projectId: row.input.projectId ?? null,
      scenario: row.input,
    };
    this.entries.set(row.seq, entry);
    return entry;
  }

  /** After a write of the scenario through this instance: its next execute reads the store again. */
  forget(id: string, seq?: number): void {
    if (seq !== undefined) this.entries.delete(seq);
    this.heads.delete(id);
  }
}
