/**
 * Stopping under keep-alive load, with real processes: on SIGTERM the instance tells clients first (readiness 503 at
 * once, `Connection: close` on every answer), keeps serving for SHUTDOWN_DELAY_MS, then stops listening; every request
 * it has begun to read is answered, one whose body is still arriving included.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS, scenario, tempDir } from './helpers.js';
import { build, killAll, start, type Server } from './server-process.js';
import { DUPLICATE_SIGNAL_MS } from '../src/cluster.js';

beforeAll(() => {
  build();
}, 120_000);

afterAll(killAll);

const TOKEN = 'shutdown-token-0123456789';

/** How the process ended, for a failed exit assertion: the signal that ended it (if one did), its stderr, its last log lines. */
const howItEnded = (server: Server) =>
  `signal: ${server.proc.signalCode}\nstderr:\n${server.stderr()}\nlast log lines:\n${server.stdout().split('\n').slice(-12).join('\n')}`;

interface Answer { status?: number; connection?: string; code?: string; error?: string }

/** One request on `agent`; a socket error is an answer too (`error`: its code). */
function send(server: Server, agent: http.Agent, method: string, path: string, body?: string): Promise<Answer> {
  const { port } = new URL(server.url);
  return new Promise((resolve) => {
    const req = http.request({
      host: '127.0.0.1', port, method, path, agent,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, code: text.startsWith('{') ? JSON.parse(text).code : undefined }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: `${err.code ?? err.message}${req.reusedSocket ? ' reused' : ''}` }));
    req.end(body);
  });
}

describe('SIGTERM', () => {
  it('answers readiness 503 at once, closes connections after each answer, serves for SHUTDOWN_DELAY_MS, and answers an execute whose body arrives after the signal', async () => {
    const server = await start({ DATA_DIR: tempDir(), API_TOKENS: TOKEN, CREDENTIAL_VERIFICATION: 'off', SHUTDOWN_DELAY_MS: '1500' });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    try {
      expect((await send(server, agent, 'POST', '/compliance/scenarios', JSON.stringify({ id: 's', input: scenario() }))).status).toBe(201);
      const before = await send(server, agent, 'GET', '/compliance/scenarios');
      expect(before).toMatchObject({ status: 200 });
      expect(before.connection).not.toBe('close');

      // An execute whose headers and first bytes arrive before the signal, the rest 300 ms after it.
      const { port } = new URL(server.url);
      const body = JSON.stringify({ address: ADDRESS, scenarioId: 's', credentials: [] });
      const slow = new Promise<Answer>((resolve) => {
        const req = http.request({
          host: '127.0.0.1', port, method: 'POST', path: '/compliance/scenarios/execute',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
        });
        req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code }));
        req.write(body.slice(0, 20));
        setTimeout(() => {
          server.proc.kill('SIGTERM');
          setTimeout(() => req.end(body.slice(20)), 300);
        }, 200);
      });
      await new Promise((r) => setTimeout(r, 350)); // the signal was sent 150 ms ago
      expect(await send(server, agent, 'GET', '/health/ready')).toMatchObject({ status: 503, code: 'SCS_SHUTTING_DOWN', connection: 'close' });
      expect(await send(server, agent, 'GET', '/compliance/scenarios')).toMatchObject({ status: 200, connection: 'close' });
      expect(await slow).toMatchObject({ status: 200, connection: 'close' });
      expect(await server.exited, howItEnded(server)).toBe(0);
    } finally {
      agent.destroy();
    }
  }, 60_000);

  it('loses no request written to a kept-alive connection: each is answered (with Connection: close from the signal on)', async () => {
    const server = await start({ DATA_DIR: tempDir(), API_TOKENS: TOKEN, SHUTDOWN_DELAY_MS: '1000' });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const answers: Answer[] = [];
    const state = { stop: false };
    const client = async () => {
      // Bounded: until the listener is gone, at most 10 s.
      for (const t0 = Date.now(); !state.stop && Date.now() - t0 < 10_000;) {
        const a = await send(server, agent, 'GET', '/compliance/scenarios');
        answers.push(a);
        if (a.error === 'ECONNREFUSED') return;
      }
    };
    try {
      const clients = Array.from({ length: 8 }, client);
      await new Promise((r) => setTimeout(r, 500));
      server.proc.kill('SIGTERM');
      expect(await server.exited, howItEnded(server)).toBe(0);
      state.stop = true;
      await Promise.all(clients);
      // Lost: a request the server had a connection open for, closed under it. A new connection refused, or reset
      // from the listen backlog as the listener closes, carried a request the server never read: what SHUTDOWN_DELAY_MS
      // with readiness 503 lets a load balancer avoid (these clients ignore readiness and keep connecting).
      const lost = answers.filter((a) => a.error?.endsWith(' reused'));
      expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(20);
      expect(answers.filter((a) => a.status !== undefined && a.connection === 'close').length).toBeGreaterThan(0);
      expect(lost).toEqual([]);
    } finally {
      agent.destroy();
    }
  }, 60_000);
});

/**
 * An execute whose headers and first bytes are sent now, `signal` called 200 ms later and the rest of the body 300 ms
 * after that: a request in flight when the signal comes.
 */
function executeAcrossSignal(server: Server, signal: () => void): Promise<Answer> {
  const { port } = new URL(server.url);
  const body = JSON.stringify({ address: ADDRESS, scenarioId: 's', credentials: [] });
  return new Promise<Answer>((resolve) => {
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path: '/compliance/scenarios/execute',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code }));
    req.write(body.slice(0, 20));
    setTimeout(() => {
      signal();
      setTimeout(() => req.end(body.slice(20)), 300);
    }, 200);
  });
}

// Issue 36: a terminal's Ctrl-C and systemd (KillMode=control-group) signal the whole process group of `npm start`, so
// node gets the signal twice, from the group and forwarded by npm; close-with-grace took the copy for a second signal
// and exited 1 mid-request.
describe('a signal to the process group of npm start', () => {
  const startNpm = async () => {
    // Draining lasts 1.5 s (SHUTDOWN_DELAY_MS): the copy of the signal that npm forwards comes meanwhile.
    const server = await start({ DATA_DIR: tempDir(), API_TOKENS: TOKEN, CREDENTIAL_VERIFICATION: 'off', SHUTDOWN_DELAY_MS: '1500' }, { npm: true, detached: true });
    const agent = new http.Agent();
    try {
      expect((await send(server, agent, 'POST', '/compliance/scenarios', JSON.stringify({ id: 's', input: scenario() }))).status).toBe(201);
    } finally {
      agent.destroy();
    }
    return server;
  };

  it.each(['SIGTERM', 'SIGINT'] as const)('%s: the request in flight is answered and npm start exits 0', async (signal) => {
    const server = await startNpm();
    const answer = executeAcrossSignal(server, () => process.kill(-server.proc.pid!, signal));
    expect(await answer, howItEnded(server)).toEqual({ status: 200 });
    expect(await server.exited, howItEnded(server)).toBe(0);
    expect(server.stderr()).not.toMatch(/second SIG/);
  }, 60_000);

  it('a second signal sent later still stops it at once, exit 1, before SHUTDOWN_DELAY_MS is over', async () => {
    const server = await start({ DATA_DIR: tempDir(), API_TOKENS: TOKEN, SHUTDOWN_DELAY_MS: '120000' }, { npm: true, detached: true });
    const first = Date.now();
    process.kill(-server.proc.pid!, 'SIGTERM');
    // Draining: readiness 503 for SHUTDOWN_DELAY_MS (two minutes, more than the test's timeout) until the second signal.
    const agent = new http.Agent();
    try {
      await expect.poll(async () => (await send(server, agent, 'GET', '/health/ready')).code, { timeout: 30_000, interval: 100 }).toBe('SCS_SHUTTING_DOWN');
    } finally {
      agent.destroy();
    }
    // The second signal comes after the window in which the same signal is taken for the process group's copy.
    await new Promise((r) => setTimeout(r, Math.max(0, first + DUPLICATE_SIGNAL_MS + 500 - Date.now())));
    process.kill(-server.proc.pid!, 'SIGTERM');
    expect(await server.exited, howItEnded(server)).toBe(1);
    expect(server.stdout() + server.stderr()).toMatch(/second SIGTERM/);
  }, 60_000);
});
