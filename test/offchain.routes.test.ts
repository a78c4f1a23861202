/**
 * OffChainZKP through HTTP with the real verifier (js-iden3-auth) and the public iden3 test vector: execute answers
 * pending with an authorization request, the wallet's answer to the callback completes the execution, and a signed
 * webhook announces it. The vector is a proof, not a JWZ, so answers are plain iden3comm messages (allowed here by
 * ZKP_ALLOW_PLAIN_RESPONSES) with the issuer state resolved as latest (the vector's chain is not reachable offline).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { alwaysLatestStateResolvers, type StateResolvers } from '../src/zkp/index.js';
import { MAX_WAITING_CHECKS } from '../src/execution/index.js';
import { at } from './elements.js';
import { ADDRESS, auth, makeApp, scenario } from './helpers.js';
import { cloneProof, fixtureConfiguration, fixtureRequest, haveMtpVector, plainResponse, VERIFIER_DID } from './zkp/fixtures.js';
import { iden3DidFromEthAddress } from './trust/iden3-test.js';

const present = haveMtpVector();

const SECRET = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;
let app: FastifyInstance;
let hook: http.Server;
const received: Array<{ headers: http.IncomingHttpHeaders; body: string; answered: number }> = [];
let failNext = 1;
/** Real time plus what a test adds (to pass a request's expiry). */
let offset = 0;
const clock = () => Date.now() + offset;

beforeAll(async () => {
  hook = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const answered = failNext-- > 0 ? 500 : 200;
      received.push({ headers: req.headers, body, answered });
      res.statusCode = answered;
      res.end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  app = await makeApp({
    ZKP_VERIFIER_DID: VERIFIER_DID,
    ZKP_ALLOW_PLAIN_RESPONSES: 'true',
    ZKP_PROOF_MAX_AGE_SECONDS: '999999999',
    ZKP_REQUEST_TTL_SECONDS: '600',
    PUBLIC_BASE_URL: 'https://compliance.example',
    WEBHOOK_URL: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_RETRY_BASE_MS: '100',
    ZKP_RESPONSES_PER_MINUTE: '1000', // the per-address limit has its own test below
  }, { zkpStateResolvers: alwaysLatestStateResolvers(), now: clock });
  const created = await app.inject({
    method: 'POST', url: '/compliance/scenarios', headers: auth,
    payload: { id: 'zk', input: scenario({ type: 'OffChainZKP', message: fixtureRequest.message, queryConfigurations: [fixtureConfiguration()] }) },
  });
  expect(created.statusCode, created.body).toBe(201);
}, 60_000);

afterAll(async () => {
  await app?.close();
  hook?.close();
});

async function start() {
  const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [], scenarioId: 'zk' } });
  expect(res.statusCode).toBe(200);
  const [result] = res.json();
  return { executionId: result.executionId as string, result, request: result.result.authorizationRequest };
}
const answer = (executionId: string, token: string, type = 'text/plain') =>
  app.inject({ method: 'POST', url: `/compliance/executions/${executionId}/zkp-response`, headers: { 'content-type': type }, payload: token });
const read = async (executionId: string) =>
  (await app.inject({ method: 'GET', url: `/compliance/executions/${executionId}`, headers: auth })).json();

describe.skipIf(!present)('OffChainZKP callback URLs', () => {
  it('come from PUBLIC_BASE_URL whatever Host header the execute carries', async () => {
    const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: { ...auth, host: 'evil.example:666' }, payload: { address: ADDRESS, credentials: [], scenarioId: 'zk' } });
    expect(res.statusCode).toBe(200);
    const [result] = res.json();
    expect(result.result.authorizationRequest.body.callbackUrl).toBe(`https://compliance.example/compliance/executions/${result.executionId}/zkp-response`);
  });

  it('refuse to start without PUBLIC_BASE_URL where OffChainZKP is configured, naming the variable', async () => {
    await expect(makeApp({ ZKP_VERIFIER_DID: VERIFIER_DID })).rejects.toThrow(/PUBLIC_BASE_URL is required where OffChainZKP is configured/);
  });
});

describe.skipIf(!present)('OffChainZKP', () => {
  it('answers pending with an authorization request built from the query configuration', async () => {
    const { executionId, result, request } = await start();
    expect(result.objectType).toBe('OffChainZKP');
    expect(result.result.status).toBe('pending');
    expect(result.result.result.is_valid).toBe(false);
    expect(result.result.result.reasons.join(' ')).toMatch(/awaiting/);
    expect(request.from).toBe(fixtureRequest.sender);
    expect(request.body.callbackUrl).toBe(`https://compliance.example/compliance/executions/${executionId}/zkp-response`);
    expect(request.body.scope).toEqual(fixtureRequest.scope);
    const record = await read(executionId);
    expect(record.state).toBe('pending');
    expect(record.authorizationRequest).toEqual(request);
    expect(new Date(record.expiresAt).getTime()).toBeGreaterThan(clock());
  });

  it('completes with valid on the real proof, fires a signed webhook retried after a failure, refuses a second answer and a replay', async () => {
    const { executionId, request } = await start();
    const res = await answer(executionId, plainResponse({ thid: request.thid }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().state).toBe('completed');
    expect(res.json().results[0].result).toMatchObject({ status: 'valid', result: { is_valid: true, reasons: [] } });
    expect(res.json().results[0].result.authorizationRequest).toBeUndefined();

    await expect.poll(async () => (await read(executionId)).webhooks?.[0]?.state, { timeout: 5000, interval: 50 }).toBe('delivered');
    const record = await read(executionId);
    expect(record.webhooks[0]).toMatchObject({ event: 'execution.completed', attempts: 2, lastStatus: 200 });
    const delivered = received.filter((r) => JSON.parse(r.body).data.executionId === executionId);
    expect(delivered.map((d) => d.answered)).toEqual([500, 200]);
    // Verified as a receiver would, with the standardwebhooks library: it throws on a bad signature or timestamp.
    for (const d of delivered) new Webhook(SECRET).verify(d.body, d.headers as Record<string, string>);
    expect(JSON.parse(delivered[1]!.body)).toMatchObject({
      type: 'execution.completed', data: { executionId, state: 'completed', verdict: 'passed', rules: [{ status: 'valid' }] },
    });

    // A second answer to the completed execution, and the same proof replayed into another execution: 409.
    const again = await answer(executionId, plainResponse({ thid: request.thid }));
    expect(again.statusCode).toBe(409);
    const second = await start();
    const replay = await answer(second.executionId, plainResponse({ thid: second.request.thid }));
    expect(replay.statusCode).toBe(409);
    expect((await read(second.executionId)).state).toBe('pending');
  });

  it('refuses an answer to another execution\'s request and a malformed token, leaving the execution pending', async () => {
    const a = await start();
    const b = await start();
    const wrongThread = await answer(a.executionId, plainResponse({ thid: b.request.thid }));
    expect(wrongThread.statusCode).toBe(409);
    const garbage = await answer(a.executionId, 'not-a-token');
    expect(garbage.statusCode).toBe(400);
    expect(garbage.headers['content-type']).toMatch(/problem\+json/);
    expect((await read(a.executionId)).state).toBe('pending');
    expect((await answer('00000000-0000-4000-8000-000000000000', 'x')).statusCode).toBe(404);
  });

  it('records not-valid when a public signal of the proof was changed', async () => {
    const { executionId, request } = await start();
    const proof = cloneProof();
    proof.pub_signals[10] = (BigInt(at(proof.pub_signals, 10)) + 1n).toString();
    const res = await answer(executionId, plainResponse({ thid: request.thid, proof }));
    expect(res.statusCode).toBe(200);
    expect(res.json().results[0].result.status).toBe('not-valid');
    expect(res.json().results[0].result.result.is_valid).toBe(false);
  });

  it('refuses a late answer with 410 and fails the execution', async () => {
    const { executionId, request } = await start();
    offset += 601_000;
    try {
      const late = await answer(executionId, plainResponse({ thid: request.thid }));
      expect(late.statusCode).toBe(410);
      const record = await read(executionId);
      expect(record.state).toBe('failed');
      expect(record.results[0].result.status).toBe('error');
      expect(record.results[0].result.result.reasons.join(' ')).toMatch(/expired/);
    } finally {
      offset -= 601_000;
    }
  });

  it('fails expired pending executions by itself (the sweep) and announces it', async () => {
    const { executionId } = await start();
    offset += 601_000;
    try {
      await expect.poll(async () => (await read(executionId)).state, { timeout: 8000, interval: 100 }).toBe('failed');
      await expect.poll(async () => (await read(executionId)).webhooks?.[0]?.event, { timeout: 5000, interval: 50 }).toBe('execution.failed');
    } finally {
      offset -= 601_000;
    }
  });

  it('refuses at creation what the V2 circuits cannot prove', async () => {
    const res = await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: auth,
      payload: { input: scenario({ type: 'OffChainZKP', queryConfigurations: [fixtureConfiguration({ operator: '$between', value: [1, 2] })] }) },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.map((e: any) => e.field)).toContain('body.input.queryConfigurations.0.query.operator');
  });

  it("refuses, before any proof check, an identity made from another Ethereum address than the execution's", async () => {
    const { executionId, request } = await start();
    const other = await answer(executionId, plainResponse({ thid: request.thid, from: iden3DidFromEthAddress('0x8ba1f109551bD432803012645Ac136ddd64DBA72') }));
    expect(other.statusCode).toBe(422);
    expect(other.json().detail).toMatch(/^the proving identity is made from another Ethereum address than the execution's address/);
    expect((await read(executionId)).state).toBe('pending');
    // Made from the execution's own address: past this check, and the proof (made for another identity) is not valid.
    const own = await answer(executionId, plainResponse({ thid: request.thid, from: iden3DidFromEthAddress(ADDRESS) }));
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json().results[0].result.status).toBe('not-valid');
  });

  it('takes ZKP_ANSWERS_PER_EXECUTION checked answers per execution, then 429 with Retry-After; others are not touched', async () => {
    // The fixture's proof is taken by the first execution it completes: answered again, it is checked and refused
    // as a replay, which spends an answer (answers refused before the check spend none: test/offchain.budget.test.ts).
    const used = await start();
    await answer(used.executionId, plainResponse({ thid: used.request.thid }));
    const a = await start();
    const b = await start();
    for (let i = 0; i < 5; i++) expect((await answer(a.executionId, plainResponse({ thid: a.request.thid }))).json().code).toBe('SCS_ZKP_PROOF_REPLAYED');
    const sixth = await answer(a.executionId, plainResponse({ thid: a.request.thid }));
    expect(sixth.statusCode).toBe(429);
    expect(sixth.json().code).toBe('SCS_TOO_MANY_ANSWERS');
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThan(0);
    expect((await read(a.executionId)).state).toBe('pending');
    const other = await answer(b.executionId, plainResponse({ thid: b.request.thid, proof: cloneProof() }));
    expect(other.statusCode).not.toBe(429);
  });
});

describe.skipIf(!present)('OffChainZKP proof checks', () => {
  it('run one at a time with MAX_WAITING_CHECKS waiting; answers beyond get 503 with Retry-After and are not counted', async () => {
    // Issuer states resolved as over a slow RPC (300 ms each), as a chain node would: the checks overlap in time.
    const latest = alwaysLatestStateResolvers();
    const slow = new Proxy({} as StateResolvers, {
      get: (_t, key) => (typeof key === 'string'
        ? {
            resolve: async (...args: unknown[]) => { await sleep(300); return (latest[key]!.resolve as (...a: unknown[]) => Promise<unknown>)(...args); },
            rootResolve: async (...args: unknown[]) => { await sleep(300); return (latest[key]!.rootResolve as (...a: unknown[]) => Promise<unknown>)(...args); },
          }
        : undefined),
      has: () => true,
    });
    const busyApp = await makeApp({
      ZKP_VERIFIER_DID: VERIFIER_DID, ZKP_ALLOW_PLAIN_RESPONSES: 'true', ZKP_PROOF_MAX_AGE_SECONDS: '999999999',
      PUBLIC_BASE_URL: 'https://compliance.example', ZKP_RESPONSES_PER_MINUTE: '1000', ZKP_ANSWERS_PER_EXECUTION: '1',
    }, { zkpStateResolvers: slow });
    try {
      const created = await busyApp.inject({
        method: 'POST', url: '/compliance/scenarios', headers: auth,
        payload: { id: 'zk', input: scenario({ type: 'OffChainZKP', message: fixtureRequest.message, queryConfigurations: [fixtureConfiguration()] }) },
      });
      expect(created.statusCode, created.body).toBe(201);
      const n = MAX_WAITING_CHECKS + 6;
      const started = [];
      for (let i = 0; i < n; i++) {
        const [r] = (await busyApp.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address: ADDRESS, credentials: [], scenarioId: 'zk' } })).json();
        started.push({ executionId: r.executionId as string, thid: r.result.authorizationRequest.thid as string });
      }
      // The genuine proof for every execution: each check waits for the (slow) issuer state, so the answers overlap;
      // the first completes its execution, the others checked are refused as replays (409), the rest are not checked.
      const answers = await Promise.all(started.map((x) => busyApp.inject({
        method: 'POST', url: `/compliance/executions/${x.executionId}/zkp-response`, headers: { 'content-type': 'text/plain' },
        payload: plainResponse({ thid: x.thid }),
      })));
      const busy = answers.filter((r) => r.statusCode === 503);
      expect(answers.map((r) => r.statusCode).filter((s) => s !== 503).sort()).toEqual([200, ...Array(MAX_WAITING_CHECKS).fill(409)]);
      expect(busy.length).toBe(n - 1 - MAX_WAITING_CHECKS);
      for (const r of busy) {
        expect(r.json().code).toBe('SCS_OVERLOADED');
        expect(r.headers['retry-after']).toBe('1');
      }
      // Not counted: an execution refused 503 still takes its one answer (ZKP_ANSWERS_PER_EXECUTION=1), not a 429.
      const refused = started[answers.findIndex((r) => r.statusCode === 503)]!;
      const again = await busyApp.inject({
        method: 'POST', url: `/compliance/executions/${refused.executionId}/zkp-response`, headers: { 'content-type': 'text/plain' },
        payload: plainResponse({ thid: refused.thid }),
      });
      expect(again.statusCode, again.body).not.toBe(429);
      expect(again.statusCode).not.toBe(503);
    } finally {
      await busyApp.close();
    }
  }, 120_000);
});

describe.skipIf(!present)('OffChainZKP answers per client address', () => {
  it('are limited by ZKP_RESPONSES_PER_MINUTE (429 with Retry-After), besides the service-wide limit', async () => {
    const limited = await makeApp({
      ZKP_VERIFIER_DID: VERIFIER_DID, ZKP_ALLOW_PLAIN_RESPONSES: 'true', PUBLIC_BASE_URL: 'https://compliance.example',
      ZKP_RESPONSES_PER_MINUTE: '3',
    }, { zkpStateResolvers: alwaysLatestStateResolvers() });
    try {
      const send = () => limited.inject({ method: 'POST', url: '/compliance/executions/00000000-0000-4000-8000-000000000000/zkp-response', headers: { 'content-type': 'text/plain' }, payload: 'x' });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await send()).statusCode);
      expect(statuses).toEqual([404, 404, 404, 429]);
      const refused = await send();
      expect(refused.json()).toMatchObject({ code: 'SCS_RATE_LIMITED', status: 429 });
      expect(refused.json().detail).toMatch(/at most 3 answers a minute from this client address/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      // Other routes from the same address are not limited by it.
      expect((await limited.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth })).statusCode).toBe(200);
    } finally {
      await limited.close();
    }
  }, 60_000);
});
