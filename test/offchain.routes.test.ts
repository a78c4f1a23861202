/**
 * OffChainZKP through HTTP with the real verifier (js-iden3-auth) and the public iden3 test vector: execute answers
 * pending with an authorization request, the wallet's answer to the callback completes the execution, and a signed
 * webhook announces it. The vector is a proof, not a JWZ, so answers are plain iden3comm messages (allowed here by
 * ZKP_ALLOW_PLAIN_RESPONSES) with the issuer state resolved as latest (the vector's chain is not reachable offline).
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { alwaysLatestStateResolvers } from '../src/zkp/index.js';
import { ADDRESS, auth, makeApp, scenario } from './helpers.js';
import { cloneProof, fixtureConfiguration, fixtureRequest, plainResponse } from './zkp/fixtures.js';

const SECRET = 'webhook-secret-0123456789';
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
    ZKP_VERIFIER_DID: fixtureRequest.sender,
    ZKP_ALLOW_PLAIN_RESPONSES: 'true',
    ZKP_PROOF_MAX_AGE_SECONDS: '999999999',
    ZKP_REQUEST_TTL_SECONDS: '600',
    PUBLIC_BASE_URL: 'https://compliance.example',
    WEBHOOK_URL: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`,
    WEBHOOK_SECRET: SECRET,
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_RETRY_BASE_MS: '100',
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

describe('OffChainZKP callback URLs', () => {
  it('come from PUBLIC_BASE_URL whatever Host header the execute carries', async () => {
    const res = await app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: { ...auth, host: 'evil.example:666' }, payload: { address: ADDRESS, credentials: [], scenarioId: 'zk' } });
    expect(res.statusCode).toBe(200);
    const [result] = res.json();
    expect(result.result.authorizationRequest.body.callbackUrl).toBe(`https://compliance.example/compliance/executions/${result.executionId}/zkp-response`);
  });

  it('refuse to start without PUBLIC_BASE_URL where OffChainZKP is configured, naming the variable', async () => {
    await expect(makeApp({ ZKP_VERIFIER_DID: fixtureRequest.sender })).rejects.toThrow(/PUBLIC_BASE_URL is required where OffChainZKP is configured/);
  });
});

describe('OffChainZKP', () => {
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
    const delivered = received.filter((r) => JSON.parse(r.body).execution.executionId === executionId);
    expect(delivered.map((d) => d.answered)).toEqual([500, 200]);
    for (const d of delivered) {
      const ts = d.headers['x-webhook-timestamp'] as string;
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${ts}.${d.body}`).digest('hex')}`;
      expect(d.headers['x-webhook-signature']).toBe(expected);
    }
    expect(JSON.parse(delivered[1].body)).toMatchObject({ event: 'execution.completed', execution: { executionId, state: 'completed' } });

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
    proof.pub_signals[10] = (BigInt(proof.pub_signals[10]) + 1n).toString();
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
});
