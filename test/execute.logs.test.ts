/**
 * The log of an execute: its completion line names the scenario and the execution and counts the results by status,
 * and carries neither the address nor anything of the credentials.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADDRESS, auth, demoCredential, makeApp, scenario } from './helpers.js';
import { first } from './elements.js';

let app: FastifyInstance;
const logged: string[] = [];
const lines = () => logged.join('').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(async () => {
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logged.push(String(chunk));
      done();
    },
  });
  app = await makeApp({}, { logger: { level: 'info', stream } });
  // q-kyc passes for the demo credential, q-age (at least 40) does not: one valid and one not-valid result.
  const ageAtLeast40 = scenario().queryConfigurations.map((q) => (q.id === 'q-age' ? { ...q, query: { ...q.query, value: 40 } } : q));
  for (const [id, input] of [
    ['mixed', scenario({ queryConfigurations: ageAtLeast40 })],
    // OnChainZKP with no deployment to read: every rule answers error.
    ['onchain', scenario({ type: 'OnChainZKP', queryConfigurations: [{ id: 'q-kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } }] })],
  ] as const) {
    const res = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id, input } });
    expect(res.statusCode, res.body).toBe(201);
  }
});
afterAll(async () => {
  await app.close();
});

/** Executes `scenarioId` with one demo-issuer credential; its results and the completion log line of the request. */
async function execute(scenarioId: string) {
  const cred = await demoCredential({ personalData: { lastName: 'Liddell' } });
  const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [cred], scenarioId } });
  expect(res.statusCode).toBe(200);
  const reqId = res.headers['x-request-id'];
  const completed = lines().filter((l) => l.reqId === reqId && l.msg === 'request completed');
  expect(completed).toHaveLength(1);
  return { results: res.json() as Array<{ executionId: string }>, line: completed[0], cred, reqId };
}

describe('the log of an execute', () => {
  it('puts scenarioId, executionId and the results counted by status on the request\'s completion line', async () => {
    const { results, line } = await execute('mixed');
    expect(line).toMatchObject({
      scenarioId: 'mixed',
      executionId: first(results).executionId,
      results: { valid: 1, 'not-valid': 1, error: 0, pending: 0 },
      res: { statusCode: 200 },
    });
  });

  it('counts error results', async () => {
    const { results, line } = await execute('onchain');
    expect(line).toMatchObject({ scenarioId: 'onchain', executionId: first(results).executionId, results: { valid: 0, 'not-valid': 0, error: 1, pending: 0 } });
  });

  it('logs neither the address nor anything of the credentials', async () => {
    const { cred, reqId } = await execute('mixed');
    const text = lines().filter((l) => l.reqId === reqId).map((l) => JSON.stringify(l)).join('\n');
    expect(text).toContain('"executionId"');
    for (const value of [ADDRESS, ADDRESS.toLowerCase(), cred.id, cred.credentialSubject.id, cred.issuer, 'Alice', 'Liddell']) {
      expect(text).not.toContain(value);
    }
  });
});
