import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { sharedSchemas } from '../schemas/index.js';
import type { Scenario } from '../schemas/scenario.js';

/**
 * The most Ajv errors the explaining pass collects before it stops (see `bounded`). Several Ajv errors make one field
 * error (a union reports each branch), so this leaves room for the MAX_FIELD_ERRORS a problem lists, and more.
 */
export const AJV_ERROR_BUDGET = 200;

/**
 * Ajv's `code.process` hook: makes a validator compiled with allErrors stop once it holds more than AJV_ERROR_BUDGET
 * errors. Ajv counts its errors in the generated function's `errors` variable, once per error (`errors++`) and after
 * merging those of a referenced schema's function (`errors = vErrors.length`); after each, the function now returns
 * false, with its errors, when the count is over the budget. Throws when the generated code is not as expected (another
 * Ajv version): a validator without the stop must not run.
 */
function stopOverBudget(code: string): string {
  const name = /return function (validate\d+)\(/.exec(code)?.[1];
  if (name === undefined) throw new Error('Ajv generated an unexpected validator: cannot bound its errors');
  const stop = `if(errors>${AJV_ERROR_BUDGET}){${name}.errors=vErrors;return false;}`;
  let counted = 0;
  const out = code.replace(/errors\+\+;|errors = vErrors\.length;/g, (m) => {
    counted++;
    return `${m}${stop}`;
  });
  if (counted === 0 && /vErrors\.push\(/.test(code)) throw new Error('Ajv generated an unexpected validator: cannot bound its errors');
  return out;
}

/**
 * Two Ajv instances per kind of input: bodies are validated exactly as sent (no coercion, unknown fields refused, not
 * stripped); query strings, params and headers are text, so there numbers are coerced from strings. `allErrors`
 * false decides (it stops at the first error); `allErrors` true, bounded, explains.
 */
function createAjv(coerce: boolean, explain: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce,
    removeAdditional: false,
    useDefaults: true,
    allErrors: explain,
    strict: false,
    ...(explain && { code: { process: stopOverBudget } }),
  });
  // A CommonJS module whose types declare only its `default` (which it also exports, as itself).
  addFormats.default(ajv);
  for (const schema of sharedSchemas) ajv.addSchema(schema);
  return ajv;
}

/**
 * A validator whose errors are bounded and cost a bounded time. Ajv with allErrors reports every error of a body, and
 * a 32 KB body of 16,000 wrong array items has 16,000 of them, each costing more than the last (Ajv merges a referenced
 * schema's errors by copying the list): seconds of the event loop. So `decide` (allErrors off: linear in the body, and
 * it stops at the first error) says whether the body is valid; only an invalid one runs `explain` (allErrors on,
 * stopped past AJV_ERROR_BUDGET errors), for the fields to name. A valid body is validated once.
 */
function bounded<T>(decide: ValidateFunction<T>, explain: ValidateFunction<T>): ValidateFunction<T> {
  const fields: Pick<ValidateFunction<T>, 'errors' | 'schema' | 'schemaEnv'> = { errors: null, schema: decide.schema, schemaEnv: decide.schemaEnv };
  const validate = Object.assign((data: unknown): data is T => {
    if (decide(data)) {
      validate.errors = null;
      return true;
    }
    // The explaining pass always fails where the deciding one did; its errors say more.
    explain(data);
    validate.errors = explain.errors ?? decide.errors;
    return false;
  }, fields);
  return validate;
}

/** A synchronous validator of a registered schema (an $async one, which none of this service's is, answers a Promise). */
function registered<T>(validate: ValidateFunction<T> | undefined, name: string): ValidateFunction<T> {
  if (validate === undefined || '$async' in validate) throw new Error(`the ${name} schema is not registered`);
  return validate;
}

/** Whether Ajv stopped collecting these errors at the budget: there are more than it lists. */
export const overBudget = (errors: readonly unknown[]): boolean => errors.length > AJV_ERROR_BUDGET;

export interface Validators {
  /** The whole-Scenario validator, for the document a merge patch produces. */
  scenario: ValidateFunction<Scenario>;
}

export function installValidators(app: FastifyInstance): Validators {
  const ajv = {
    body: { decide: createAjv(false, false), explain: createAjv(false, true) },
    text: { decide: createAjv(true, false), explain: createAjv(true, true) },
  };
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const { decide, explain } = httpPart === 'body' ? ajv.body : ajv.text;
    return bounded(decide.compile(schema), explain.compile(schema));
  });
  for (const schema of sharedSchemas) app.addSchema(schema);
  const decide = registered(ajv.body.decide.getSchema<Scenario>('Scenario'), 'Scenario');
  return { scenario: bounded(decide, registered(ajv.body.explain.getSchema<Scenario>('Scenario'), 'Scenario')) };
}
