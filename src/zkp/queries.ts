/**
 * In iden3's own spellings, so that queries copied from iden3 tools work. A context the offline loader does not hold
 * is refused at create time: no proof about it could be checked.
 */
import { Operators } from '../schemas/scenario.js';
import type { Query } from '../schemas/scenario.js';
import type { FieldProblem } from '../engine/validate.js';
import { checkGroups } from './query-groups.js';
import { checkValue, V3_ONLY_OPERATORS, type Add } from './query-values.js';
import { isRecord } from '../schemas/json.js';

const ZKP_CIRCUIT_IDS = ['credentialAtomicQuerySigV2', 'credentialAtomicQueryMTPV2', 'credentialAtomicQueryV3', 'linkedMultiQuery'] as const;
export type ZkpCircuitId = (typeof ZKP_CIRCUIT_IDS)[number];
/** linkedMultiQuery needs a group, so a rule names it. */
export const ZKP_DEFAULT_CIRCUIT_IDS = ['credentialAtomicQuerySigV2', 'credentialAtomicQueryMTPV2', 'credentialAtomicQueryV3'] as const;
export type ZkpDefaultCircuitId = (typeof ZKP_DEFAULT_CIRCUIT_IDS)[number];
const V3_CIRCUIT = 'credentialAtomicQueryV3';
export const LINKED_CIRCUIT = 'linkedMultiQuery';
const ZKP_PROOF_TYPES = ['BJJSignature2021', 'Iden3SparseMerkleTreeProof'] as const;

const V2_OPERATORS = ['$noop', '$eq', '$ne', '$lt', '$gt', '$in', '$nin', '$sd'] as const;
const OPERATORS_OF: Readonly<Record<ZkpCircuitId, readonly string[]>> = {
  credentialAtomicQuerySigV2: V2_OPERATORS,
  credentialAtomicQueryMTPV2: V2_OPERATORS,
  credentialAtomicQueryV3: Operators,
  linkedMultiQuery: Operators.filter((op) => op !== '$noop' && op !== '$sd'),
};
/** requestId becomes a circuit public signal; 0 is read as "absent" by the verifier, and ids must be JSON-safe. */
const ZKP_MAX_REQUEST_ID = 4_294_967_295;
/** BN254 scalar field order: a nullifier session id is a field element. */
const FIELD_ORDER = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

export type ZkpQuery = Query;
export interface ZkpQueryConfiguration {
  id: string;
  query: ZkpQuery;
}

export interface ZkpQueryOptions {
  contexts?: Readonly<Record<string, string>>;
  /** When given, a context URL must be one it holds: the verifier reads documents offline. */
  documents?: { has(url: string): boolean };
  defaultCircuitId: ZkpDefaultCircuitId;
  basePointer?: string;
}

const KNOWN_OPERATORS: ReadonlySet<string> = new Set(Operators);
const CIRCUITS: ReadonlySet<string> = new Set(ZKP_CIRCUIT_IDS);
const isNonNegativeInteger = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
const isCircuitId = (x: unknown): x is ZkpCircuitId => typeof x === 'string' && CIRCUITS.has(x);
const PROOF_TYPES: ReadonlySet<unknown> = new Set(ZKP_PROOF_TYPES);

function isAbsoluteUrl(s: string): boolean {
  if (/^ipfs:\/\/[A-Za-z0-9]+/.test(s)) return true;
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

export function contextOf(query: { type: string; context?: unknown }, contexts?: Readonly<Record<string, string>>): string | undefined {
  if (typeof query.context === 'string' && query.context.length > 0) return query.context;
  return contexts && Object.hasOwn(contexts, query.type) ? contexts[query.type] : undefined;
}

function needsV3(query: Partial<Record<keyof ZkpQuery, unknown>>): boolean {
  return (typeof query.operator === 'string' && V3_ONLY_OPERATORS.has(query.operator)) || query.proofType !== undefined || query.groupId !== undefined ||
    query.params !== undefined;
}

export function circuitOf(query: Partial<Record<keyof ZkpQuery, unknown>>, defaultCircuitId: ZkpDefaultCircuitId): ZkpCircuitId {
  if (isCircuitId(query.circuitId)) return query.circuitId;
  return needsV3(query) ? V3_CIRCUIT : defaultCircuitId;
}

export function nullifierSessionIdOf(query: Pick<ZkpQuery, 'params'>): string | undefined {
  const id = query.params?.nullifierSessionId;
  return id === undefined ? undefined : String(id);
}

/** Overlaps validateScenarioRules: a caller running both keeps one problem per pointer. */
export function validateZkpQueries(queryConfigurations: readonly unknown[], options: ZkpQueryOptions): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const base = options.basePointer ?? '/queryConfigurations';
  if (!Array.isArray(queryConfigurations)) {
    return [{ pointer: base, message: 'queryConfigurations must be an array' }];
  }
  const checked: Array<{ index: number; query: Record<string, unknown>; circuitId: ZkpCircuitId; context?: string }> = [];
  queryConfigurations.forEach((qc, i) => {
    const at = `${base}/${i}/query`;
    const add: Add = (pointer, message) => problems.push({ pointer: at + pointer, message });
    const query = isRecord(qc) ? qc.query : undefined;
    if (!isRecord(query)) {
      problems.push({ pointer: isRecord(qc) ? at : `${base}/${i}`, message: 'a query configuration needs a query object' });
      return;
    }
    const circuitId = circuitOf(query, options.defaultCircuitId);
    checkZkpQuery(query, circuitId, add, options);
    const context = typeof query.type === 'string' ? contextOf({ type: query.type, context: query.context }, options.contexts) : undefined;
    checked.push({ index: i, query, circuitId, context });
  });
  problems.push(...checkGroups(checked, base));
  return problems;
}

function checkZkpQuery(query: Record<string, unknown>, circuitId: ZkpCircuitId, add: Add, options: ZkpQueryOptions): void {
  const rid = query.requestId;
  if (rid === undefined) {
    add('/requestId', 'requestId is required for zero-knowledge proofs: the number of the proof request (1 or more)');
  } else if (!isNonNegativeInteger(rid) || rid < 1 || rid > ZKP_MAX_REQUEST_ID) {
    add('/requestId', `requestId must be an integer from 1 to ${ZKP_MAX_REQUEST_ID} (0 cannot be proved); got ${JSON.stringify(rid)}`);
  }

  const type = query.type;
  if (typeof type !== 'string' || type.length === 0) {
    add('/type', 'type is required: the credential type the proof is about');
  } else if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(type)) {
    add('/type', 'type must be a JSON-LD term (letters, digits, _ . -, not starting with a digit)');
  }
  if (query.context !== undefined && (typeof query.context !== 'string' || !isAbsoluteUrl(query.context))) {
    add('/context', 'context must be the absolute URL (https:// or ipfs://) of the JSON-LD context that defines the credential type');
  } else if (typeof type === 'string' && type.length > 0) {
    const context = contextOf({ type, context: query.context }, options.contexts);
    if (context === undefined) {
      add('/context', `no JSON-LD context is known for credential type ${JSON.stringify(type)}: name it in the query's context field ` +
        'or in the service configuration (ZKP_CONTEXTS)');
    } else if (options.documents && !options.documents.has(context)) {
      add(query.context !== undefined ? '/context' : '/type',
        `the JSON-LD context ${JSON.stringify(context)} is not available to the verifier (documents load offline only): ` +
        'add it to JSONLD_DOCUMENTS_FILE');
    }
  }

  if (query.circuitId !== undefined && (typeof query.circuitId !== 'string' || !CIRCUITS.has(query.circuitId))) {
    add('/circuitId', `circuitId must be one of ${ZKP_CIRCUIT_IDS.join(', ')}`);
    return;
  }
  checkV3Fields(query, circuitId, add);

  const op = query.operator;
  const supported = OPERATORS_OF[circuitId];
  if (typeof op !== 'string' || !KNOWN_OPERATORS.has(op)) {
    add('/operator', `operator must be one of ${supported.join(', ')}`);
    return;
  }
  if (!supported.includes(op)) {
    add('/operator', circuitId === LINKED_CIRCUIT
      ? `${op} is not available in a linkedMultiQuery rule: ask it in the credentialAtomicQueryV3 rule of the group`
      : `${circuitId} cannot prove ${op}: use circuitId ${V3_CIRCUIT} (or leave circuitId out), which proves ${Operators.join(', ')}`);
    return;
  }
  checkValue(query, op, add);
}

function checkV3Fields(query: Record<string, unknown>, circuitId: ZkpCircuitId, add: Add): void {
  const v3 = circuitId === V3_CIRCUIT;
  if (query.proofType !== undefined) {
    if (!v3 && circuitId !== LINKED_CIRCUIT) add('/proofType', `proofType needs circuitId ${V3_CIRCUIT} (${circuitId} has its proof type in its name)`);
    else if (!PROOF_TYPES.has(query.proofType)) add('/proofType', `proofType must be one of ${ZKP_PROOF_TYPES.join(', ')}`);
  }
  if (query.groupId !== undefined) {
    if (!v3 && circuitId !== LINKED_CIRCUIT) add('/groupId', `groupId needs circuitId ${V3_CIRCUIT} or ${LINKED_CIRCUIT}: the V2 circuits cannot link proofs`);
    else if (!isNonNegativeInteger(query.groupId) || query.groupId < 1 || query.groupId > ZKP_MAX_REQUEST_ID) {
      add('/groupId', `groupId must be an integer from 1 to ${ZKP_MAX_REQUEST_ID}; got ${JSON.stringify(query.groupId)}`);
    }
  } else if (circuitId === LINKED_CIRCUIT) {
    add('/groupId', 'groupId is required with linkedMultiQuery: it names the credentialAtomicQueryV3 rule whose credential these conditions are about');
  }
  const params = query.params;
  if (params === undefined) return;
  if (!v3) {
    add('/params', `params (nullifierSessionId) needs circuitId ${V3_CIRCUIT}: only the V3 circuit makes nullifiers`);
    return;
  }
  if (!isRecord(params)) {
    add('/params', 'params must be an object {nullifierSessionId}');
    return;
  }
  const sid = params.nullifierSessionId;
  const decimal = typeof sid === 'string' && /^[1-9][0-9]{0,76}$/.test(sid) && BigInt(sid) < FIELD_ORDER;
  if (!(decimal || (typeof sid === 'number' && Number.isSafeInteger(sid) && sid >= 1))) {
    add('/params/nullifierSessionId', 'nullifierSessionId must be a positive integer, or a decimal string below the BN254 field order ' +
      `(one id per verifier session; 0 asks no nullifier); got ${JSON.stringify(sid)?.slice(0, 80)}`);
  }
}

export interface Iden3Query {
  allowedIssuers: string[];
  context: string;
  type: string;
  credentialSubject?: Record<string, Record<string, unknown>>;
  proofType?: string;
  groupId?: number;
}

export function conditionOf(query: ZkpQuery): Record<string, unknown> | undefined {
  if (query.operator === '$noop' || query.attribute === undefined) return undefined;
  if (query.operator === '$sd') return {};
  const value = Array.isArray(query.value) ? [...query.value] : query.value;
  return { [query.operator]: value };
}

export function toIden3Query(query: ZkpQuery, context: string, allowedIssuers: readonly string[]): Iden3Query {
  const out: Iden3Query = { allowedIssuers: [...allowedIssuers], context, type: query.type };
  const condition = conditionOf(query);
  // js-sdk reads one level: the dot path is the key ("personalData.age"), not nested objects.
  if (condition && query.attribute !== undefined) out.credentialSubject = { [query.attribute]: condition };
  if (query.proofType !== undefined) out.proofType = query.proofType;
  if (query.groupId !== undefined) out.groupId = query.groupId;
  return out;
}
