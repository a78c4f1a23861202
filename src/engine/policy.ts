import type { Operator } from '../schemas/scenario.js';

/** What a scenario type allows beyond the query language; the engine knows no type, only these fields. */
export interface QueryPolicy {
  /** $sd: always, or only in a query whose `circuitId` is one of `circuits`. */
  readonly allowsSd?: boolean | { readonly circuits: readonly string[]; readonly note: string };
  /** Each string and `note` is the reason its refusal gives; 7 and "7" are the same requestId. */
  readonly requestId?: {
    readonly required?: string;
    readonly range?: { readonly max: number; readonly note: string };
    readonly unique?: string;
  };
  /** `unlessCircuit`: allowed in a query whose `circuitId` is one of these. */
  readonly refusedOperators?: Readonly<Partial<Record<Operator, { readonly why: string; readonly instead: string; readonly unlessCircuit?: readonly string[] }>>>;
  readonly maxInValues?: { readonly max: number; readonly why: string };
}

export type QueryPolicies = Readonly<Partial<Record<string, QueryPolicy>>>;

export interface RegisteredTypes {
  /** In the registry's order (the schema's ScenarioTypes). */
  readonly names: readonly string[];
  readonly policies: QueryPolicies;
}

export interface TypeRules {
  readonly type: string;
  readonly policy: QueryPolicy;
  /** For the refusal's message. */
  readonly sdTypes: string;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** A type without a policy has only the query language's rules. */
export function typeRules(type: string, policies: QueryPolicies): TypeRules {
  const policy = (hasOwn.call(policies, type) ? policies[type] : undefined) ?? {};
  const sdTypes = Object.keys(policies).filter((t) => policies[t]?.allowsSd === true).join(' or ');
  return { type, policy, sdTypes };
}
