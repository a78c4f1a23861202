/**
 * The scenario types of the service, one registration line each: a type is its folder's module (ScenarioModule). The
 * `satisfies` below fails to compile unless the registry holds exactly the schema's ScenarioTypes, each under its name.
 * The schema's list is not derived from here: the modules are typed against the schemas, so that would be an import
 * cycle (ARCHITECTURE.md, "A new scenario type").
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
/** The registered types, in the schema's order (the same set: see the `satisfies` above). */
const registered: readonly Registered[] = ScenarioTypes;

type DepsOf<M> = M extends { create(deps: infer D): unknown } ? D : never;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** What the strategies are built from: every registered module's dependencies (adapters.ts builds them). */
export type StrategyDeps = Intersection<DepsOf<Modules[Registered]>>;

/** The strategy of each type, as its module builds it (OffChainZKP's: the OffChainZkp its route and timers use). */
export type Strategies = { [T in Registered]: Awaited<ReturnType<Modules[T]['create']>> };

/** Builds every type's strategy, in the registry's order. */
export async function createStrategies(deps: StrategyDeps): Promise<Strategies> {
  const built: Partial<Record<Registered, unknown>> = {};
  for (const type of registered) built[type] = await modules[type].create(deps);
  return built as Strategies; // one entry per registered type, each its module's
}

/**
 * What an attestation of a type's execution will say, known before it runs: whether its verdict is tied to the
 * request's address (REQUIRE_HOLDER_BINDING as set) and whether the credentials it rests on are verified.
 */
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

/** Every registered type's timers, each bound to the type's strategy. */
export function timersOf(strategies: Strategies): BoundTimer[] {
  return registered.flatMap((type) => {
    const module: { readonly type: Registered; readonly timers?: readonly ScenarioTimer<Strategies[typeof type]>[] } = modules[type];
    const strategy = strategies[type];
    return (module.timers ?? []).map((t) => ({ type, name: t.name, everyMs: t.everyMs, run: () => t.run(strategy) }));
  });
}

/** Every registered type's routes, each bound to the type's strategy. */
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

/** The query policy of every registered type. */
export const queryPolicies: QueryPolicies = Object.fromEntries(registered.map((type) => [type, modules[type].policy]));

/** The compile step of every registered type that declares one (the others' strategies decide their rules). */
const evaluators: Evaluators = Object.fromEntries(registered.flatMap((type) => {
  const module: { readonly type: Registered; readonly evaluator?: Evaluator } = modules[type];
  return module.evaluator === undefined ? [] : [[type, module.evaluator]];
}));

/** What the engine's compilePlan learns of the registered types (the plan cache hands it in). */
export const typeDeclarations: TypeDeclarations = { evaluators, policies: queryPolicies };

/** The result fields every registered type adds, and those only the first result keeps when compacted. */
export const resultFields: { readonly adds: readonly ResultExtraField[]; readonly firstOnly: readonly ResultExtraField[] } = {
  adds: [...new Set(registered.flatMap((type) => modules[type].resultFields.adds))],
  firstOnly: [...new Set(registered.flatMap((type) => modules[type].resultFields.firstOnly))],
};

/** The engine's create/patch checks of a scenario's rules under its type's policy (engine/validate.ts). */
export function validateScenarioRules(scenario: Scenario): FieldProblem[] {
  return checkScenarioRules(scenario, { names: registered, policies: queryPolicies });
}

/** Results over MAX_RESULTS_BYTES, compacted (engine/result.ts): the registered types' first-only fields on the first. */
export function compactResults(results: readonly ExecutionResult[]): ExecutionResult[] {
  return compactWith(results, resultFields.firstOnly);
}
