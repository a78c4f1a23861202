/** Create/patch-time checks the schema cannot say: which value fits which operator, unique ids, each type's QueryPolicy. Never throws. */
import { Operators, type Operator, type Scenario } from '../schemas/scenario.js';
import { parseInstant } from './instant.js';
import { typeRules, type QueryPolicy, type RegisteredTypes, type TypeRules } from './policy.js';
import { isRecord } from '../schemas/json.js';

export interface FieldProblem {
  /** Relative to the Scenario, e.g. '/queryConfigurations/1/query/value'. */
  pointer: string;
  message: string;
}

const OPERATORS: ReadonlySet<string> = new Set(Operators);
const isOperator = (x: unknown): x is Operator => typeof x === 'string' && OPERATORS.has(x);

const DATE_HINT = 'an ISO 8601 date (e.g. 2001-02-03, 2001-02-03T04:05:06Z or 2001-02-03T04:05:06.789+02:00)';

function isDateString(x: unknown): x is string {
  return typeof x === 'string' && !Number.isNaN(parseInstant(x, true));
}

const isFiniteNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
const isStringOrNumber = (x: unknown): boolean => typeof x === 'string' || isFiniteNumber(x);
const isScalar = (x: unknown): boolean => isStringOrNumber(x) || typeof x === 'boolean';

/** What a query value is, for messages ("got a boolean"); the scenario's value is not personal data. */
function kindOf(x: unknown, dates = false): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  switch (typeof x) {
    case 'string':
      if (!dates) return 'a string';
      return isDateString(x) ? 'an ISO 8601 date' : 'a string that is not an ISO 8601 date';
    case 'number':
      return Number.isFinite(x) ? 'a number' : 'a non-finite number';
    case 'boolean':
      return 'a boolean';
    default:
      return 'an object';
  }
}

/** The problems of one query: the query language's, and with `rules` its scenario type's policy. */
export function checkQuery(query: unknown, base: string, rules?: TypeRules): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const add = (pointer: string, message: string) => problems.push({ pointer: base + pointer, message });
  if (!isRecord(query)) {
    add('', 'query must be an object with type, operator and, for every operator but $noop, attribute and value');
    return problems;
  }
  if (typeof query.type !== 'string' || query.type.length === 0) {
    add('/type', 'type is required: the credential type the query reads (e.g. IDInformation)');
  }
  const op = query.operator;
  if (!isOperator(op)) {
    add('/operator', `operator must be one of ${Operators.join(', ')}`);
    return problems;
  }
  if (rules !== undefined && !checkPolicy(query, op, rules, add)) return problems;
  if (op === '$noop') return problems;
  if (op === '$sd') {
    if (typeof query.attribute !== 'string' || query.attribute.length === 0) add('/attribute', 'attribute is required for $sd: the value to disclose');
    if (query.value !== undefined) add('/value', '$sd takes no value: the wallet discloses the attribute\'s value');
    return problems;
  }

  const attribute = query.attribute;
  if (attribute === undefined) {
    add('/attribute', `attribute is required for operator ${op}: a dot path inside credentialSubject (e.g. personalData.age)`);
  } else if (typeof attribute !== 'string' || attribute.length === 0 || attribute.split('.').some((s) => s.length === 0)) {
    add('/attribute', 'attribute must be a dot path of non-empty segments inside credentialSubject (e.g. personalData.age)');
  }
  const value: unknown = query.value;
  if (value === undefined) {
    add('/value', `value is required for operator ${op}`);
    return problems;
  }
  checkValue(op, value, rules?.type, rules?.policy.maxInValues, add);
  return problems;
}

/** The type's policy on one query; false: stop checking it ($sd where the type does not allow it). */
function checkPolicy(
  query: Readonly<Record<string, unknown>>, op: Operator, { type, policy, sdTypes }: TypeRules, add: (pointer: string, message: string) => void,
): boolean {
  // Both the $sd allowance and a refused operator may depend on the query's circuit (an OnChainZKP rule on a V3 request).
  const circuitIn = (circuits: readonly string[] | undefined) => typeof query.circuitId === 'string' && circuits?.includes(query.circuitId) === true;
  const sd = policy.allowsSd;
  if (op === '$sd' && sd !== true && !(typeof sd === 'object' && circuitIn(sd.circuits))) {
    add('/operator', `$sd (selective disclosure) asks a wallet to reveal a value: only ${sdTypes} scenarios can ask it` +
      (typeof sd === 'object' ? ` (${type}: ${sd.note})` : ''));
    return false;
  }
  const rid = query.requestId;
  const range = policy.requestId?.range;
  if (range !== undefined && rid !== undefined && !(typeof rid === 'number' && Number.isSafeInteger(rid) && rid <= range.max)) {
    add('/requestId', `requestId must be an integer from 0 to ${range.max} in ${type} scenarios (${range.note})`);
  }
  const refused = policy.refusedOperators?.[op];
  if (refused !== undefined && !circuitIn(refused.unlessCircuit)) {
    add('/operator', `${op} is not available in ${type} scenarios (${refused.why}); ${refused.instead}`);
  }
  const required = policy.requestId?.required;
  if (required !== undefined && rid === undefined) add('/requestId', `requestId is required in ${type} scenarios (${required})`);
  return true;
}

function checkValue(
  op: Operator,
  value: unknown,
  scenarioType: string | undefined,
  maxIn: QueryPolicy['maxInValues'],
  add: (pointer: string, message: string) => void,
): void {
  switch (op) {
    case '$eq':
    case '$ne':
      if (Array.isArray(value)) {
        value.forEach((x, j) => {
          if (!isStringOrNumber(x)) add(`/value/${j}`, `each element of an array value for ${op} must be a string or a number; got ${kindOf(x)}`);
        });
      } else if (!isScalar(value)) {
        add('/value', `value for ${op} must be a string, a number, a boolean, or an array of strings and numbers; got ${kindOf(value)}`);
      }
      return;
    case '$lt':
    case '$lte':
    case '$gt':
    case '$gte':
      if (!isFiniteNumber(value) && !isDateString(value)) {
        add('/value', `value for ${op} must be a number or ${DATE_HINT}; got ${kindOf(value, true)}`);
      }
      return;
    case '$in':
    case '$nin':
      if (!Array.isArray(value) || value.length === 0) {
        const one = isStringOrNumber(value) ? ` (one value is written as a one-element array: [${JSON.stringify(value)}])` : '';
        add('/value', `value for ${op} must be a non-empty array of strings and numbers; got ${Array.isArray(value) ? 'an empty array' : kindOf(value)}${one}`);
        return;
      }
      value.forEach((x, j) => {
        if (!isStringOrNumber(x)) add(`/value/${j}`, `each element of the value for ${op} must be a string or a number; got ${kindOf(x)}`);
      });
      if (maxIn !== undefined && value.length > maxIn.max) {
        add('/value', `value for ${op} may hold at most ${maxIn.max} values in ${scenarioType} scenarios (${maxIn.why}); got ${value.length}`);
      }
      return;
    case '$exists':
      if (typeof value !== 'boolean') {
        add('/value', `value for $exists must be a boolean (true: the attribute is present, false: it is absent); got ${kindOf(value)}`);
      }
      return;
    case '$between':
    case '$nonbetween': {
      const shape = `value for ${op} must be [min, max]: an array of exactly two numbers or two ISO 8601 dates`;
      if (!Array.isArray(value) || value.length !== 2) {
        add('/value', `${shape}; got ${Array.isArray(value) ? `an array of ${value.length}` : kindOf(value)}`);
        return;
      }
      const [lo, hi]: unknown[] = value;
      if (isFiniteNumber(lo) && isFiniteNumber(hi)) {
        if (lo > hi) add('/value', `value for ${op} must have min <= max; got min ${lo} and max ${hi}`);
      } else if (isDateString(lo) && isDateString(hi)) {
        if (parseInstant(lo, true) > parseInstant(hi, true)) {
          add('/value', `value for ${op} must have min <= max; got min ${lo} after max ${hi}`);
        }
      } else {
        add('/value', `${shape}; got ${kindOf(lo, true)} and ${kindOf(hi, true)}`);
      }
      break;
    }
    default:
      break;
  }
}

/**
 * Every execute answers and records one result per rule echoing its query: this bounds that part of the answer and
 * audit record (long value lists are abbreviated there, other fields are not). A rule with a 250-country list is ~1.5 KB.
 */
export const MAX_RULES_BYTES = 128 * 1024;

/** A scenario's type and its query configurations under its type's policy; [] when fine. */
export function checkScenarioRules(scenario: Scenario, registered: RegisteredTypes): FieldProblem[] {
  const { names, policies } = registered;
  const problems: FieldProblem[] = [];
  const configs: unknown = scenario?.queryConfigurations;
  if (!Array.isArray(configs)) {
    problems.push({ pointer: '/queryConfigurations', message: 'queryConfigurations must be an array' });
    return problems;
  }
  const bytes = Buffer.byteLength(JSON.stringify(configs));
  if (bytes > MAX_RULES_BYTES) {
    problems.push({
      pointer: '/queryConfigurations',
      message: `must be at most ${MAX_RULES_BYTES} bytes as JSON (${MAX_RULES_BYTES / 1024} KiB), not ${bytes}: fewer or shorter rules`,
    });
  }
  const type = scenario.type;
  if (!names.includes(type)) {
    problems.push({ pointer: '/type', message: `type must be one of ${names.join(', ')}` });
  }
  const rules = typeRules(type, policies);
  const ids = new Map<string, number>();
  const requestIds = new Map<string, number>();
  configs.forEach((qc: unknown, i: number) => {
    const base = `/queryConfigurations/${i}`;
    if (!isRecord(qc)) {
      problems.push({ pointer: base, message: 'a query configuration must be an object with id and query' });
      return;
    }
    if (typeof qc.id === 'string') {
      const first = ids.get(qc.id);
      if (first === undefined) ids.set(qc.id, i);
      else problems.push({ pointer: `${base}/id`, message: `duplicate query configuration id "${qc.id}" (first used by /queryConfigurations/${first})` });
    } else {
      problems.push({ pointer: `${base}/id`, message: 'id is required: a string unique within the scenario' });
    }
    problems.push(...checkQuery(qc.query, `${base}/query`, rules));
    const unique = rules.policy.requestId?.unique;
    if (unique !== undefined && isRecord(qc.query) && qc.query.requestId !== undefined) {
      const rid = qc.query.requestId;
      const key = String(rid); // 7 and "7" are the same request
      const first = requestIds.get(key);
      if (first === undefined) requestIds.set(key, i);
      else {
        problems.push({
          pointer: `${base}/query/requestId`,
          message: `duplicate requestId ${String(rid)} (first used by /queryConfigurations/${first}); ${unique}`,
        });
      }
    }
  });
  return problems;
}
