/**
 * End to end: the server started the way the README starts it (built, then `node dist/server.js`), driven over HTTP.
 */
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { at } from './elements.js';
import { scenario, tempDir } from './helpers.js';
import { build, call, killAll, start, type Server } from './server-process.js';

beforeAll(() => {
  build();
}, 120_000);

afterAll(killAll);

/**
 * POSTs a scenario `late` in two parts: the first 20 bytes of the body, SIGTERM to the server 200 ms later (or `signal`), then
 * (after `meanwhile`, 300 ms on) the rest. Answers the response: the request was in flight when the signal came.
 */
/** What a server said last (its final log lines and stderr): the message of a failed exit-code assertion. */
const lastWords = (server: Server) => `last log lines:\n${server.stdout().split('\n').slice(-12).join('\n')}\nstderr:\n${server.stderr().slice(-2000)}`;

function createDuringShutdown(
  server: Server,
  token: string,
  meanwhile: () => Promise<void> = async () => {},
  signal: () => void = () => server.proc.kill('SIGTERM'),
): Promise<{ status: number; text: string }> {
  const { port } = new URL(server.url);
  const body = JSON.stringify({ id: 'late', input: scenario() });
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path: '/compliance/scenarios',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.write(body.slice(0, 20));
    setTimeout(() => {
      signal();
      setTimeout(() => meanwhile().then(() => req.end(body.slice(20)), reject), 300);
    }, 200);
  });
}

describe('the server process', () => {
  it('starts as the README says (DEMO_ISSUER=1), prints a token once, and serves create, execute with demo credentials, patch, execute again', async () => {
    const dataDir = tempDir();
    const server = await start({ DATA_DIR: dataDir, DEMO_ISSUER: '1' });
    const ready = await fetch(`${server.url}/health/ready`);
    expect(ready.status).toBe(200);

    const m = /API token for this run \(API_TOKENS unset\): (\S+)/.exec(server.stderr());
    expect(m).not.toBeNull();
    const token = m![1]!;
    expect(server.stderr().split(token).length - 1).toBe(1); // printed once
    expect((await call(server, 'wrong-token-wrong-token', 'GET', '/compliance/scenarios')).status).toBe(401);

    const created = await call(server, token, 'POST', '/compliance/scenarios', { id: 'adult', input: scenario() });
    expect(created.status).toBe(201);
    // The README's demo credentials: signed by the demo issuer, verified in strict mode.
    const body = JSON.parse(execFileSync(process.execPath, ['dist/scripts/demo-credentials.js', '--scenario-id', 'adult', '--body'], { encoding: 'utf8' }));
    const cred = body.credentials[0];
    let results = await call(server, token, 'POST', '/compliance/scenarios/execute', body);
    expect(results.status).toBe(200);
    expect(results.body.map((r: any) => r.result.status)).toEqual(['valid', 'valid']);

    const patched = await call(server, token, 'PATCH', '/compliance/scenarios/adult', {
      input: { queryConfigurations: [{ id: 'q-age', query: { type: 'IDInformation', attribute: 'personalData.age', value: 40, operator: '$gte' } }] },
    }, { 'if-match': created.headers.get('etag')! });
    expect(patched.status).toBe(200);
    results = await call(server, token, 'POST', '/compliance/scenarios/execute', body);
    expect(results.body.map((r: any) => r.result.status)).toEqual(['not-valid']);

    // Without a signature that verifies, the same claims do not pass.
    const forged = structuredClone(body);
    forged.credentials[0].credentialSubject.personalData.age = 99;
    results = await call(server, token, 'POST', '/compliance/scenarios/execute', forged);
    expect(results.body.map((r: any) => r.result.status)).toEqual(['not-valid']);

    server.proc.kill('SIGTERM');
    expect(await server.exited, lastWords(server)).toBe(0);

    // Logs: one JSON line per request with its id; no token, no credential content.
    const lines = server.stdout().trim().split('\n').map((l) => JSON.parse(l));
    const completed = lines.filter((l) => l.msg === 'request completed');
    expect(completed.length).toBeGreaterThanOrEqual(5);
    for (const l of completed) expect(typeof l.reqId).toBe('string');
    const all = server.stdout();
    expect(all).not.toContain(token);
    expect(all).not.toContain('Alice');
    expect(all).not.toContain(cred.id);
  });

  it('keeps an acknowledged write through kill -9', async () => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, API_TOKENS: 'durable-token-0123456789' };
    let server = await start(env);
    const token = env.API_TOKENS;
    expect((await call(server, token, 'POST', '/compliance/scenarios', { id: 'd', input: scenario() })).status).toBe(201);
    const patched = await call(server, token, 'PATCH', '/compliance/scenarios/d', { input: { name: 'Survives' } });
    expect(patched.status).toBe(200);
    server.proc.kill('SIGKILL');
    await server.exited;

    server = await start(env);
    const read = await call(server, token, 'GET', '/compliance/scenarios/d');
    expect(read.status).toBe(200);
    expect(read.body.input.name).toBe('Survives');
    expect(read.body.revision).toBe(2);
    server.proc.kill('SIGTERM');
    expect(await server.exited, lastWords(server)).toBe(0);
  });

  it('finishes an in-flight request on SIGTERM, refuses new connections, and exits 0', async () => {
    const token = 'graceful-token-0123456789';
    const server = await start({ DATA_DIR: tempDir(), API_TOKENS: token });
    const res = await createDuringShutdown(server, token, async () => {
      // The listener is closed by now: a new connection gets no answer but an error.
      await expect(fetch(`${server.url}/health/live`)).rejects.toThrow();
    });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text).id).toBe('late');
    // The finished request's connection is closed, so the exit does not wait for a keep-alive timeout.
    expect(await server.exited, lastWords(server)).toBe(0);
  });

  it('refuses to start on a bad variable with a one-line error naming it', async () => {
    const bad: Array<[string, Record<string, string>]> = [
      ['PORT', { PORT: 'abc' }], ['LOG_LEVEL', { LOG_LEVEL: 'loud' }], ['DATABASE_URL', { DATABASE_URL: 'mysql://x' }], ['BODY_LIMIT', { BODY_LIMIT: '-1' }],
      ['WORKERS', { WORKERS: 'many' }], ['WORKERS', { WORKERS: '0' }],
      // One in-memory database per process cannot be shared by workers.
      ['WORKERS', { WORKERS: '2', DATABASE_URL: 'sqlite://:memory:' }],
    ];
    for (const [name, vars] of bad) {
      const proc = spawn(process.execPath, ['dist/server.js'], { env: { PATH: process.env.PATH ?? '', ...vars }, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      proc.stderr.on('data', (d) => { err += d; });
      const code = await new Promise((r) => proc.on('exit', r));
      expect(code).toBe(1);
      expect(err.trim().split('\n')).toHaveLength(1);
      expect(err).toContain(name);
    }
  });
});

/** The JSON log lines on stdout. */
function logLines(stdout: string): Array<Record<string, unknown> & { pid: number; msg?: string }> {
  return stdout.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

/** The pids of the processes that logged `msg`. */
function pidsLogging(stdout: string, msg: RegExp): number[] {
  return [...new Set(logLines(stdout).filter((l) => msg.test(l.msg ?? '')).map((l) => l.pid))];
}

async function until<T>(what: string, probe: () => T | undefined | false, ms = 45_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One request on a connection of its own, so that the cluster's primary hands it to the next worker; its status. */
function fresh(url: string, token: string, path: string, method = 'GET', body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(`${url}${path}`, {
      method,
      agent: false,
      headers: { authorization: `Bearer ${token}`, connection: 'close', ...(text !== undefined && { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(text);
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('the server process with WORKERS=2 (node:cluster)', () => {
  it('serves one port from two worker processes that share the token made for the run, the store (concurrent PATCHes from both: no 409, no lost update), and /metrics', async () => {
    const server = await start({ DATA_DIR: tempDir(), WORKERS: '2', LOG_LEVEL: 'info' });
    await until('both workers', () => /every worker is listening/.test(server.stdout()));
    const workers = pidsLogging(server.stdout(), /^Server listening/);
    expect(workers).toHaveLength(2);
    expect(workers).not.toContain(server.proc.pid);

    // The token is made once, by the primary, and printed once; both workers accept it.
    const m = /API token for this run \(API_TOKENS unset\): (\S+)/.exec(server.stderr());
    expect(m).not.toBeNull();
    const token = m![1]!;
    expect(server.stderr().split(token).length - 1).toBe(1);
    expect((await call(server, token, 'POST', '/compliance/scenarios', { id: 'shared', input: scenario() })).status).toBe(201);
    const N = 20;
    const statuses = [];
    for (let i = 0; i < N; i++) statuses.push(await fresh(server.url, token, '/compliance/scenarios/shared'));
    expect(statuses).toEqual(Array(N).fill(200));
    // Each worker answered some of them (the request log lines carry the pid of the process that served).
    const served = pidsLogging(server.stdout(), /^request completed/);
    expect(served.sort()).toEqual([...workers].sort());

    // /metrics sums the workers: every one of the N reads is counted, whichever worker served it.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    const line = metrics.split('\n').find((l) => l.startsWith('http_requests_total{') && l.includes('route="/compliance/scenarios/:scenarioId"') && l.includes('method="GET"'));
    expect(line).toBeDefined();
    expect(Number(line!.split(' ').pop())).toBe(N);

    // PATCHes without If-Match from both workers at once: each succeeds with its own revision (no 409, no lost update).
    const patches = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      fresh(server.url, token, '/compliance/scenarios/shared', 'PATCH', { input: { description: `d${i}` } })));
    expect(patches).toEqual(Array(40).fill(200));
    expect((await call(server, token, 'GET', '/compliance/scenarios/shared')).body.revision).toBe(41);

    server.proc.kill('SIGTERM');
    expect(await server.exited, lastWords(server)).toBe(0);
    for (const pid of workers) expect(alive(pid)).toBe(false);
  });

  it('replaces a worker that dies; the other worker answers meanwhile', async () => {
    const token = 'cluster-token-0123456789';
    const server = await start({ DATA_DIR: tempDir(), WORKERS: '2', API_TOKENS: token });
    await until('both workers', () => /every worker is listening/.test(server.stdout()));
    const listening = pidsLogging(server.stdout(), /^Server listening/);
    const [victim, survivor] = [at(listening, 0), at(listening, 1)];
    process.kill(victim, 'SIGKILL');
    await until('the primary to see the exit', () => logLines(server.stdout()).some((l) =>
      l.msg === 'a worker stopped; starting another' && l.worker === victim && l.signal === 'SIGKILL' && l.listened === true));
    // From then on the other worker serves every request while the replacement starts (which takes ~1 s or more).
    // (A connection handed to the worker in the instant it died gets no answer: Node's cluster does not hand it on.)
    for (let i = 0; i < 10; i++) expect(await fresh(server.url, token, '/health/ready')).toBe(200);
    // /metrics too, at once: the primary asks only the workers that listen, not the replacement still starting.
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);
    const replacement = await until('a replacement worker', () =>
      pidsLogging(server.stdout(), /^Server listening/).find((p) => p !== victim && p !== survivor));
    expect(alive(replacement)).toBe(true);
    expect(alive(survivor)).toBe(true);
    server.proc.kill('SIGTERM');
    expect(await server.exited, lastWords(server)).toBe(0);
  });

  it('replaces the first 3 workers that die within a minute at once, the 4th after a pause of 1 s', async () => {
    const server = await start({ DATA_DIR: tempDir(), WORKERS: '2', API_TOKENS: 'crash-loop-0123456789' });
    await until('both workers', () => /every worker is listening/.test(server.stdout()));
    const killed: number[] = [];
    for (let i = 0; i < 4; i++) {
      const victim = await until('a serving worker not killed yet', () =>
        pidsLogging(server.stdout(), /^Server listening/).find((p) => !killed.includes(p) && alive(p)));
      killed.push(victim);
      process.kill(victim, 'SIGKILL');
      await until('the primary to see the exit', () => logLines(server.stdout()).some((l) => l.msg === 'a worker stopped; starting another' && l.worker === victim));
    }
    const exits = logLines(server.stdout()).filter((l) => l.msg === 'a worker stopped; starting another');
    expect(exits.map((l) => l.restartInMs)).toEqual([0, 0, 0, 1000]);
    // The last replacement listens only after its pause (pino's `time`: epoch ms), and the service stops cleanly.
    await until('the last replacement', () => pidsLogging(server.stdout(), /^Server listening/).length === 6);
    const listened = logLines(server.stdout()).filter((l) => /^Server listening/.test(l.msg ?? '')).map((l) => l.time as number);
    expect(Math.max(...listened) - (exits[3]!.time as number)).toBeGreaterThanOrEqual(1000);
    server.proc.kill('SIGTERM');
    expect(await server.exited, lastWords(server)).toBe(0);
  }, 60_000);

  it('on SIGTERM finishes the request in flight in its worker, then the primary exits 0 after every worker', async () => {
    const token = 'graceful-cluster-0123456789';
    const server = await start({ DATA_DIR: tempDir(), WORKERS: '2', API_TOKENS: token });
    await until('both workers', () => /every worker is listening/.test(server.stdout()));
    const workers = pidsLogging(server.stdout(), /^Server listening/);
    const res = await createDuringShutdown(server, token);
    expect(res.status).toBe(201);
    expect(await server.exited, lastWords(server)).toBe(0);
    for (const pid of workers) expect(alive(pid)).toBe(false);
  });

  it('on SIGTERM to its whole process group (systemd, a container runtime) also finishes the request in flight and exits 0', async () => {
    const token = 'group-signal-0123456789';
    const server = await start({ DATA_DIR: tempDir(), WORKERS: '2', API_TOKENS: token }, { detached: true });
    await until('both workers', () => /every worker is listening/.test(server.stdout()));
    const workers = pidsLogging(server.stdout(), /^Server listening/);
    // Each worker gets the signal twice: from the group signal and from the primary. The second changes nothing.
    const res = await createDuringShutdown(server, token, async () => {}, () => process.kill(-server.proc.pid!, 'SIGTERM'));
    expect(res.status).toBe(201);
    expect(await server.exited, lastWords(server)).toBe(0);
    for (const pid of workers) expect(alive(pid)).toBe(false);
  });

  it('stops with exit 1 when a worker cannot start (the port is taken)', async () => {
    const taken = http.createServer(() => {});
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const { port } = taken.address() as { port: number };
    try {
      const proc = spawn(process.execPath, ['dist/server.js'], {
        env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), WORKERS: '2', DATA_DIR: tempDir(), API_TOKENS: 'taken-port-0123456789' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      proc.stdout.on('data', (d) => { out += d; });
      const code = await new Promise((r) => proc.on('exit', r));
      expect(code).toBe(1);
      expect(out).toContain('a worker stopped before it listened; stopping the service');
      expect(out).toContain('EADDRINUSE');
    } finally {
      taken.close();
    }
  });
});
