import type { FieldProblem } from '../engine/index.js';
import type { Scenario, ScenarioType } from '../schemas/scenario.js';
import type { Evaluation, ExecuteInput, ScenarioStrategy } from './types.js';

export type { BoundRoute, BoundTimer, Completion, Evaluation, ExecuteInput, PendingExecutions, ScenarioStrategy } from './types.js';
export { attestationFacts, createStrategies, routesOf, timersOf, typeDeclarations } from './registry.js';
export { MAX_WAITING_CHECKS } from './offchain-zkp/callback.js';

/** Registered after the execution service is built: an asynchronous type's strategy ends its executions through it. */
export class Executor {
  private readonly byType = new Map<ScenarioType, ScenarioStrategy>();

  register(strategies: readonly ScenarioStrategy[]): void {
    for (const strategy of strategies) this.byType.set(strategy.type, strategy);
  }

  private strategy(type: ScenarioType): ScenarioStrategy {
    const strategy = this.byType.get(type);
    if (strategy === undefined) throw new Error(`no execution strategy for scenario type ${type}`);
    return strategy;
  }

  execute(input: ExecuteInput): Promise<Evaluation> {
    return this.strategy(input.compiled.plan.type).execute(input);
  }

  async validate(scenario: Scenario): Promise<FieldProblem[]> {
    return (await this.strategy(scenario.type).validate?.(scenario)) ?? [];
  }
}
