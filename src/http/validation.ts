import { Ajv, Name, _, type CodeKeywordDefinition, type SchemaObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { sharedSchemas } from '../schemas/index.js';
import type { Scenario } from '../schemas/scenario.js';

/** Room for MAX_FIELD_ERRORS fields, a union's branches included. */
export const AJV_ERROR_BUDGET = 200;

const BUDGET_KEYWORD = 'x-error-budget';

// Where Ajv's generated functions hold their errors (ajv/dist/compile/names).
const errors = new Name('errors');
const vErrors = new Name('vErrors');
/** In every subschema (`withBudget`): past the budget, the function returns false with its errors. */
const errorBudget: CodeKeywordDefinition = {
  keyword: BUDGET_KEYWORD,
  schemaType: 'number',
  code(cxt) {
    cxt.gen.if(_`${errors} > ${cxt.schema}`, () => cxt.gen.assign(_`${cxt.it.validateName}.errors`, vErrors).return(false));
  },
};

const SUBSCHEMAS = new Set(['items', 'additionalItems', 'additionalProperties', 'contains', 'not', 'if', 'then', 'else', 'propertyNames',
  'unevaluatedItems', 'unevaluatedProperties', 'anyOf', 'allOf', 'oneOf', 'prefixItems']);
const MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

// Ajv caches by schema object and refuses a second schema of one $id.
const budgeted = new WeakMap<object, SchemaObject>();

function withBudget(schema: object): SchemaObject {
  const known = budgeted.get(schema);
  if (known !== undefined) return known;
  const copy = budgetCopy(schema);
  budgeted.set(schema, copy);
  return copy;
}

function budgetCopy(schema: object): SchemaObject {
  const copy: SchemaObject = { [BUDGET_KEYWORD]: AJV_ERROR_BUDGET };
  for (const [key, value] of Object.entries(schema)) {
    if (SUBSCHEMAS.has(key)) copy[key] = subschemas(value);
    else if (MAPS.has(key) && typeof value === 'object' && value !== null) {
      copy[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, subschemas(sub)]));
    } else copy[key] = value;
  }
  return copy;
}

function subschemas(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(subschemas);
  return typeof value === 'object' && value !== null ? budgetCopy(value) : value;
}

/** Query strings, params and headers are text: their numbers are coerced. */
function createAjv(coerce: boolean, explain: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce,
    removeAdditional: false,
    useDefaults: true,
    allErrors: explain,
    strict: false,
  });
  if (explain) ajv.addKeyword(errorBudget);
  addFormats.default(ajv);
  for (const schema of sharedSchemas) ajv.addSchema(explain ? withBudget(schema) : schema);
  return ajv;
}

const explainers = new WeakMap<ValidateFunction, ValidateFunction>();

/** Lists a bounded validator's errors before the cut. */
export const explainerOf = (validate: ValidateFunction): ValidateFunction | undefined => explainers.get(validate);

/** Unbounded, allErrors costs seconds for 16,000 wrong items: `explain` runs only where `decide` failed. */
function bounded<T>(decide: ValidateFunction<T>, explain: ValidateFunction<T>): ValidateFunction<T> {
  const fields: Pick<ValidateFunction<T>, 'errors' | 'schema' | 'schemaEnv'> = { errors: null, schema: decide.schema, schemaEnv: decide.schemaEnv };
  const validate = Object.assign((data: unknown): data is T => {
    if (decide(data)) {
      validate.errors = null;
      return true;
    }
    explain(data);
    validate.errors = explain.errors?.slice(0, AJV_ERROR_BUDGET + 1) ?? decide.errors;
    return false;
  }, fields);
  explainers.set(validate, explain);
  return validate;
}

function registered<T>(validate: ValidateFunction<T> | undefined, name: string): ValidateFunction<T> {
  if (validate === undefined || '$async' in validate) throw new Error(`the ${name} schema is not registered`);
  return validate;
}

/** Whether Ajv stopped at the budget: there are more errors than it lists. */
export const overBudget = (errors: readonly unknown[]): boolean => errors.length > AJV_ERROR_BUDGET;

export interface Validators {
  /** For the document a merge patch produces. */
  scenario: ValidateFunction<Scenario>;
}

export function installValidators(app: FastifyInstance): Validators {
  const ajv = {
    body: { decide: createAjv(false, false), explain: createAjv(false, true) },
    text: { decide: createAjv(true, false), explain: createAjv(true, true) },
  };
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const { decide, explain } = httpPart === 'body' ? ajv.body : ajv.text;
    return bounded(decide.compile(schema), explain.compile(withBudget(schema)));
  });
  for (const schema of sharedSchemas) app.addSchema(schema);
  const decide = registered(ajv.body.decide.getSchema<Scenario>('Scenario'), 'Scenario');
  return { scenario: bounded(decide, registered(ajv.body.explain.getSchema<Scenario>('Scenario'), 'Scenario')) };
}
