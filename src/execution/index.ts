import type { FieldProblem, TracedRun } from '../engine/index.js';
import type { Scenario, ScenarioType } from '../schemas/scenario.js';
import type { Evaluation, ExecuteInput, ScenarioStrategy } from './types.js';
import { isTracing, resultTrace } from './dry-run.js';

export type { BoundRoute, BoundTimer, Completion, Evaluation, ExecuteInput, PendingExecutions, ScenarioStrategy } from './types.js';
export { attestationFacts, createStrategies, routesOf, timersOf, typeDeclarations } from './registry.js';
export { MAX_WAITING_CHECKS } from './offchain-zkp/callback.js';

/** Strategies registered after the execution service they end their executions through. */
export class Executor {
  private readonly byType = new Map<ScenarioType, ScenarioStrategy>();

  constructor(strategies: readonly ScenarioStrategy[] = []) {
    this.register(strategies);
  }

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

  /** execute's results with each rule's trace, for a caller that records nothing. */
  async dryRun(input: ExecuteInput): Promise<TracedRun> {
    const strategy = this.strategy(input.compiled.plan.type);
    if (isTracing(strategy)) return strategy.dryRun(input);
    const { results } = await strategy.execute(input);
    return { results, trace: results.map(resultTrace) };
  }

  async validate(scenario: Scenario): Promise<FieldProblem[]> {
    return (await this.strategy(scenario.type).validate?.(scenario)) ?? [];
  }
}
