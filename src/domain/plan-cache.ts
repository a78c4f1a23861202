import { LruCache } from './lru.js';
import { compilePlan, type Plan } from '../engine/index.js';
import type { Scenario } from '../schemas/scenario.js';
import type { ScenarioRow } from '../store/types.js';

/** A compiled scenario revision and what execute needs of the scenario besides its rules. */
export interface CachedPlan {
  plan: Plan;
  seq: number;
  revision: number;
  projectId: string | null;
  /** The scenario itself (read-only), for evaluators that need more than the compiled rules. */
  scenario: Readonly<Scenario>;
}

export interface Head {
  seq: number;
  revision: number;
}

/**
 * Compiled plans per scenario, keyed by (seq, revision): a cached plan is used only when the store says the
 * scenario is still at that revision. Bounded, least recently used out.
 *
 * The store's answer (the head) is read single-flight: executes of one scenario that start while a read of its head
 * is in flight, or in the same turn of the event loop, share that read. A write through this instance is seen at once
 * (forget); a write by another instance is seen by every execute that starts after the read in flight when it
 * committed (one round trip on PostgreSQL, one event-loop turn on SQLite). Under load this turns a read per execute
 * into a read per turn.
 */
export class PlanCache {
  private readonly entries: LruCache<string, CachedPlan>;
  private readonly heads = new Map<string, Promise<Head | undefined>>();
  constructor(max = 1000) {
    this.entries = new LruCache(max);
  }

  /** The scenario's head, from `read` or from the read of it in flight (see above). */
  head(id: string, read: (id: string) => Promise<Head | undefined>): Promise<Head | undefined> {
    let pending = this.heads.get(id);
    if (pending === undefined) {
      const p = read(id);
      pending = p;
      this.heads.set(id, p);
      const done = () => {
        setImmediate(() => {
          if (this.heads.get(id) === p) this.heads.delete(id);
        });
      };
      p.then(done, done);
    }
    return pending;
  }

  /** The cached entry when it is current, else undefined. */
  current(id: string, head: { seq: number; revision: number }): CachedPlan | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.seq !== head.seq || entry.revision !== head.revision) return undefined;
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
    this.entries.set(row.id, entry);
    return entry;
  }

  /** After a write of the scenario through this instance: its next execute reads the store again. */
  forget(id: string): void {
    this.entries.delete(id);
    this.heads.delete(id);
  }
}
