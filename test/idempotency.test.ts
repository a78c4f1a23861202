import { createHash } from 'node:crypto';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { IDEMPOTENCY_LEASE_MS, storedKey } from '../src/http/idempotency.js';
import { openSqliteStore } from '../src/store/sqlite.js';
import { ADDRESS, DAY, TOKEN, auth, credential, makeApp, scenario, tempDir } from './helpers.js';

let app: FastifyInstance;
let clock = Date.now();
beforeEach(async () => {
  clock = Date.now();
  app = await makeApp({}, { now: () => clock });
  await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
});
afterEach(async () => {
  await app.close();
});

const execute = (key: string | undefined, body: object = { address: ADDRESS, credentials: [credential({ id: 'urn:uuid:fixed' })], scenarioId: 'adult' }) =>
  app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: { ...auth, ...(key && { 'idempotency-key': key }) }, payload: body });
const executions = async () =>
  (await app.inject({ method: 'GET', url: '/compliance/scenarios/adult/executions?limit=100', headers: auth })).json().items.length;

describe('Idempotency-Key on execute', () => {
  it('returns the first response byte for byte and does the work once', async () => {
    const body = { address: ADDRESS, credentials: [credential()], scenarioId: 'adult' };
    const first = await execute('key-1', body);
    const again = await execute('key-1', body);
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(await executions()).toBe(1);
    // Without a key, every call is new work.
    await execute(undefined, body);
    expect(await executions()).toBe(2);
  });

  it('does the work once for concurrent retries: the others are replays or 409 in progress', async () => {
    const body = { address: ADDRESS, credentials: [credential()], scenarioId: 'adult' };
    const replies = await Promise.all(Array.from({ length: 8 }, () => execute('key-c', body)));
    expect(replies.every((r) => r.statusCode === 200 || r.statusCode === 409)).toBe(true);
    expect(await executions()).toBe(1);
    const bodies = new Set(replies.filter((r) => r.statusCode === 200).map((r) => r.body));
    expect(bodies.size).toBe(1);
  });

  it('answers 422 for the same key with another body, and does nothing', async () => {
    await execute('key-2');
    const other = await execute('key-2', { address: ADDRESS, credentials: [], scenarioId: 'adult' });
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('SCS_IDEMPOTENCY_KEY_REUSED');
    expect(await executions()).toBe(1);
  });

  it('treats key order in the body as the same body', async () => {
    const c = credential();
    await execute('key-3', { address: ADDRESS, credentials: [c], scenarioId: 'adult' });
    const reordered = await execute('key-3', { scenarioId: 'adult', credentials: [c], address: ADDRESS });
    expect(reordered.statusCode).toBe(200);
    expect(reordered.headers['idempotent-replayed']).toBe('true');
  });

  it('scopes keys to the route: the same key on create is a new request', async () => {
    await execute('shared-key');
    const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'idempotency-key': 'shared-key' }, payload: { input: scenario() } });
    expect(created.statusCode).toBe(201);
  });

  it('lets keys expire after 24 hours', async () => {
    const first = await execute('key-4');
    clock += DAY + 1000;
    const later = await execute('key-4');
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.json()[0].executionId).not.toBe(first.json()[0].executionId);
    expect(await executions()).toBe(2);
  });

  it('stores nothing for a request refused by validation', async () => {
    const bad = await execute('key-5', { address: ADDRESS, scenarioId: 'adult' });
    expect(bad.statusCode).toBe(400);
    const good = await execute('key-5');
    expect(good.statusCode).toBe(200);
    expect(good.headers['idempotent-replayed']).toBeUndefined();
  });

  it('refuses a malformed key with 400 naming the header', async () => {
    const res = await execute('x'.repeat(256));
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].field).toContain('idempotency-key');
  });
});

describe('Idempotency-Key: only final answers are kept, and the request is all that selects the result', () => {
  it('keeps nothing of a 400 raised inside the handler (a bad EIP-55 checksum): the retry is judged anew', async () => {
    const bad = { address: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', credentials: [credential({ id: 'urn:uuid:fixed' })], scenarioId: 'adult' };
    expect((await execute('key-h', bad)).statusCode).toBe(400);
    const again = await execute('key-h', bad);
    expect(again.statusCode).toBe(400);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    // The key is free: the corrected request does the work.
    const good = await execute('key-h');
    expect(good.statusCode).toBe(200);
    expect(await executions()).toBe(1);
  });

  it('keeps nothing of a 404: once the scenario exists, the retry runs it', async () => {
    const body = { address: ADDRESS, credentials: [], scenarioId: 'later' };
    expect((await execute('key-404', body)).statusCode).toBe(404);
    await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'later', input: scenario() } });
    const retry = await execute('key-404', body);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not replay one project\'s verdict to the same key and body sent to another project (?projectId=): 422', async () => {
    for (const projectId of ['pa', 'pb']) {
      await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'both', input: scenario({ projectId }) } });
    }
    const body = { address: ADDRESS, credentials: [], scenarioId: 'both' };
    const send = (projectId: string) => app.inject({
      method: 'POST', url: `/compliance/scenarios/execute?projectId=${projectId}`, headers: { ...auth, 'idempotency-key': 'key-p' }, payload: body,
    });
    expect((await send('pa')).statusCode).toBe(200);
    const other = await send('pb');
    expect(other.statusCode).toBe(422);
    expect(other.json().code).toBe('SCS_IDEMPOTENCY_KEY_REUSED');
    expect((await send('pa')).headers['idempotent-replayed']).toBe('true');
  });
});

describe('Idempotency-Key: a claim whose owner died', () => {
  it('is held until its lease runs out (no heartbeat renews it), then free: the retry does the work', async () => {
    const store = await openSqliteStore({ file: path.join(tempDir(), 'k.db'), synchronous: 'NORMAL' });
    let t = Date.now();
    const other = await makeApp({}, { now: () => t, store });
    try {
      await other.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'adult', input: scenario() } });
      // What a process killed mid-request leaves: a claim, never completed, never renewed.
      const subject = `token:${createHash('sha256').update(TOKEN).digest('hex').slice(0, 12)}`;
      const key = storedKey(subject, 'POST /compliance/scenarios/execute', 'key-dead');
      const iso = (ms: number) => new Date(ms).toISOString();
      expect(await store.claimIdempotencyKey(key, 'x', iso(t), iso(t - DAY), iso(t + IDEMPOTENCY_LEASE_MS))).toEqual({ claimed: true });
      const send = () => other.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: { ...auth, 'idempotency-key': 'key-dead' },
        payload: { address: ADDRESS, credentials: [], scenarioId: 'adult' },
      });
      t += IDEMPOTENCY_LEASE_MS - 1000;
      expect((await send()).statusCode).not.toBe(200);
      t += 2000;
      expect(IDEMPOTENCY_LEASE_MS).toBeLessThanOrEqual(60_000);
      const after = await send();
      expect(after.statusCode).toBe(200);
      expect(after.headers['idempotent-replayed']).toBeUndefined();
      expect((await send()).headers['idempotent-replayed']).toBe('true');
    } finally {
      await other.close();
    }
  });
});

describe('Idempotency-Key on create', () => {
  it('creates once, replays 201 with the same Location, ETag and body', async () => {
    const body = { input: scenario() };
    const first = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'idempotency-key': 'c-1' }, payload: body });
    const again = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: { ...auth, 'idempotency-key': 'c-1' }, payload: body });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers.etag).toBe(first.headers.etag);
    const list = (await app.inject({ method: 'GET', url: '/compliance/scenarios?limit=100', headers: auth })).json();
    expect(list.items).toHaveLength(2); // 'adult' and the one created once
  });
});
