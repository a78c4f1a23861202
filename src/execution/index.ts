/** One strategy per scenario type (types.ts), built by its module as registry.ts lists them. */
import type { FieldProblem, TracedRun } from '../engine/index.js';
import type { Scenario, ScenarioType } from '../schemas/scenario.js';
import type { ExecuteInput, ScenarioStrategy, Started } from './types.js';
import { isTracing, resultTrace } from './dry-run.js';

export type { BoundRoute, BoundTimer, ExecuteInput, ScenarioStrategy, Started } from './types.js';
export { attestationFacts, createStrategies, routesOf, timersOf, typeDeclarations } from './registry.js';
export { MAX_WAITING_CHECKS } from './offchain-zkp/callback.js';

export class Executor {
  private readonly byType: ReadonlyMap<ScenarioType, ScenarioStrategy>;

  constructor(strategies: readonly ScenarioStrategy[]) {
    this.byType = new Map(strategies.map((s) => [s.type, s]));
  }

  private strategy(type: ScenarioType): ScenarioStrategy {
    const s = this.byType.get(type);
    if (s === undefined) throw new Error(`no execution strategy for scenario type ${type}`);
    return s;
  }

  execute(input: ExecuteInput): Promise<Started> {
    return this.strategy(input.entry.plan.type).execute(input);
  }

  /** execute's results with each rule's trace, for a caller that records nothing. */
  async dryRun(input: ExecuteInput): Promise<TracedRun> {
    const strategy = this.strategy(input.entry.plan.type);
    if (isTracing(strategy)) return strategy.dryRun(input);
    const { results } = await strategy.execute(input);
    return { results, trace: results.map(resultTrace) };
  }

  /** The type's own create/patch checks. */
  async validate(scenario: Scenario): Promise<FieldProblem[]> {
    return (await this.strategy(scenario.type).validate?.(scenario)) ?? [];
  }
}
