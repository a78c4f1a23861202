import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { sharedSchemas } from '../schemas/index.js';
import type { Scenario } from '../schemas/scenario.js';

/**
 * Two Ajv instances: bodies are validated exactly as sent (no coercion, unknown fields refused, not stripped);
 * query strings, params and headers are text, so there numbers are coerced from strings.
 */
function createAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: coerce,
    removeAdditional: false,
    useDefaults: true,
    allErrors: true,
    strict: false,
  });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  for (const schema of sharedSchemas) ajv.addSchema(schema);
  return ajv;
}

export interface Validators {
  body: Ajv;
  text: Ajv;
  /** The whole-Scenario validator, for the document a merge patch produces. */
  scenario: ValidateFunction<Scenario>;
}

export function installValidators(app: FastifyInstance): Validators {
  const body = createAjv(false);
  const text = createAjv(true);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema as FastifySchema));
  for (const schema of sharedSchemas) app.addSchema(schema);
  const scenario = body.getSchema<Scenario>('Scenario');
  if (scenario === undefined) throw new Error('the Scenario schema is not registered');
  return { body, text, scenario: scenario as ValidateFunction<Scenario> };
}
