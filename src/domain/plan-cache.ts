import { compilePlan, type Plan } from '../engine/index.js';
import type { ScenarioRow } from '../store/types.js';

/**
 * Compiled plans per scenario, keyed by (seq, revision): a cached plan is used only when the store says the
 * scenario is still at that revision, so a write by any instance is seen at once. Bounded, least recently used out.
 */
export class PlanCache {
  private readonly plans = new Map<string, Plan & { seq: number }>();
  constructor(private readonly max = 1000) {}

  /** The cached plan when it is current, else undefined. */
  current(id: string, head: { seq: number; revision: number }): Plan | undefined {
    const plan = this.plans.get(id);
    if (!plan || plan.seq !== head.seq || plan.revision !== head.revision) return undefined;
    this.plans.delete(id);
    this.plans.set(id, plan);
    return plan;
  }

  compile(row: ScenarioRow): Plan {
    const plan = { ...compilePlan(row.id, row.revision, row.input), seq: row.seq };
    this.plans.delete(row.id);
    this.plans.set(row.id, plan);
    if (this.plans.size > this.max) this.plans.delete(this.plans.keys().next().value as string);
    return plan;
  }

  forget(id: string): void {
    this.plans.delete(id);
  }
}
