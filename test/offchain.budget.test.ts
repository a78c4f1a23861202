/**
 * ZKP_ANSWERS_PER_EXECUTION as an attacker meets it: answers that fail decoding or the thread and recipient checks
 * (anyone can POST to the callback URL in the QR code) spend nothing, and the budget is the execution's, kept in the
 * database, so two instances (here two apps on one SQLite file) share it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alwaysLatestStateResolvers } from '../src/zkp/index.js';
import { ADDRESS, auth, makeApp, scenario, tempDir } from './helpers.js';
import { fixtureConfiguration, fixtureRequest, haveMtpVector, plainResponse, VERIFIER_DID } from './zkp/fixtures.js';

const present = haveMtpVector();

type App = Awaited<ReturnType<typeof makeApp>>;
let one: App;
let two: App;

const open = (dataDir: string) => makeApp({
  DATA_DIR: dataDir,
  ZKP_VERIFIER_DID: VERIFIER_DID,
  ZKP_ALLOW_PLAIN_RESPONSES: 'true',
  ZKP_PROOF_MAX_AGE_SECONDS: '999999999',
  PUBLIC_BASE_URL: 'https://compliance.example',
  ZKP_RESPONSES_PER_MINUTE: '1000',
  ZKP_ANSWERS_PER_EXECUTION: '2',
}, { zkpStateResolvers: alwaysLatestStateResolvers() });

async function start(app: App) {
  const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [], scenarioId: 'zk' } });
  expect(res.statusCode, res.body).toBe(200);
  const [result] = res.json();
  return { executionId: result.executionId as string, thid: result.result.authorizationRequest.thid as string };
}
const answer = (app: App, executionId: string, token: string) =>
  app.inject({ method: 'POST', url: `/compliance/executions/${executionId}/zkp-response`, headers: { 'content-type': 'text/plain' }, payload: token });

beforeAll(async () => {
  const dir = tempDir();
  one = await open(dir);
  two = await open(dir);
  const created = await one.inject({
    method: 'POST', url: '/compliance/scenarios', headers: auth,
    payload: { id: 'zk', input: scenario({ type: 'OffChainZKP', message: fixtureRequest.message, queryConfigurations: [fixtureConfiguration()] }) },
  });
  expect(created.statusCode, created.body).toBe(201);
  // The fixture's proof completes one execution on each instance: from then on each refuses it as a replay (409)
  // once it is checked, which leaves an execution pending and spends one of its answers.
  for (const app of [one, two]) {
    const used = await start(app);
    expect((await answer(app, used.executionId, plainResponse({ thid: used.thid }))).statusCode).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await one?.close();
  await two?.close();
});

describe.skipIf(!present)('ZKP_ANSWERS_PER_EXECUTION', () => {
  it('spends nothing on answers that fail decoding or the thread or recipient checks', async () => {
    const a = await start(one);
    const b = await start(one);
    for (let i = 0; i < 6; i++) {
      expect((await answer(one, a.executionId, 'garbage')).statusCode).toBe(400);
      expect((await answer(one, a.executionId, plainResponse({ thid: b.thid }))).statusCode).toBe(409);
      expect((await answer(one, a.executionId, plainResponse({ thid: a.thid, to: 'did:iden3:someone:else' }))).statusCode).not.toBe(429);
    }
    // The budget (2) is whole: two checked answers, then 429.
    const checked = [await answer(one, a.executionId, plainResponse({ thid: a.thid })), await answer(one, a.executionId, plainResponse({ thid: a.thid }))];
    expect(checked.map((r) => r.json().code)).toEqual(['SCS_ZKP_PROOF_REPLAYED', 'SCS_ZKP_PROOF_REPLAYED']);
    const third = await answer(one, a.executionId, plainResponse({ thid: a.thid }));
    expect(third.statusCode).toBe(429);
    expect(third.json().code).toBe('SCS_TOO_MANY_ANSWERS');
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
  }, 60_000);

  it('holds across instances: answers through two instances spend one budget', async () => {
    const a = await start(one);
    expect((await answer(one, a.executionId, plainResponse({ thid: a.thid }))).json().code).toBe('SCS_ZKP_PROOF_REPLAYED');
    expect((await answer(two, a.executionId, plainResponse({ thid: a.thid }))).json().code).toBe('SCS_ZKP_PROOF_REPLAYED');
    for (const app of [one, two]) {
      const over = await answer(app, a.executionId, plainResponse({ thid: a.thid }));
      expect(over.statusCode).toBe(429);
      expect(over.json().code).toBe('SCS_TOO_MANY_ANSWERS');
    }
  }, 60_000);
});
