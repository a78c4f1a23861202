/**
 * Execution webhooks end to end, on both stores: a real HTTP receiver (node:http) checks every delivery with the
 * standardwebhooks library as a dApp backend would; a receiver that fails gets the delivery again (backoff), one that
 * keeps failing gets it WEBHOOK_MAX_ATTEMPTS times and then the replay call sends it again; a scenario's webhookUrl
 * takes its events to its own receiver, signed with its project's secret. The payload carries the verdict and each
 * rule's status, never a credential. The SSRF guard refuses internal webhook targets, written or resolved.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { ADDRESS, TOKEN, auth, demoCredential, executeOnce, makeApp, scenario } from './helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './pg.js';

const SECRET = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
const TOKEN_A = 'token-of-project-a-0123456789';
const asA = { authorization: `Bearer ${TOKEN_A}` };

interface Received { path: string; headers: Record<string, string>; body: string; answered: number }

/** A receiver: answers 500 to the first `failures[path]` deliveries on a path, then 200; keeps what it got. */
async function receiver() {
  const received: Received[] = [];
  const failures = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const path = req.url ?? '/';
      const left = failures.get(path) ?? 0;
      if (left > 0) failures.set(path, left - 1);
      const answered = left > 0 ? 500 : 200;
      received.push({ path, headers: req.headers as Record<string, string>, body, answered });
      res.statusCode = answered;
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { received, failures, base, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const schema = freshSchema('webhooks');
const stores: Array<[string, Record<string, string>, boolean]> = [
  ['SQLite', {}, true],
  ['PostgreSQL', { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema }, pgAvailable],
];

describe.each(stores)('execution webhooks (%s)', (_name, storeEnv, available) => {
  let app: FastifyInstance;
  let hook: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    if (!available) return;
    hook = await receiver();
    app = await makeApp({
      ...storeEnv,
      API_TOKENS: `${TOKEN},${TOKEN_A}:projA`,
      // The receiver is on 127.0.0.1: scenarios' webhookUrls may name it only with this operator setting.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
      WEBHOOK_URL: `${hook.base}/global`,
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_POLL_MS: '20',
      WEBHOOK_RETRY_BASE_MS: '20',
      WEBHOOK_MAX_ATTEMPTS: '3',
    });
    for (const [id, extra] of [
      ['kyc', {}],
      ['own', { webhookUrl: `${hook.base}/own` }],
      ['tenant-a', { projectId: 'projA', webhookUrl: `${hook.base}/tenant-a` }],
      ['tenant-b', { projectId: 'projB', webhookUrl: `${hook.base}/tenant-b` }],
    ] as const) {
      const res = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id, input: scenario(extra) } });
      expect(res.statusCode, res.body).toBe(201);
    }
  }, 30_000);

  afterAll(async () => {
    await app?.close();
    await hook?.close();
    if (available && storeEnv.DATABASE_SCHEMA) await dropSchema(storeEnv.DATABASE_SCHEMA);
  });

  const read = async (executionId: string) => (await app.inject({ url: `/compliance/executions/${executionId}`, headers: auth })).json();
  const deliveredTo = (path: string, executionId: string) =>
    hook.received.filter((r) => r.path === path && JSON.parse(r.body).data.executionId === executionId);

  it.skipIf(!available)('POSTs a ChallengeQuery execution\'s end, signed (Standard Webhooks), retried after failures, logged', async () => {
    hook.failures.set('/global', 2);
    const [first] = await executeOnce(app, 'kyc');
    const executionId = first!.executionId;
    await expect.poll(async () => (await read(executionId)).webhooks?.[0]?.state, { timeout: 10_000, interval: 25 }).toBe('delivered');
    expect((await read(executionId)).webhooks).toEqual([expect.objectContaining({ event: 'execution.completed', attempts: 3, lastStatus: 200, lastError: null })]);
    // Delivered: no next attempt is shown.
    expect((await read(executionId)).webhooks[0]).not.toHaveProperty('nextAttemptAt');

    const got = deliveredTo('/global', executionId);
    expect(got.map((r) => r.answered)).toEqual([500, 500, 200]);
    // One webhook-id across retries; each delivery verifies with the library (it throws on a bad signature or timestamp).
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of got) new Webhook(SECRET).verify(r.body, r.headers);
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got[0]!.body, got[0]!.headers)).toThrow();

    const event = JSON.parse(got[2]!.body);
    expect(event).toEqual({
      type: 'execution.completed',
      timestamp: expect.any(String),
      data: {
        executionId, scenarioId: 'kyc', scenarioRevision: 1, projectId: null, address: ADDRESS, state: 'completed', verdict: 'passed',
        rules: [{ id: 'q-kyc', status: 'valid' }, { id: 'q-age', status: 'valid' }],
        createdAt: expect.any(String), updatedAt: expect.any(String),
      },
    });
    // No credential content: not the subject's data, not the credential's id.
    for (const secret of ['Alice', 'GREEN', 'personalData', 'urn:uuid']) expect(got[2]!.body).not.toContain(secret);
  });

  it.skipIf(!available)('carries the verdict failed when a rule is not valid', async () => {
    const res = await app.inject({
      method: 'POST', url: '/compliance/scenarios/execute', headers: auth,
      payload: { address: ADDRESS, credentials: [await demoCredential({ reviewAnswer: 'RED' })], scenarioId: 'kyc' },
    });
    const executionId = res.json()[0].executionId as string;
    await expect.poll(() => deliveredTo('/global', executionId).length, { timeout: 10_000, interval: 25 }).toBeGreaterThan(0);
    expect(JSON.parse(deliveredTo('/global', executionId)[0]!.body).data).toMatchObject({
      verdict: 'failed', rules: [{ id: 'q-kyc', status: 'not-valid' }, { id: 'q-age', status: 'valid' }],
    });
  });

  it.skipIf(!available)('carries the attestation the execute answered, verifiable with the JWKS as a backend would', async () => {
    const res = await app.inject({
      method: 'POST', url: '/compliance/scenarios/execute?attest=jws', headers: auth,
      payload: { address: ADDRESS, credentials: [await demoCredential()], scenarioId: 'kyc' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const jws = res.headers.attestation as string;
    const executionId = res.json()[0].executionId as string;
    await expect.poll(() => deliveredTo('/global', executionId).length, { timeout: 10_000, interval: 25 }).toBeGreaterThan(0);
    const { data } = JSON.parse(deliveredTo('/global', executionId)[0]!.body);
    expect(data.attestation).toEqual({ jws });
    const jwks = createLocalJWKSet((await app.inject({ url: '/.well-known/jwks.json' })).json());
    const { payload } = await jwtVerify(data.attestation.jws, jwks, { typ: 'scs-attestation+jwt' });
    expect(payload).toMatchObject({ executionId, verdict: 'passed' });
  });

  it.skipIf(!available)('sends a scenario\'s events to its own webhookUrl', async () => {
    const [first] = await executeOnce(app, 'own');
    const executionId = first!.executionId;
    await expect.poll(() => deliveredTo('/own', executionId).length, { timeout: 10_000, interval: 25 }).toBe(1);
    expect(deliveredTo('/global', executionId)).toEqual([]);
    new Webhook(SECRET).verify(deliveredTo('/own', executionId)[0]!.body, deliveredTo('/own', executionId)[0]!.headers);
  });

  it.skipIf(!available)('signs a project scenario\'s events with its project\'s secret, which its tenant reads, and not another project\'s', async () => {
    const secretOf = async (projectId: string, headers = auth) =>
      app.inject({ url: `/compliance/webhooks/secret?projectId=${projectId}`, headers });
    const a = await secretOf('projA', asA);
    expect(a.statusCode, a.body).toBe(200);
    const secretA = a.json().secret as string;
    const secretB = (await secretOf('projB')).json().secret as string;
    expect(secretA).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(new Set([secretA, secretB, SECRET]).size).toBe(3);
    // A tenant reads only its own project's secret.
    expect((await secretOf('projB', asA)).json().code).toBe('SCS_FORBIDDEN_PROJECT');

    const executionA = (await executeOnce(app, 'tenant-a'))[0]!.executionId;
    const executionB = (await executeOnce(app, 'tenant-b'))[0]!.executionId;
    await expect.poll(() => deliveredTo('/tenant-a', executionA).length + deliveredTo('/tenant-b', executionB).length, { timeout: 10_000, interval: 25 }).toBe(2);
    const [toA] = deliveredTo('/tenant-a', executionA);
    const [toB] = deliveredTo('/tenant-b', executionB);
    expect(new Webhook(secretA).verify(toA!.body, toA!.headers)).toMatchObject({ data: { projectId: 'projA' } });
    new Webhook(secretB).verify(toB!.body, toB!.headers);
    // Neither B's receiver nor the service secret verifies A's events (B could not forge them to A either).
    expect(() => new Webhook(secretB).verify(toA!.body, toA!.headers)).toThrow();
    expect(() => new Webhook(SECRET).verify(toA!.body, toA!.headers)).toThrow();
    expect(() => new Webhook(secretA).verify(toB!.body, toB!.headers)).toThrow();
  });

  it.skipIf(!available)('signs the events sent to WEBHOOK_URL with the service secret, even a project scenario\'s', async () => {
    const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: asA, payload: { id: 'tenant-global', input: scenario({ projectId: 'projA' }) } });
    expect(created.statusCode, created.body).toBe(201);
    const executionId = (await executeOnce(app, 'tenant-global'))[0]!.executionId;
    await expect.poll(() => deliveredTo('/global', executionId).length, { timeout: 10_000, interval: 25 }).toBe(1);
    const [got] = deliveredTo('/global', executionId);
    new Webhook(SECRET).verify(got!.body, got!.headers);
    const secretA = (await app.inject({ url: '/compliance/webhooks/secret?projectId=projA', headers: asA })).json().secret as string;
    expect(() => new Webhook(secretA).verify(got!.body, got!.headers)).toThrow();
  });

  it.skipIf(!available)('gives up after WEBHOOK_MAX_ATTEMPTS, and the replay call sends it again with the same webhook-id', async () => {
    hook.failures.set('/global', 3);
    const [first] = await executeOnce(app, 'kyc');
    const executionId = first!.executionId;
    await expect.poll(async () => (await read(executionId)).webhooks?.[0]?.state, { timeout: 10_000, interval: 25 }).toBe('failed');
    const [failed] = (await read(executionId)).webhooks;
    expect(failed).toMatchObject({ attempts: 3, lastStatus: 500, lastError: 'answered 500' });

    const replay = await app.inject({ method: 'POST', url: `/compliance/executions/${executionId}/webhooks/${failed.id}/replay`, headers: auth });
    expect(replay.statusCode, replay.body).toBe(202);
    expect(failed).not.toHaveProperty('nextAttemptAt');
    expect(replay.json()).toMatchObject({ id: failed.id, state: 'pending', attempts: 0, nextAttemptAt: expect.any(String) });
    await expect.poll(async () => (await read(executionId)).webhooks?.[0]?.state, { timeout: 10_000, interval: 25 }).toBe('delivered');
    const got = deliveredTo('/global', executionId);
    expect(got.map((r) => r.answered)).toEqual([500, 500, 500, 200]);
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set([failed.id]));
    new Webhook(SECRET).verify(got[3]!.body, got[3]!.headers);
  });

  it.skipIf(!available)('answers 404 to a replay of an unknown delivery or execution, and 401 without a token', async () => {
    const [first] = await executeOnce(app, 'kyc');
    const executionId = first!.executionId;
    const unknown = await app.inject({ method: 'POST', url: `/compliance/executions/${executionId}/webhooks/${crypto.randomUUID()}/replay`, headers: auth });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('SCS_WEBHOOK_DELIVERY_NOT_FOUND');
    const noExecution = await app.inject({ method: 'POST', url: `/compliance/executions/${crypto.randomUUID()}/webhooks/${crypto.randomUUID()}/replay`, headers: auth });
    expect(noExecution.json().code).toBe('SCS_EXECUTION_NOT_FOUND');
    const anonymous = await app.inject({ method: 'POST', url: `/compliance/executions/${executionId}/webhooks/${crypto.randomUUID()}/replay` });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('without WEBHOOK_SECRET', () => {
  let app: FastifyInstance;
  beforeAll(async () => { app = await makeApp(); });
  afterAll(async () => { await app?.close(); });

  it('queues no webhook, and refuses a scenario with a webhookUrl (400 naming the field)', async () => {
    const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'kyc', input: scenario() } });
    expect(created.statusCode).toBe(201);
    const [first] = await executeOnce(app, 'kyc');
    expect((await app.inject({ url: `/compliance/executions/${first!.executionId}`, headers: auth })).json().webhooks).toBeUndefined();

    const refused = await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'own', input: scenario({ webhookUrl: 'https://dapp.example/hook' }) },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().errors).toEqual([expect.objectContaining({ pointer: '/input/webhookUrl' })]);
  });

  it('answers 404 SCS_WEBHOOKS_DISABLED to the project secret call', async () => {
    const res = await app.inject({ url: '/compliance/webhooks/secret?projectId=projA', headers: auth });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('SCS_WEBHOOKS_DISABLED');
  });
});

describe.each(stores)('the SSRF guard of scenario webhooks (%s)', (_name, storeEnv, available) => {
  let app: FastifyInstance;
  let hook: Awaited<ReturnType<typeof receiver>>;
  const guardSchema = storeEnv.DATABASE_SCHEMA ? `${storeEnv.DATABASE_SCHEMA}_guard` : undefined;
  // DNS as an attacker controls it: public-looking names that resolve to internal addresses.
  const zone: Record<string, Array<{ address: string; family: number }>> = {
    'rebind.example': [{ address: '127.0.0.1', family: 4 }],
    'mixed.example': [{ address: '93.184.215.14', family: 4 }, { address: '169.254.169.254', family: 4 }],
    'nat64.example': [{ address: '64:ff9b::7f00:1', family: 6 }],
    'sixtofour.example': [{ address: '2002:7f00:1::1', family: 6 }],
    'compat.example': [{ address: '::7f00:1', family: 6 }],
    'siit.example': [{ address: '::ffff:0:7f00:1', family: 6 }],
  };

  beforeAll(async () => {
    if (!available) return;
    hook = await receiver();
    app = await makeApp({
      ...storeEnv,
      ...(guardSchema && { DATABASE_SCHEMA: guardSchema }),
      WEBHOOK_SECRET: SECRET, WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_BASE_MS: '20', WEBHOOK_MAX_ATTEMPTS: '2',
    }, {
      webhookResolve: (hostname, callback) => {
        const addresses = zone[hostname];
        if (addresses) callback(null, addresses);
        else callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      },
    });
  }, 30_000);

  afterAll(async () => {
    await app?.close();
    await hook?.close();
    if (guardSchema) await dropSchema(guardSchema);
  });

  const create = (id: string, webhookUrl: string) =>
    app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id, input: scenario({ webhookUrl }) } });

  it.skipIf(!available)('refuses a webhookUrl naming a private, loopback or link-local address, localhost, another scheme or credentials (400 naming /input/webhookUrl)', async () => {
    const refused = [
      'http://127.0.0.1:8080/hook', 'http://127.1/hook', 'http://2130706433/hook', 'http://0x7f.0.0.1/hook', 'http://0.0.0.0/hook',
      'http://10.1.2.3/hook', 'http://172.16.0.1/hook', 'http://192.168.1.1/hook', 'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/hook', 'http://[::1]/hook', 'http://[::]/hook', 'http://[fd00::1]/hook', 'http://[fe80::1]/hook',
      'http://[::ffff:127.0.0.1]/hook', 'http://[::ffff:a9fe:a9fe]/hook', 'http://localhost:3000/hook', 'http://LOCALHOST/hook',
      'http://api.localhost/hook', 'https://user:pass@dapp.example/hook', 'https://token@dapp.example/hook',
      // IPv6 prefixes that embed an IPv4 address (NAT64, 6to4): 127.0.0.1 and 169.254.169.254 inside.
      'http://[64:ff9b::7f00:1]/hook', 'http://[64:ff9b::a9fe:a9fe]/hook', 'http://[2002:7f00:1::1]/hook', 'http://[2002:a9fe:a9fe::]/hook',
      // IPv4-compatible (::/96) and IPv4-translated (SIIT, ::ffff:0:0:0/96) addresses.
      'http://[::7f00:1]/hook', 'http://[::a9fe:a9fe]/hook', 'http://[::ffff:0:7f00:1]/hook', 'http://[::ffff:0:a9fe:a9fe]/hook',
    ];
    for (const url of refused) {
      const res = await create('bad', url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().errors, url).toEqual([expect.objectContaining({ pointer: '/input/webhookUrl' })]);
    }
    // The answer says what is wrong and which setting allows it (a webhookUrl is not a rule).
    const refusal = (await create('bad', 'http://127.0.0.1:8080/hook')).json();
    expect(refusal.detail).toMatch(/^The scenario is not valid: \/input\/webhookUrl must not be a loopback.*WEBHOOK_ALLOW_PRIVATE_TARGETS=1/);
    expect(refusal.errors[0].message).toContain('WEBHOOK_ALLOW_PRIVATE_TARGETS=1');
    // A public name is accepted at write time (where it resolves is checked at delivery).
    expect((await create('public', 'https://dapp.example/hook')).statusCode).toBe(201);
    const patched = await app.inject({
      method: 'PATCH', url: '/compliance/scenarios/public', headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ input: { webhookUrl: 'http://169.254.169.254/latest/meta-data' } }),
    });
    expect(patched.statusCode, patched.body).toBe(400);
    expect(patched.json().errors).toEqual([expect.objectContaining({ pointer: '/input/webhookUrl' })]);
  });

  it.skipIf(!available)('refuses at delivery a hostname that resolves to a private address, and logs the attempt', async () => {
    const port = new URL(hook.base).port;
    const bads = {
      'rebind.example': '127.0.0.1', 'mixed.example': '169.254.169.254', 'nat64.example': '64:ff9b::7f00:1', 'sixtofour.example': '2002:7f00:1::1',
      'compat.example': '::7f00:1', 'siit.example': '::ffff:0:7f00:1',
    };
    for (const [id, host] of [
      ['rebind', 'rebind.example'], ['mixed', 'mixed.example'], ['nat64', 'nat64.example'], ['sixtofour', 'sixtofour.example'],
      ['compat', 'compat.example'], ['siit', 'siit.example'],
    ] as const) {
      expect((await create(id, `http://${host}:${port}/${id}`)).statusCode).toBe(201);
      const executionId = (await executeOnce(app, id))[0]!.executionId;
      const read = async () => (await app.inject({ url: `/compliance/executions/${executionId}`, headers: auth })).json().webhooks?.[0];
      await expect.poll(async () => (await read())?.state, { timeout: 10_000, interval: 25 }).toBe('failed');
      const bad = bads[host];
      expect(await read()).toMatchObject({
        attempts: 2, lastStatus: null, lastError: `refused: ${host} resolves to ${bad}, a loopback, private or link-local address`,
      });
    }
    expect(hook.received).toEqual([]);
  });
});
