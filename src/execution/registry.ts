/**
 * The `satisfies` below fails to compile unless the registry holds exactly the schema's ScenarioTypes. The schema's
 * list is not derived from here: the modules are typed against the schemas, an import cycle (ARCHITECTURE.md).
 */
import { checkScenarioRules, type Evaluator, type Evaluators, type FieldProblem, type QueryPolicies, type TypeDeclarations } from '../engine/index.js';
import { compactResults as compactWith, type ResultExtraField } from '../engine/result.js';
import type { ExecutionResult } from '../schemas/execution.js';
import { ScenarioTypes, type Scenario, type ScenarioType } from '../schemas/scenario.js';
import type { BoundRoute, BoundTimer, ScenarioModule, ScenarioRoute, ScenarioTimer } from './types.js';
import { challengeQuery } from './challenge-query/index.js';
import { offChainZkp } from './offchain-zkp/index.js';
import { onChainZkp } from './onchain-zkp/index.js';

const modules = {
  ChallengeQuery: challengeQuery,
  OnChainZKP: onChainZkp,
  OffChainZKP: offChainZkp,
} as const satisfies { readonly [T in ScenarioType]: ScenarioModule<T> };

type Modules = typeof modules;
type Registered = keyof Modules;
/** The same set: see the `satisfies` above. */
const registered: readonly Registered[] = ScenarioTypes;

type DepsOf<M> = M extends { create(deps: infer D): unknown } ? D : never;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** Every registered module's dependencies (adapters.ts builds them). */
export type StrategyDeps = Intersection<DepsOf<Modules[Registered]>>;

export type Strategies = { [T in Registered]: Awaited<ReturnType<Modules[T]['create']>> };

export async function createStrategies(deps: StrategyDeps): Promise<Strategies> {
  const built: Partial<Record<Registered, unknown>> = {};
  for (const type of registered) built[type] = await modules[type].create(deps);
  return built as Strategies; // one entry per registered type, each its module's
}

/** What an attestation of a type's execution will say, known before it runs. */
export function attestationFacts(
  type: ScenarioType, trust: { requireHolderBinding: boolean; mode: 'strict' | 'off' },
): { holderBound: boolean; credentialsVerified: boolean } {
  const module: ScenarioModule<ScenarioType> = modules[type];
  const binding = module.holderBinding;
  return {
    holderBound: binding === 'always' || (binding === 'when-required' && trust.requireHolderBinding),
    credentialsVerified: module.verifiesCredentials !== true || trust.mode !== 'off',
  };
}

export function timersOf(strategies: Strategies): BoundTimer[] {
  return registered.flatMap((type) => {
    const module: { readonly type: Registered; readonly timers?: readonly ScenarioTimer<Strategies[typeof type]>[] } = modules[type];
    const strategy = strategies[type];
    return (module.timers ?? []).map((t) => ({ type, name: t.name, everyMs: t.everyMs, run: () => t.run(strategy) }));
  });
}

export function routesOf(strategies: Strategies): BoundRoute[] {
  return registered.flatMap((type) => {
    const module: { readonly type: Registered; readonly routes?: readonly ScenarioRoute<Strategies[typeof type]>[] } = modules[type];
    const strategy = strategies[type];
    return (module.routes ?? []).map(({ perClient, handle, ...route }) => ({
      ...route,
      type,
      perClient: perClient && { perMinute: perClient.perMinute(strategy), what: perClient.what },
      handle: (call) => handle(strategy, call),
    }));
  });
}

export const queryPolicies: QueryPolicies = Object.fromEntries(registered.map((type) => [type, modules[type].policy]));

/** Types without one have their rules decided by their strategies. */
const evaluators: Evaluators = Object.fromEntries(registered.flatMap((type) => {
  const module: { readonly type: Registered; readonly evaluator?: Evaluator } = modules[type];
  return module.evaluator === undefined ? [] : [[type, module.evaluator]];
}));

export const typeDeclarations: TypeDeclarations = { evaluators, policies: queryPolicies };

/** `firstOnly`: those only the first result keeps when compacted. */
export const resultFields: { readonly adds: readonly ResultExtraField[]; readonly firstOnly: readonly ResultExtraField[] } = {
  adds: [...new Set(registered.flatMap((type) => modules[type].resultFields.adds))],
  firstOnly: [...new Set(registered.flatMap((type) => modules[type].resultFields.firstOnly))],
};

export function validateScenarioRules(scenario: Scenario): FieldProblem[] {
  return checkScenarioRules(scenario, { names: registered, policies: queryPolicies });
}

export function compactResults(results: readonly ExecutionResult[]): ExecutionResult[] {
  return compactWith(results, resultFields.firstOnly);
}
