/**
 * What the iden3 V2 query circuits (credentialAtomicQuerySigV2 / credentialAtomicQueryMTPV2) can prove, and how a
 * query configuration (the contract's QueryConfiguration) becomes an iden3 ZK query.
 *
 * Decisions (the issue is silent on them):
 * - JSON-LD context: a query may name its context in an optional `context` field (an absolute URL); otherwise the
 *   deployment maps credential types to contexts (ZkpQueryOptions.contexts, env ZKP_CONTEXTS). The query's own field
 *   wins. A context the offline document loader does not hold is refused at create time (the verifier could never
 *   check a proof about it).
 * - Circuit: an optional `circuitId` field in the query, "credentialAtomicQuerySigV2" (BJJ signature credentials,
 *   the default, env ZKP_DEFAULT_CIRCUIT_ID) or "credentialAtomicQueryMTPV2" (credentials published in the issuer's
 *   claims tree).
 * Both fields need the Query schema to allow them (it is `additionalProperties: false` today).
 *
 * What the installed js-sdk (1.39.4 inside js-iden3-auth 1.14, and 1.45) lets the V2 circuits prove:
 * $noop, $eq, $ne, $lt, $gt, $in, $nin (and selective disclosure, which the contract's query language cannot ask for).
 * $lte, $gte, $exists, $between and $nonbetween need the V3 circuits: refused here.
 */
import { Operators } from '../schemas/scenario.js';
import type { Query } from '../schemas/scenario.js';
import type { FieldProblem } from '../engine/validate.js';

export const ZKP_CIRCUIT_IDS = ['credentialAtomicQuerySigV2', 'credentialAtomicQueryMTPV2'] as const;
export type ZkpCircuitId = (typeof ZKP_CIRCUIT_IDS)[number];
export const DEFAULT_ZKP_CIRCUIT_ID: ZkpCircuitId = 'credentialAtomicQuerySigV2';

/** Operators the V2 query circuits prove. */
const ZKP_V2_OPERATORS = ['$noop', '$eq', '$ne', '$lt', '$gt', '$in', '$nin'] as const;
/** The V2 circuits compare against at most 64 values ($in / $nin). */
const ZKP_V2_MAX_VALUES = 64;
/** requestId becomes a circuit public signal; 0 is read as "absent" by the verifier, and ids must be JSON-safe. */
const ZKP_MAX_REQUEST_ID = 4_294_967_295;

/** A contract query (QueryConfiguration.query) with the two optional fields this module proposes. */
export type ZkpQuery = Query & {
  /** Absolute URL of the JSON-LD context that defines `type` (e.g. https://.../kyc-v3.json-ld). */
  context?: string;
  /** Which V2 query circuit the wallet must prove with; default credentialAtomicQuerySigV2. */
  circuitId?: ZkpCircuitId;
};
export interface ZkpQueryConfiguration {
  id: string;
  query: ZkpQuery;
}

export interface ZkpQueryOptions {
  /** Credential type -> JSON-LD context URL, for queries that do not name their own `context` (env ZKP_CONTEXTS). */
  contexts?: Readonly<Record<string, string>>;
  /** When given, a context URL must be one it holds (the offline document loader): the verifier needs it. */
  documents?: { has(url: string): boolean };
  /** Pointer of the queryConfigurations array (default '/queryConfigurations', as in the Scenario). */
  basePointer?: string;
}

const V2_OPERATORS: ReadonlySet<string> = new Set(ZKP_V2_OPERATORS);
const KNOWN_OPERATORS: ReadonlySet<string> = new Set(Operators);
const CIRCUITS: ReadonlySet<string> = new Set(ZKP_CIRCUIT_IDS);

const WHY_NOT: Readonly<Record<string, string>> = {
  $lte: 'the iden3 V2 circuits have no $lte: use $lt with the next value (e.g. $lt 19 for $lte 18)',
  $gte: 'the iden3 V2 circuits have no $gte: use $gt with the previous value (e.g. $gt 17 for $gte 18)',
  $exists: 'the iden3 V2 circuits cannot prove $exists (it needs the V3 circuits, not supported by this service yet)',
  $between: 'the iden3 V2 circuits cannot prove $between (it needs the V3 circuits): use two queries, $gt and $lt',
  $nonbetween: 'the iden3 V2 circuits cannot prove $nonbetween (it needs the V3 circuits, not supported by this service yet)',
};

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isFiniteNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isNonNegativeInteger = (x: unknown): x is number => Number.isSafeInteger(x) && (x as number) >= 0;
/** ISO 8601 date or date-time (the shapes xsd:dateTime fields take); checked loosely, js-sdk hashes it later. */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}(:?\d{2})?)?)?$/;

function kindOf(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  return typeof x === 'object' ? 'an object' : `a ${typeof x}`;
}

function isAbsoluteUrl(s: string): boolean {
  if (/^ipfs:\/\/[A-Za-z0-9]+/.test(s)) return true;
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** The JSON-LD context of a query: its own `context`, else the deployment's mapping for its type. */
export function contextOf(query: Pick<ZkpQuery, 'type' | 'context'>, contexts?: Readonly<Record<string, string>>): string | undefined {
  if (typeof query.context === 'string' && query.context.length > 0) return query.context;
  return contexts && Object.hasOwn(contexts, query.type) ? contexts[query.type] : undefined;
}

/** The circuit a query is proved with. */
export function circuitOf(query: Pick<ZkpQuery, 'circuitId'>, defaultCircuitId: ZkpCircuitId = DEFAULT_ZKP_CIRCUIT_ID): ZkpCircuitId {
  return query.circuitId ?? defaultCircuitId;
}

/**
 * Create/patch-time checks of an OffChainZKP scenario's query configurations against what the V2 circuits and
 * this verifier support. Returns [] when every query can be proved. Never throws.
 * Pointers are relative to the Scenario ('/queryConfigurations/1/query/operator'), like validateScenarioRules's:
 * the two overlap on $lte/$gte, the 64-value limit and requestId presence/uniqueness, so a caller that runs both
 * should keep one problem per pointer.
 */
export function validateZkpQueries(queryConfigurations: readonly unknown[], options: ZkpQueryOptions = {}): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const base = options.basePointer ?? '/queryConfigurations';
  if (!Array.isArray(queryConfigurations)) {
    return [{ pointer: base, message: 'queryConfigurations must be an array' }];
  }
  const firstByRequestId = new Map<number, number>();
  queryConfigurations.forEach((qc, i) => {
    const at = `${base}/${i}/query`;
    const add = (pointer: string, message: string) => problems.push({ pointer: at + pointer, message });
    const query = isRecord(qc) ? qc.query : undefined;
    if (!isRecord(query)) {
      problems.push({ pointer: isRecord(qc) ? at : `${base}/${i}`, message: 'a query configuration needs a query object' });
      return;
    }
    checkZkpQuery(query, add, options);
    const rid = query.requestId;
    if (isNonNegativeInteger(rid)) {
      const first = firstByRequestId.get(rid);
      if (first === undefined) firstByRequestId.set(rid, i);
      else add('/requestId', `duplicate requestId ${rid} (first used by ${base}/${first}): each proof request needs its own id`);
    }
  });
  return problems;
}

function checkZkpQuery(query: Record<string, unknown>, add: (pointer: string, message: string) => void, options: ZkpQueryOptions): void {
  // requestId: the proof's public signal and the scope entry's id.
  const rid = query.requestId;
  if (rid === undefined) {
    add('/requestId', 'requestId is required for zero-knowledge proofs: the number of the proof request (1 or more)');
  } else if (!isNonNegativeInteger(rid) || rid < 1 || rid > ZKP_MAX_REQUEST_ID) {
    add('/requestId', `requestId must be an integer from 1 to ${ZKP_MAX_REQUEST_ID} (0 cannot be proved); got ${JSON.stringify(rid)}`);
  }

  // type and its JSON-LD context.
  const type = query.type;
  if (typeof type !== 'string' || type.length === 0) {
    add('/type', 'type is required: the credential type the proof is about');
  } else if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(type)) {
    add('/type', 'type must be a JSON-LD term (letters, digits, _ . -, not starting with a digit)');
  }
  if (query.context !== undefined && (typeof query.context !== 'string' || !isAbsoluteUrl(query.context))) {
    add('/context', 'context must be the absolute URL (https:// or ipfs://) of the JSON-LD context that defines the credential type');
  } else if (typeof type === 'string' && type.length > 0) {
    const context = contextOf({ type, context: query.context as string | undefined }, options.contexts);
    if (context === undefined) {
      add('/context', `no JSON-LD context is known for credential type ${JSON.stringify(type)}: name it in the query's context field ` +
        'or in the service configuration (ZKP_CONTEXTS)');
    } else if (options.documents && !options.documents.has(context)) {
      add(query.context !== undefined ? '/context' : '/type',
        `the JSON-LD context ${JSON.stringify(context)} is not available to the verifier (documents load offline only): ` +
        'add it to ZKP_JSONLD_DOCUMENTS_FILE');
    }
  }

  if (query.circuitId !== undefined && (typeof query.circuitId !== 'string' || !CIRCUITS.has(query.circuitId))) {
    add('/circuitId', `circuitId must be one of ${ZKP_CIRCUIT_IDS.join(', ')}`);
  }

  const op = query.operator;
  if (typeof op !== 'string' || !KNOWN_OPERATORS.has(op)) {
    add('/operator', `operator must be one of ${ZKP_V2_OPERATORS.join(', ')}`);
    return;
  }
  if (!V2_OPERATORS.has(op)) {
    add('/operator', `${op} is not available for zero-knowledge proofs: ${WHY_NOT[op] ?? `supported operators are ${ZKP_V2_OPERATORS.join(', ')}`}`);
    return;
  }
  if (op === '$noop') {
    if (query.value !== undefined) add('/value', '$noop takes no value: it proves that a valid credential of the type exists');
    return;
  }

  const attribute = query.attribute;
  if (typeof attribute !== 'string' || attribute.length === 0 || attribute.split('.').some((s) => s.length === 0)) {
    add('/attribute', `attribute is required for ${op}: a dot path inside credentialSubject (e.g. personalData.age)`);
  } else if (attribute.split('.').some((s) => s.startsWith('$') || s.startsWith('@'))) {
    add('/attribute', 'attribute segments must not start with $ or @');
  }

  const value = query.value;
  switch (op) {
    case '$in':
    case '$nin':
      if (!Array.isArray(value) || value.length === 0) {
        add('/value', `value for ${op} must be a non-empty array of strings or numbers; got ${Array.isArray(value) ? 'an empty array' : kindOf(value)}`);
        return;
      }
      if (value.length > ZKP_V2_MAX_VALUES) {
        add('/value', `value for ${op} may hold at most ${ZKP_V2_MAX_VALUES} values (the limit of the iden3 V2 circuits); got ${value.length}`);
      }
      value.forEach((x, j) => {
        if (typeof x !== 'string' && !isFiniteNumber(x)) add(`/value/${j}`, `each value for ${op} must be a string or a number; got ${kindOf(x)}`);
      });
      return;
    case '$lt':
    case '$gt':
      if (isFiniteNumber(value)) {
        if (!Number.isSafeInteger(value) || value < 0) {
          add('/value', `value for ${op} must be a non-negative integer or an ISO 8601 date: the circuits compare field elements, ` +
            `so negative and fractional numbers cannot be compared; got ${value}`);
        }
      } else if (!(typeof value === 'string' && ISO_DATE.test(value))) {
        add('/value', `value for ${op} must be a non-negative integer or an ISO 8601 date; got ${kindOf(value)}`);
      }
      return;
    default: // $eq, $ne
      if (typeof value !== 'string' && typeof value !== 'boolean' && !isFiniteNumber(value)) {
        add('/value', `value for ${op} must be one string, number or boolean (the V2 circuits compare one value; use $in for a list); got ${kindOf(value)}`);
      }
  }
}

/** The iden3 ZK query of one query configuration (assumes validateZkpQueries found nothing). */
export function toIden3Query(
  query: ZkpQuery,
  context: string,
  allowedIssuers: readonly string[],
): { allowedIssuers: string[]; context: string; type: string; credentialSubject?: Record<string, Record<string, unknown>> } {
  const out: { allowedIssuers: string[]; context: string; type: string; credentialSubject?: Record<string, Record<string, unknown>> } = {
    allowedIssuers: [...allowedIssuers],
    context,
    type: query.type,
  };
  // $noop: no credentialSubject at all. (`{ attr: {} }` would ask for selective disclosure of attr.)
  if (query.operator !== '$noop' && query.attribute !== undefined) {
    const value = Array.isArray(query.value) ? [...query.value] : query.value;
    // js-sdk reads one level: the attribute's dot path is the key ("personalData.age"), not nested objects.
    out.credentialSubject = { [query.attribute]: { [query.operator]: value } };
  }
  return out;
}
