/**
 * Execution: one strategy per scenario type behind one interface (types.ts), each built by its type's module
 * (<type>/index.ts) as registry.ts lists them. ChallengeQuery = credential trust + the rule engine; OnChainZKP = the
 * verifier contract read from the chain; OffChainZKP = a zero-knowledge proof request, the wallet's answer, expiry
 * and webhooks. Every result is built by engine/result.ts.
 */
import type { FieldProblem } from '../engine/index.js';
import type { Scenario, ScenarioType } from '../schemas/scenario.js';
import type { ExecuteInput, ScenarioStrategy, Started } from './types.js';

export type { BoundRoute, BoundTimer, ExecuteInput, ScenarioStrategy, Started } from './types.js';
export { attestationFacts, createStrategies, routesOf, timersOf, typeDeclarations } from './registry.js';
export { MAX_WAITING_CHECKS } from './offchain-zkp/callback.js';

/** The strategies of every scenario type, by type. */
export class Executor {
  private readonly byType: ReadonlyMap<ScenarioType, ScenarioStrategy>;

  constructor(strategies: readonly ScenarioStrategy[]) {
    this.byType = new Map(strategies.map((s) => [s.type, s]));
  }

  private strategy(type: ScenarioType): ScenarioStrategy {
    const s = this.byType.get(type);
    if (s === undefined) throw new Error(`no execution strategy for scenario type ${type}`); // the schema allows only known types
    return s;
  }

  execute(input: ExecuteInput): Promise<Started> {
    return this.strategy(input.entry.plan.type).execute(input);
  }

  /** The scenario type's own create/patch checks (none for most types). */
  async validate(scenario: Scenario): Promise<FieldProblem[]> {
    return (await this.strategy(scenario.type).validate?.(scenario)) ?? [];
  }
}
