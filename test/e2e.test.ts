/**
 * End to end: the server started the way the README starts it (built, then `node dist/server.js`), driven over HTTP.
 */
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scenario, tempDir } from './helpers.js';
import { build, call, killAll, start } from './server-process.js';

beforeAll(() => {
  build();
}, 120_000);

afterAll(killAll);

describe('the server process', () => {
  it('starts as the README says (DEMO_ISSUER=1), prints a token once, and serves create, execute with demo credentials, patch, execute again', async () => {
    const dataDir = tempDir();
    const t0 = Date.now();
    const server = await start({ DATA_DIR: dataDir, DEMO_ISSUER: '1' });
    const ready = await fetch(`${server.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(3000);

    const m = /API token for this run \(API_TOKENS unset\): (\S+)/.exec(server.stderr());
    expect(m).not.toBeNull();
    const token = m![1];
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
    expect(await server.exited).toBe(0);

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
    expect(await server.exited).toBe(0);
  });

  it('finishes an in-flight request on SIGTERM, refuses new connections, and exits 0', async () => {
    const token = 'graceful-token-0123456789';
    const server = await start({ DATA_DIR: tempDir(), API_TOKENS: token });
    const { port } = new URL(server.url);
    const body = JSON.stringify({ id: 'late', input: scenario() });
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1', port, method: 'POST', path: '/compliance/scenarios',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      }, (res) => {
        let text = '';
        res.on('data', (d) => { text += d; });
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      // Half the body now, SIGTERM, then the rest.
      req.write(body.slice(0, 20));
      setTimeout(() => {
        server.proc.kill('SIGTERM');
        setTimeout(async () => {
          // The listener is closed by now: a new connection gets no answer but an error.
          await expect(fetch(`${server.url}/health/live`)).rejects.toThrow();
          req.end(body.slice(20));
        }, 300);
      }, 200);
    });
    const res = await response;
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text).id).toBe('late');
    // The finished request's connection is closed, so the exit does not wait for a keep-alive timeout.
    const t0 = Date.now();
    expect(await server.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('refuses to start on a bad variable with a one-line error naming it', async () => {
    for (const [name, value] of [['PORT', 'abc'], ['LOG_LEVEL', 'loud'], ['DATABASE_URL', 'mysql://x'], ['BODY_LIMIT', '-1']]) {
      const proc = spawn(process.execPath, ['dist/server.js'], { env: { PATH: process.env.PATH ?? '', [name]: value }, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      proc.stderr.on('data', (d) => { err += d; });
      const code = await new Promise((r) => proc.on('exit', r));
      expect(code).toBe(1);
      expect(err.trim().split('\n')).toHaveLength(1);
      expect(err).toContain(name);
    }
  });
});
