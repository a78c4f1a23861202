/**
 * Issue 25, item 3 (amplification): an execute's answer and audit record, and a listing's page, are bounded in bytes
 * and do not grow with a scenario's value lists or with the credentials times the rules.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { openSqliteStore } from '../src/store/sqlite.js';
import type { Store } from '../src/store/types.js';
import type { Scenario } from '../src/schemas/scenario.js';
import type { ExecutionResult } from '../src/schemas/execution.js';
import { CREDENTIAL_REASONS } from '../src/engine/challenge-query.js';
import { VALUE_QUOTE_BYTES } from '../src/engine/query.js';
import { MAX_RULES_BYTES } from '../src/engine/validate.js';
import { MAX_RESULTS_BYTES } from '../src/engine/result.js';
import { PAGE_MAX_BYTES } from '../src/store/rows.js';
import { ADDRESS, auth, credential, demoCredential, makeApp, scenario, tempDir } from './helpers.js';

/** `count` distinct short values: 256 of them are ~2.8 KB of JSON, as in the issue's scenario. */
const values = (count: number) => Array.from({ length: count }, (_, i) => `country-${i}`);
const inRule = (i: number, list: string[]) => ({ id: `q${i}`, query: { type: 'IDInformation', attribute: 'personalData.citizenship', operator: '$in', value: list } });
const bytes = (text: string) => Buffer.byteLength(text);

let app: FastifyInstance;
let store: Store;
beforeAll(async () => {
  store = openSqliteStore({ file: path.join(tempDir(), 'bounded.db'), synchronous: 'NORMAL' });
  app = await makeApp({}, { store });
});
afterAll(async () => {
  await app.close();
});

const execute = (scenarioId: string, credentials: unknown[]) =>
  app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials, scenarioId } });
const create = (id: string, input: unknown) =>
  app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id, input } });

describe('execute answers and audit records', () => {
  it('answers a 94-byte execute of 256 rules of 256 $in values (the issue\'s scenario) in under 256 KiB, and records the same', async () => {
    // The scenario of the issue (~730 KB of rules) is refused at create now; one stored before that cap still runs.
    const rules = Array.from({ length: 256 }, (_, i) => inRule(i, values(256)));
    await store.create('wide', scenario({ queryConfigurations: rules }) as unknown as Scenario, new Date().toISOString());
    const body = JSON.stringify({ address: ADDRESS, credentials: [], scenarioId: 'wide' });
    expect(bytes(body)).toBeLessThan(100);
    const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: { ...auth, 'content-type': 'application/json' }, payload: body });
    expect(res.statusCode).toBe(200);
    // On main: 2.2 MB (each result echoed its 256 values, and its reason quoted them again).
    expect(bytes(res.body)).toBeLessThan(256 * 1024);
    const results = res.json() as ExecutionResult[];
    expect(results).toHaveLength(256);
    for (const r of results) {
      expect(r.result.query.valueCount).toBe(256);
      expect(bytes(JSON.stringify(r.result.query.value))).toBeLessThanOrEqual(VALUE_QUOTE_BYTES);
      expect(r.result.query.value).toEqual(values(256).slice(0, (r.result.query.value as string[]).length));
      expect(r.result.result.reasons[0]).toBe('expected a usable IDInformation credential with personalData.citizenship $in (a list of 256 values)');
    }
    const record = await app.inject({ method: 'GET', url: `/compliance/executions/${results[0]!.executionId}`, headers: auth });
    expect(record.json().results).toEqual(results);
    expect(bytes(record.body)).toBeLessThan(256 * 1024 + 1024);
  });

  it('echoes and quotes a short list whole', async () => {
    expect((await create('short', scenario({ queryConfigurations: [inRule(0, ['FRA', 'DEU'])] }))).statusCode).toBe(201);
    const [r] = (await execute('short', [await demoCredential({ personalData: { citizenship: 'ITA' } })])).json() as ExecutionResult[];
    expect(r!.result.query).toEqual({ type: 'IDInformation', attribute: 'personalData.citizenship', value: ['FRA', 'DEU'], operator: '$in' });
    expect(r!.result.result.reasons).toEqual([
      'expected a usable IDInformation credential with personalData.citizenship $in ["FRA","DEU"]',
      expect.stringMatching(/^credential #1 \(urn:uuid:.*\): personalData.citizenship is not \$in \["FRA","DEU"\]$/),
    ]);
  });

  it('never quotes a long list in reasons, not even per credential', async () => {
    expect((await create('long', scenario({ queryConfigurations: [inRule(0, values(40))] }))).statusCode).toBe(201);
    const [r] = (await execute('long', [await demoCredential({ personalData: { citizenship: 'ITA' } })])).json() as ExecutionResult[];
    expect(r!.result.result.reasons[1]).toMatch(/personalData.citizenship is not \$in \(a list of 40 values\)$/);
    expect(JSON.stringify(r!.result.result.reasons)).not.toContain('country-39');
  });

  it(`names at most ${CREDENTIAL_REASONS} credentials in a failed rule's reasons, and counts the others`, async () => {
    const credentials = Array.from({ length: 25 }, () => credential({}, { personalData: { citizenship: 'ITA' } }));
    const [r] = (await execute('short', credentials)).json() as ExecutionResult[];
    const reasons = r!.result.result.reasons;
    // On main: 26 lines, one per credential.
    expect(reasons).toHaveLength(1 + CREDENTIAL_REASONS + 1);
    expect(reasons[CREDENTIAL_REASONS]).toMatch(/^credential #10 /);
    expect(reasons.at(-1)).toBe(`15 more credentials of type IDInformation did not pass either (at most ${CREDENTIAL_REASONS} are listed)`);
  });

  it(`keeps an execute at the limits (256 long rules, 100 credentials with long ids) within ${MAX_RESULTS_BYTES} bytes`, async () => {
    const attribute = `a${'b'.repeat(190)}`;
    // A type whose context the service does not hold, so that its made-up long attribute passes create unchecked.
    const rules = Array.from({ length: 256 }, (_, i) => ({ id: `r${i}`, query: { type: 'ProofOfResidence', attribute, operator: '$exists', value: true } }));
    const name = '"'.repeat(256); // escaped in JSON: twice its length
    expect(bytes(JSON.stringify(rules))).toBeLessThanOrEqual(MAX_RULES_BYTES);
    expect((await create('heavy', scenario({ name, queryConfigurations: rules }))).statusCode).toBe(201);
    const credentials = Array.from({ length: 100 }, (_, i) => credential({ id: `urn:x:${i}:${'i'.repeat(500)}`, type: ['VerifiableCredential', 'ProofOfResidence'] }));
    const res = await execute('heavy', credentials);
    expect(res.statusCode).toBe(200);
    // On main: ~22 MB (100 lines of reasons per rule).
    expect(bytes(res.body)).toBeLessThanOrEqual(MAX_RESULTS_BYTES);
    const results = res.json() as ExecutionResult[];
    for (const r of results) {
      expect(r.result.status).toBe('not-valid');
      expect(r.result.result.reasons).toEqual([
        `expected a usable ProofOfResidence credential with ${attribute} $exists true`,
        `${CREDENTIAL_REASONS + 1} more reasons not listed: this execution's results were over ${MAX_RESULTS_BYTES} bytes (send fewer credentials to see them)`,
      ]);
    }
    const record = await app.inject({ method: 'GET', url: `/compliance/executions/${results[0]!.executionId}`, headers: auth });
    expect(record.json().results).toEqual(results);
  });

  it(`refuses at create and PATCH rules over ${MAX_RULES_BYTES} bytes of JSON, naming the field`, async () => {
    const rules = Array.from({ length: 256 }, (_, i) => inRule(i, values(256)));
    const created = await create('too-wide', scenario({ queryConfigurations: rules }));
    // On main: 201, and every execute of it answered 2.2 MB.
    expect(created.statusCode).toBe(400);
    expect(created.json().errors).toEqual([{
      field: 'body.input.queryConfigurations', pointer: '/input/queryConfigurations', message: expect.stringMatching(/^must be at most 131072 bytes as JSON \(128 KiB\), not \d+/),
    }]);
    const patched = await app.inject({ method: 'PATCH', url: '/compliance/scenarios/short', headers: auth, payload: { input: { queryConfigurations: rules } } });
    expect(patched.statusCode).toBe(400);
    expect(patched.json().errors).toEqual([expect.objectContaining({ field: 'body.input.queryConfigurations' })]);
  });
});

describe('listing executions', () => {
  it(`ends a page at ${PAGE_MAX_BYTES} bytes of records, and the cursor walks them all`, async () => {
    const at = new Date().toISOString();
    // Records of ~300 KB each, as executes of a scenario stored before the caps could write.
    const reason = 'x'.repeat(300 * 1024);
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const executionId = crypto.randomUUID();
      ids.push(executionId);
      const result = {
        objectType: 'ChallengeQuery' as const, objectId: 'q', name: 'n', address: ADDRESS, scenarioId: 'listed', executionId,
        result: { result: { is_valid: false, reasons: [reason] }, executionId, status: 'not-valid' as const, query: { type: 'T', operator: '$noop' as const } },
      };
      await store.recordExecution({
        executionId, scenarioId: 'listed', scenarioRevision: 1, projectId: null, address: ADDRESS, state: 'completed',
        results: [result], credentials: [], createdAt: at, updatedAt: at,
      });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await app.inject({ method: 'GET', url: `/compliance/scenarios/listed/executions?limit=100${cursor ? `&cursor=${cursor}` : ''}`, headers: auth });
      expect(res.statusCode).toBe(200);
      // On main: one page of all 12 (3.7 MB); 100 records of a large scenario were 335 MB.
      expect(bytes(res.body)).toBeLessThanOrEqual(PAGE_MAX_BYTES + 4096);
      const page = res.json() as { items: Array<{ executionId: string }>; nextCursor: string | null };
      expect(page.items.length).toBeGreaterThan(0);
      seen.push(...page.items.map((e) => e.executionId));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual(ids.reverse());
  });
});
