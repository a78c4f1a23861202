/** ExecutionLifecycle.evaluate: the verdicts execute gives, with no record, no webhook and no attestation stored. */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeAdapters, type Adapters } from '../../src/adapters.js';
import { loadConfig } from '../../src/config.js';
import { contentDigest } from '../../src/domain/canonical-json.js';
import type { Credential } from '../../src/schemas/credential.js';
import type { ExecutionResult } from '../../src/schemas/execution.js';
import { exampleOffChainScenario } from '../../src/schemas/example-offchain.js';
import type { Scenario } from '../../src/schemas/scenario.js';
import { accessFor } from '../../src/services/access.js';
import { ADDRESS, TOKEN, credential, demoCredential, scenario, tempDir } from '../helpers.js';
import { iden3DocumentsEnv } from '../shared-fixtures.js';

const OPERATOR = accessFor('*');
const HOOKS = { WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, WEBHOOK_URL: 'https://hooks.example/in' };
let adapters: Adapters;

beforeAll(async () => {
  const config = loadConfig({
    DATA_DIR: tempDir(), API_TOKENS: TOKEN, CREDENTIAL_VERIFICATION: 'strict', DEMO_ISSUER: '1', VERIFY_THREADS: '0',
    ...HOOKS, ...iden3DocumentsEnv(),
  });
  adapters = await composeAdapters(config, {}, Fastify({ logger: false }).log);
});
afterAll(async () => {
  await adapters.verifier.close();
  await adapters.store.close();
});

async function stored(id: string, input: Record<string, unknown>): Promise<Scenario> {
  const row = await adapters.store.create(id, input as unknown as Scenario, new Date().toISOString());
  if (!row) throw new Error(`scenario ${id} exists`);
  return row.input;
}

const subject = (credentials: Credential[]) => ({
  address: ADDRESS, credentials, digests: () => credentials.map((c) => contentDigest(c)), tenant: 'test',
});

/** Results without the execution id each run draws anew (results carry it in several places). */
const comparable = (results: readonly ExecutionResult[]) => {
  const text = JSON.stringify(results);
  return JSON.parse(results[0] ? text.replaceAll(results[0].executionId, '(id)') : text) as unknown;
};

async function recordsOf(scenarioId: string) {
  return (await adapters.store.listExecutions(scenarioId, 100, undefined, undefined)).items.length;
}

describe('evaluate', () => {
  const cases: Array<[string, () => Promise<Record<string, unknown>>, () => Promise<Credential[]>, string[]]> = [
    ['ChallengeQuery, a verified credential that passes', async () => scenario(), async () => [await demoCredential() as Credential], ['valid', 'valid']],
    ['ChallengeQuery, a credential that fails the age rule', async () => scenario(), async () => [await demoCredential({ personalData: { age: 12 } }) as Credential], ['valid', 'not-valid']],
    ['ChallengeQuery, a credential whose proof does not verify', async () => scenario(), async () => [credential() as unknown as Credential], ['not-valid', 'not-valid']],
    ['OffChainZKP where it is not configured', async () => exampleOffChainScenario as unknown as Record<string, unknown>, async () => [], ['error', 'error', 'error', 'error']],
  ];

  for (const [name, input, credentials, statuses] of cases) {
    it(`gives the results execute gives and stores nothing: ${name}`, async () => {
      const id = `dry-${name.replace(/\W+/g, '-')}`;
      const document = await stored(id, await input());
      const sent = await credentials();
      const executed = await adapters.executions.execute({ ...subject(sent), scenarioId: id, access: OPERATOR }, { serialize: JSON.stringify });
      expect(await recordsOf(id)).toBe(1);

      const byId = await adapters.executions.evaluate({ ...subject(sent), scenarioId: id, access: OPERATOR });
      const whole = await adapters.executions.evaluate({ ...subject(sent), scenarioId: id, revision: 1, scenario: document, access: OPERATOR });
      expect(executed.results.map((r) => r.result.status)).toEqual(statuses);
      expect(comparable(byId.results)).toEqual(comparable(executed.results));
      expect(comparable(whole.results)).toEqual(comparable(executed.results));
      expect(byId.results.every((r) => r.executionId === byId.executionId)).toBe(true);

      expect(await recordsOf(id)).toBe(1);
      for (const { executionId } of [byId, whole]) {
        expect(await adapters.store.getExecution(executionId)).toBeUndefined();
        expect(await adapters.store.webhooksOf(executionId)).toEqual([]);
      }
      const [recorded] = executed.results;
      if (recorded) expect(await adapters.store.webhooksOf(recorded.executionId)).toHaveLength(1);
    });
  }

  it('keeps tenancy: another project\'s stored scenario is not found, another project\'s scenario given whole is refused', async () => {
    const input = scenario({ projectId: 'projA' });
    const document = await stored('dry-tenancy', input);
    const projectB = accessFor(new Set(['projB']));
    await expect(adapters.executions.evaluate({ ...subject([]), scenarioId: 'dry-tenancy', access: projectB }))
      .rejects.toMatchObject({ code: 'SCS_SCENARIO_NOT_FOUND', statusCode: 404 });
    await expect(adapters.executions.evaluate({ ...subject([]), scenarioId: 'dry-tenancy', revision: 1, scenario: document, access: projectB }))
      .rejects.toMatchObject({ code: 'SCS_FORBIDDEN_PROJECT', statusCode: 403 });
    expect((await adapters.executions.evaluate({ ...subject([]), scenarioId: 'dry-tenancy', access: accessFor(new Set(['projA'])) })).results).toHaveLength(2);
    expect(await recordsOf('dry-tenancy')).toBe(0);
  });
});
