import type { Operator } from '../schemas/scenario.js';

/**
 * What a scenario type allows in its rules' queries beyond the query language, declared by its module
 * (src/execution/<type>/) and applied by validate.ts at create/patch. The engine knows no type: only these fields.
 */
export interface QueryPolicy {
  /**
   * Whether $sd (selective disclosure) may be asked: always, or only in a query whose `circuitId` is one of
   * `circuits`; where it may not, the refusal names the types that allow it.
   */
  readonly allowsSd?: boolean | { readonly circuits: readonly string[]; readonly note: string };
  readonly requestId?: {
    /** requestId is required: why (ends the message, in parentheses). */
    readonly required?: string;
    /** requestId, where given, is an integer from 0 to `max`; `note` ends the message, in parentheses. */
    readonly range?: { readonly max: number; readonly note: string };
    /** Each rule has its own requestId (7 and "7" are the same): why, ending the duplicate's message. */
    readonly unique?: string;
  };
  /**
   * Operators of the language the type refuses: why, and what to use instead; `unlessCircuit`: allowed in a query
   * whose `circuitId` is one of these.
   */
  readonly refusedOperators?: Readonly<Partial<Record<Operator, { readonly why: string; readonly instead: string; readonly unlessCircuit?: readonly string[] }>>>;
  /** The most values an $in/$nin list may hold, and why. */
  readonly maxInValues?: { readonly max: number; readonly why: string };
}

/** The policy of each registered scenario type, by type (src/execution/registry.ts). */
export type QueryPolicies = Readonly<Partial<Record<string, QueryPolicy>>>;

/** The registered scenario types, as the create/patch checks see them (src/execution/registry.ts hands them in). */
export interface RegisteredTypes {
  /** Their names, in the registry's order (the schema's ScenarioTypes): the types a scenario may have. */
  readonly names: readonly string[];
  readonly policies: QueryPolicies;
}

/** A scenario type's policy, as the engine applies it to each query (validate.ts checkQuery). */
export interface TypeRules {
  readonly type: string;
  readonly policy: QueryPolicy;
  /** The types whose policy allows $sd, for the refusal's message. */
  readonly sdTypes: string;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** The rules of `type` among `policies`; a type without a policy has only the query language's. */
export function typeRules(type: string, policies: QueryPolicies): TypeRules {
  const policy = (hasOwn.call(policies, type) ? policies[type] : undefined) ?? {};
  const sdTypes = Object.keys(policies).filter((t) => policies[t]?.allowsSd === true).join(' or ');
  return { type, policy, sdTypes };
}
