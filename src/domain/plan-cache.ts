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

/**
 * Compiled plans per scenario, keyed by (seq, revision): a cached plan is used only when the store says the
 * scenario is still at that revision, so a write by any instance is seen at once. Bounded, least recently used out.
 */
export class PlanCache {
  private readonly entries = new Map<string, CachedPlan>();
  constructor(private readonly max = 1000) {}

  /** The cached entry when it is current, else undefined. */
  current(id: string, head: { seq: number; revision: number }): CachedPlan | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.seq !== head.seq || entry.revision !== head.revision) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
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
    this.entries.delete(row.id);
    this.entries.set(row.id, entry);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    return entry;
  }

  forget(id: string): void {
    this.entries.delete(id);
  }
}
