/**
 * The same schema checks the variables and writes docs/configuration.md, so checks and docs cannot part. Ajv's own
 * coercion is off: it takes `0x10` for 16.
 */
import { Type, type Static, type TObject, type TProperties, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { envSchema } from 'env-schema';
import { ConfigError } from './errors.js';

export type Env = Record<string, string | undefined>;

export interface Described {
  description: string;
  docDefault?: string;
}

const ANNOTATIONS = ['docDefault', 'expect'];

const TRUE = /^(1|true|yes|on)$/i;
const FALSE = /^(0|false|no|off)$/i;

export function integer(min: number, max: number, options: Described & { default?: number }) {
  return Type.Integer({ minimum: min, maximum: max, ...options });
}

export function flag(options: Described & { default: boolean }) {
  return Type.Boolean(options);
}

export function oneOf<const T extends string>(values: readonly T[], options: Described & { default?: T }): TUnsafe<T> {
  return Type.Unsafe<T>(Type.Union(values.map((v) => Type.Literal(v)), options));
}

export function text(options: Described & { expect: string; default?: string; pattern?: string }) {
  return Type.String(options);
}

function alternatives(schema: TSchema): TSchema[] {
  return Array.isArray(schema.anyOf) ? schema.anyOf : [schema];
}

function coerce(schema: TSchema, value: string): unknown {
  const members = alternatives(schema);
  const word = members.find((m) => typeof m.const === 'string' && m.const.toLowerCase() === value.toLowerCase());
  if (word) return word.const;
  if (members.some((m) => m.type === 'integer') && /^\d+$/.test(value)) return Number(value);
  if (members.some((m) => m.type === 'boolean')) {
    if (TRUE.test(value)) return true;
    if (FALSE.test(value)) return false;
  }
  return value;
}

export function expectation(schema: TSchema, word: (w: string) => string = (w) => w): string {
  const parts = alternatives(schema).map((m): string => {
    if (m.const !== undefined) return word(String(m.const));
    if (m.type === 'integer') return `an integer from ${m.minimum} to ${m.maximum}`;
    if (m.type === 'boolean') return `${word('true')} or ${word('false')}`;
    return String(schema.expect ?? m.expect ?? 'text');
  });
  return parts.length <= 2 ? parts.join(' or ') : `one of ${parts.join(', ')}`;
}

/** Text may be a URL with a key. */
function quotable(schema: TSchema): boolean {
  return alternatives(schema).every((m) => m.type !== 'string' || m.const !== undefined);
}

function problem(name: string, schema: TSchema, raw: string | undefined): string {
  const got = quotable(schema) ? ` (got ${JSON.stringify(raw)})` : '';
  return `${name} must be ${expectation(schema)}${got}`;
}

function variableOf(error: ErrorObject): string | undefined {
  const missing: unknown = error.params.missingProperty;
  const name = error.instancePath.split('/')[1] ?? (typeof missing === 'string' ? missing : undefined);
  return name || undefined;
}

/** process.env and .env files are never read: `env` alone counts. Throws ConfigError naming the first bad variable. */
export function readEnv<T extends TObject>(schema: T, env: Env): Static<T> {
  const data: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(schema.properties)) {
    const value = env[name]?.trim();
    if (value) data[name] = coerce(variable, value);
  }
  // A validator per read: loadConfig runs once per process. validateSchema off: the meta-schema check doubled the cost.
  const ajv = new Ajv({ validateSchema: false, allErrors: false, useDefaults: true, coerceTypes: false, removeAdditional: true, keywords: ANNOTATIONS });
  try {
    // A copy: env-schema sets additionalProperties on the schema it is given.
    return envSchema<Static<T>>({ schema: { ...schema }, data, env: false, dotenv: false, ajv });
  } catch (err) {
    const errors: unknown = err instanceof Error && 'errors' in err ? err.errors : undefined;
    const first: ErrorObject | undefined = Array.isArray(errors) ? errors[0] : undefined;
    const name = first && variableOf(first);
    const variable = name === undefined ? undefined : schema.properties[name];
    if (name === undefined || variable === undefined) throw err;
    throw new ConfigError(problem(name, variable, env[name]));
  }
}

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type Composed<T extends TObject[]> = Intersection<T[number]['properties']> extends infer P extends TProperties ? TObject<P> : never;

export function composeSchemas<T extends TObject[]>(...schemas: T): Composed<T> {
  const properties: Record<string, TSchema> = {};
  for (const schema of schemas) {
    for (const [name, variable] of Object.entries(schema.properties)) {
      if (name in properties) throw new Error(`configuration variable ${name} is declared twice`);
      properties[name] = variable;
    }
  }
  return Type.Object(properties) as Composed<T>;
}

export function httpUrl(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    const u = new URL(value);
    if (u.protocol === 'http:' || u.protocol === 'https:') return value.replace(/\/+$/, '');
  } catch { /* below */ }
  throw new ConfigError(`${name} must be an http(s) URL`);
}
