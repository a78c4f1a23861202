/**
 * A small body may fail in a great many places (16,000 wrong array items fit in 32 KB; 140,000 `1e-400`s in 980 KB).
 * The service refuses it naming the first MAX_FIELD_ERRORS failing fields and `errorsTruncated: true`, in an answer
 * of a few KB, whatever the number of failures: it stops looking instead of listing (and paying for) every one.
 * Durations are measured by `bench/refusals.mjs`, not here.
 */
import type { ValidateFunction } from 'ajv';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AJV_ERROR_BUDGET, explainerOf, installValidators } from '../src/http/validation.js';
import { MAX_FIELD_ERRORS } from '../src/schemas/problem.js';
import type { Scenario } from '../src/schemas/scenario.js';
import { ADDRESS, auth, makeApp, scenario } from './helpers.js';

type App = Awaited<ReturnType<typeof makeApp>>;

const list = (item: string, n: number) => `[${Array(n).fill(item).join(',')}]`;
const scenarioText = (rules: string, more = '') =>
  `{"name":"N","type":"ChallengeQuery","smartContractDeployments":[],"queryConfigurations":${rules}${more}}`;
const rule = (value: string) => `{"id":"q","query":{"type":"IDInformation","attribute":"reviewAnswer","operator":"$in","value":${value}}}`;

/** The request bodies of the issue, and others failing in every item or key. */
const bodies = {
  'execute, 16,000 numbers as credentials': ['POST', '/compliance/scenarios/execute', `{"address":"${ADDRESS}","scenarioId":"s","credentials":${list('1', 16_000)}}`],
  'create, 16,000 numbers as rules': ['POST', '/compliance/scenarios', `{"input":${scenarioText(list('1', 16_000))}}`],
  'create, an $in list of 16,000 true': ['POST', '/compliance/scenarios', `{"input":${scenarioText(`[${rule(list('true', 16_000))}]`)}}`],
  'PATCH, an $in list of 16,000 true': ['PATCH', '/compliance/scenarios/s', `{"input":{"queryConfigurations":[${rule(list('true', 16_000))}]}}`],
  // One object of more keys than MAX_JSON_KEYS is refused before Ajv (SCS_TOO_MANY_KEYS, test/protection.test.ts).
  'create, 20,000 unknown fields: 20 rules of 1,000 (the most keys an object may have)': ['POST', '/compliance/scenarios',
    `{"input":${scenarioText(list(`{${Array.from({ length: 1000 }, (_, i) => `"k${i}":1`).join(',')}}`, 20))}}`],
  'create, 256 rules of 256 true each (within every maxItems)': ['POST', '/compliance/scenarios',
    `{"input":${scenarioText(list(rule(list('true', 256)), 256))}}`],
  'create, 140,000 numbers 1e-400 (980 KB)': ['POST', '/compliance/scenarios', `{"input":${scenarioText(`[${rule(list('1e-400', 140_000))}]`)}}`],
  'create, 20,000 strings holding U+0000': ['POST', '/compliance/scenarios', `{"input":${scenarioText('[]', `,"vcsIncluded":${list('"\\u0000"', 20_000)}`)}}`],
} as const;

describe('a body failing in thousands of places', () => {
  let app: App;
  beforeAll(async () => {
    app = await makeApp({ RATE_LIMIT_MAX: '0' });
    const res = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 's', input: scenario() } });
    expect(res.statusCode).toBe(201);
  });
  afterAll(async () => app.close());

  for (const [what, [method, url, payload]] of Object.entries(bodies)) {
    it(`is refused naming ${MAX_FIELD_ERRORS} fields and saying there are more, in a few KB: ${what}`, async () => {
      expect(payload.length).toBeLessThan(1024 * 1024);
      const res = await app.inject({
        method, url, payload,
        headers: { ...auth, 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' },
      });
      expect(res.statusCode).toBe(400);
      const problem = res.json();
      expect(problem.code).toBe('SCS_VALIDATION');
      expect(problem.errors).toHaveLength(MAX_FIELD_ERRORS);
      expect(problem.errorsTruncated).toBe(true);
      // One entry per field, each naming it.
      expect(new Set(problem.errors.map((e: { pointer: string; message: string }) => `${e.pointer} ${e.message}`)).size).toBe(MAX_FIELD_ERRORS);
      for (const e of problem.errors) expect(e.field).toBe(`body${e.pointer.replace(/\//g, '.')}`);
      expect(res.body.length).toBeLessThan(8 * 1024);
    });
  }

  it('names the limit first where an array is over it', async () => {
    const [method, url, payload] = bodies['execute, 16,000 numbers as credentials'];
    const res = await app.inject({ method, url, payload, headers: { ...auth, 'content-type': 'application/json' } });
    expect(res.json().errors[0]).toEqual({ field: 'body.credentials', pointer: '/credentials', message: 'must NOT have more than 100 items' });
  });

  it('lists every failing field, without errorsTruncated, when there are no more than the bound', async () => {
    const res = await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: auth,
      payload: { input: { ...scenario(), vcsIncluded: Array(MAX_FIELD_ERRORS).fill(7) } },
    });
    const problem = res.json();
    expect(problem.errors.map((e: { field: string }) => e.field)).toEqual(Array.from({ length: MAX_FIELD_ERRORS }, (_, i) => `body.input.vcsIncluded.${i}`));
    expect(problem).not.toHaveProperty('errorsTruncated');
  });
});

describe('the validator of the scenario after a PATCH', () => {
  it('stops collecting errors past its budget, and still decides a valid scenario valid', () => {
    const { scenario: validate } = installValidators(Fastify());
    const bad = { ...scenario(), queryConfigurations: Array(16_000).fill(1) } as unknown as Scenario;
    expect(validate(bad)).toBe(false);
    // Ajv's own list, before the cut: the x-error-budget keyword stopped it.
    const collected = explainerOf(validate)!.errors!.length;
    expect(collected).toBeGreaterThan(AJV_ERROR_BUDGET);
    expect(collected).toBeLessThanOrEqual(2 * AJV_ERROR_BUDGET);
    expect(validate.errors!.length).toBeGreaterThan(AJV_ERROR_BUDGET);
    expect(validate.errors!.length).toBeLessThanOrEqual(AJV_ERROR_BUDGET + 1);
    expect(validate(scenario() as unknown as Scenario)).toBe(true);
    expect(validate.errors).toBeNull();
  });
});

describe('a route\'s validator', () => {
  const compile = () => {
    const app = Fastify();
    installValidators(app);
    return (schema: object) => app.validatorCompiler!({ schema, method: 'POST', url: '/', httpPart: 'body' }) as ValidateFunction;
  };

  it('stops collecting errors past its budget', () => {
    const validate = compile()({ type: 'array', items: { type: 'string' } });
    expect(validate(Array(16_000).fill(1))).toBe(false);
    const collected = explainerOf(validate)!.errors!.length;
    expect(collected).toBeGreaterThan(AJV_ERROR_BUDGET);
    expect(collected).toBeLessThanOrEqual(2 * AJV_ERROR_BUDGET);
  });

  it('compiles a schema with an $id twice, as two routes sharing it do', () => {
    const schema = { $id: 'Shared', type: 'object', properties: { n: { type: 'integer' } } };
    const validate = compile();
    const [first, second] = [validate(schema), validate(schema)];
    expect(second({ n: 'x' })).toBe(false);
    expect(explainerOf(second)).toBe(explainerOf(first));
  });
});
