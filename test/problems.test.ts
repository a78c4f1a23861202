/**
 * Every refusal a client can meet is problem+json with an SCS_ code and a detail saying what to do, Fastify's own
 * errors (body parsing, Node's HTTP parser, shutting down) included; each is logged at info with its code, never with
 * the body or the token.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACT } from '../src/app.js';
import { problemCode } from '../src/http/errors.js';
import { ADDRESS, TOKEN, auth, makeApp, scenario } from './helpers.js';

type App = Awaited<ReturnType<typeof makeApp>>;
type Answer = { statusCode: number; headers: Record<string, unknown>; json(): any };

function expectCode(res: Answer, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body).toMatchObject({ status, code });
  return body as { detail: string };
}

const json = { ...auth, 'content-type': 'application/json' };
const SEND_JSON = 'Send a JSON object with Content-Type: application/json';

describe('body parsing problems', () => {
  let app: App;
  beforeAll(async () => {
    app = await makeApp({ BODY_LIMIT: '4096' });
    await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 's', input: scenario() } });
  });
  afterAll(async () => app.close());

  const routes = [
    ['POST', '/compliance/scenarios'],
    ['POST', '/compliance/scenarios/execute'],
    ['PATCH', '/compliance/scenarios/s'],
  ] as const;

  it('answers malformed JSON with 400 SCS_INVALID_JSON naming the position, not quoting the body', async () => {
    for (const [method, url] of routes) {
      const res = await app.inject({ method, url, headers: json, payload: '{"input": {"name": "SECRET-NAME"} "more": 1}' });
      const { detail } = expectCode(res, 400, 'SCS_INVALID_JSON');
      // Node 22's V8 adds the line and column to the position; Node 20's does not.
      expect(detail, url).toMatch(/^Body is not valid JSON: Expected ',' or '}' after property value in JSON at position 34( \(line 1 column 35\))?\. /);
      expect(detail, url).toContain(SEND_JSON);
      expect(detail, url).not.toContain('SECRET');
    }
    const token = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: json, payload: '{"input": SECRET}' });
    const { detail } = expectCode(token, 400, 'SCS_INVALID_JSON');
    expect(detail).toBe(`Body is not valid JSON: Unexpected token 'S'. ${SEND_JSON}`);
    // Like every 400, it lists the failing field: the body, with where it stops being JSON.
    expect(token.json().errors).toEqual([{ field: 'body', pointer: '', message: 'is not valid JSON: Unexpected token \'S\'' }]);
  });

  it('answers a __proto__ key with 400 SCS_PROTOTYPE_KEY', async () => {
    const res = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: json, payload: `{"input": ${JSON.stringify(scenario())}, "__proto__": {}}` });
    expect(expectCode(res, 400, 'SCS_PROTOTYPE_KEY').detail).toContain('remove or rename the key');
  });

  it('answers a body that is not JSON with 415 SCS_UNSUPPORTED_MEDIA_TYPE naming what was sent', async () => {
    for (const [method, url] of routes) {
      const res = await app.inject({ method, url, headers: { ...auth, 'content-type': 'text/plain' }, payload: 'hello' });
      const { detail } = expectCode(res, 415, 'SCS_UNSUPPORTED_MEDIA_TYPE');
      expect(detail, url).toBe(`Content-Type "text/plain" is not accepted here. ${SEND_JSON} (PATCH also takes application/merge-patch+json)`);
    }
    const form = await app.inject({ method: 'PATCH', url: '/compliance/scenarios/s', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=b' });
    expectCode(form, 415, 'SCS_UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers an empty JSON body with 400 SCS_EMPTY_BODY', async () => {
    for (const [method, url] of routes) {
      const res = await app.inject({ method, url, headers: json, payload: '' });
      expect(expectCode(res, 400, 'SCS_EMPTY_BODY').detail, url).toBe(`The body is empty, but its Content-Type says JSON. ${SEND_JSON}`);
      expect(res.json().errors, url).toEqual([{ field: 'body', pointer: '', message: 'is empty; send a JSON object' }]);
    }
  });

  it('answers a body over BODY_LIMIT with 413 SCS_BODY_TOO_LARGE naming the limit', async () => {
    for (const [method, url] of routes) {
      const res = await app.inject({ method, url, headers: json, payload: JSON.stringify({ input: scenario({ description: 'x'.repeat(5000) }) }) });
      expect(expectCode(res, 413, 'SCS_BODY_TOO_LARGE').detail, url).toBe('The body is larger than 4096 bytes this service accepts; send a smaller body');
    }
  });

  it('answers a Content-Length that is not the body length with 400 SCS_BAD_CONTENT_LENGTH', async () => {
    const res = await app.inject({
      method: 'POST', url: '/compliance/scenarios/execute', headers: { ...json, 'content-length': '500' },
      payload: JSON.stringify({ address: ADDRESS, scenarioId: 's', credentials: [] }),
    });
    expect(expectCode(res, 400, 'SCS_BAD_CONTENT_LENGTH').detail).toContain('Content-Length');
  });
});

describe('DELETE with Content-Type: application/json and no body', () => {
  it('is accepted on every DELETE route', async () => {
    const app = await makeApp();
    try {
      // Every DELETE route the document names: a new one fails here until it is covered below.
      const spec = app.swagger() as { paths: Record<string, Record<string, unknown>> };
      const deletes = Object.entries(spec.paths).filter(([, ops]) => 'delete' in ops).map(([path]) => path);
      expect(deletes).toEqual([
        '/compliance/scenarios/{scenarioId}', '/compliance/scenarios/{scenarioId}/deployments/{deploymentId}',
        '/compliance/scenarios/{scenarioId}/revisions/{revision}/shadow',
      ]);
      for (const headers of [json, { ...json, 'content-length': '0' }]) {
        expect((await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'd', input: scenario() } })).statusCode).toBe(201);
        const res = await app.inject({ method: 'DELETE', url: '/compliance/scenarios/d', headers });
        expect(res.statusCode, res.body).toBe(204);
        expect((await app.inject({ method: 'GET', url: '/compliance/scenarios/d', headers: auth })).statusCode).toBe(404);
        // Past the body's checks to the route's own answer: the scenario is gone.
        expectCode(await app.inject({ method: 'DELETE', url: '/compliance/scenarios/d/revisions/1/shadow', headers }), 404, 'SCS_SCENARIO_NOT_FOUND');
        expectCode(await app.inject({ method: 'DELETE', url: '/compliance/scenarios/d/deployments/d-1', headers }), 404, 'SCS_SCENARIO_NOT_FOUND');
      }
      // A body that is there is still parsed: broken JSON is refused.
      expectCode(await app.inject({ method: 'DELETE', url: '/compliance/scenarios/d', headers: json, payload: '{' }), 400, 'SCS_INVALID_JSON');
    } finally {
      await app.close();
    }
  });
});

/** Sends raw bytes to the listening app and answers the status, content type and problem the connection got back. */
async function raw(port: number, bytes: string): Promise<{ status: number; contentType: string; problem: any }> {
  const text = await new Promise<string>((resolve, reject) => {
    let got = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.on('data', (chunk) => { got += chunk.toString(); });
    socket.on('close', () => resolve(got));
    socket.on('error', reject);
  });
  const [head, body] = text.split('\r\n\r\n');
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head!)?.[1]),
    contentType: /^content-type: (.*)$/im.exec(head!)?.[1] ?? '',
    problem: JSON.parse(body!),
  };
}

describe("Node's HTTP parser and shutting down", () => {
  it('answers a malformed request with 400 SCS_MALFORMED_REQUEST and headers too large with 431 SCS_HEADERS_TOO_LARGE', async () => {
    const app = await makeApp();
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as net.AddressInfo).port;
      const bad = await raw(port, 'NOT HTTP AT ALL\r\n\r\n');
      expect(bad.status).toBe(400);
      expect(bad.contentType).toBe('application/problem+json');
      expect(bad.problem).toMatchObject({ status: 400, code: 'SCS_MALFORMED_REQUEST' });
      const big = await raw(port, `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(big.status).toBe(431);
      expect(big.problem).toMatchObject({ status: 431, code: 'SCS_HEADERS_TOO_LARGE' });
    } finally {
      await app.close();
    }
  });

  it('answers a request that arrives while closing with 503 SCS_SHUTTING_DOWN and Retry-After', async () => {
    const app = await makeApp();
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as net.AddressInfo).port;
    // The request's first line arrives before close() and the rest after: the connection is not idle, so it is kept.
    const socket = net.connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (chunk) => { got += chunk.toString(); });
    const ended = new Promise((resolve) => socket.on('close', resolve));
    await new Promise<void>((resolve) => socket.write('GET /compliance/scenarios HTTP/1.1\r\nHost: x\r\n', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = app.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.write(`Authorization: Bearer ${TOKEN}\r\n\r\n`);
    await ended;
    await closed;
    const [head, body] = got.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(head).toMatch(/^retry-after: 1$/im);
    expect(head).toMatch(/^content-type: application\/problem\+json/im);
    expect(JSON.parse(body!)).toMatchObject({ status: 503, code: 'SCS_SHUTTING_DOWN' });
  });
});

/** The .ts files under a directory, recursively. */
const sources = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
  e.isDirectory() ? sources(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []);

describe('problem codes', () => {
  it('are each listed in docs/decisions.md under "Problem codes"', () => {
    const doc = fs.readFileSync('docs/decisions.md', 'utf8');
    const start = doc.indexOf('## Problem codes');
    expect(start).toBeGreaterThan(0);
    const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
    const listed = new Set(section.match(/`SCS_[A-Z0-9_]+`/g)?.map((c) => c.slice(1, -1)));
    // SCS_WRITER_GONE marks an internal error (the SQLite writer thread ended), answered as SCS_DATABASE_UNAVAILABLE.
    const used = new Set(sources('src').flatMap((f) => fs.readFileSync(f, 'utf8').match(/(?<=['"])SCS_[A-Z0-9_]+(?=['"])/g) ?? []));
    used.delete('SCS_WRITER_GONE');
    expect(used.size).toBeGreaterThan(30);
    expect([...used].filter((c) => !listed.has(c)).sort()).toEqual([]);
  });

  it('gives an error without an SCS_ code one from its status', () => {
    expect(problemCode('SCS_CONFLICT', 409)).toBe('SCS_CONFLICT');
    expect(problemCode('FST_ERR_SOMETHING', 400)).toBe('SCS_BAD_REQUEST');
    expect(problemCode(undefined, 503)).toBe('SCS_SERVICE_UNAVAILABLE');
    expect(problemCode('ECONNRESET', 418)).toBe('SCS_HTTP_418');
  });

  it('logs each problem at info with its code and status, never the body or the token', async () => {
    const lines: string[] = [];
    const app = await makeApp({}, {
      logger: { level: 'info', redact: { paths: REDACT, censor: '[redacted]' }, stream: { write: (line: string) => { lines.push(line); } } },
    });
    try {
      await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: json, payload: '{"input": {"name": "SECRET-NAME"} x}' });
      await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: json, payload: { input: scenario({ name: 5, description: 'SECRET-DESCRIPTION' }) } });
      await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { authorization: 'Bearer SECRET-TOKEN' } });
      const problems = lines.map((l) => JSON.parse(l)).filter((l) => l.problem !== undefined);
      expect(problems.map((l) => [l.level, l.problem, l.status])).toEqual([
        [30, 'SCS_INVALID_JSON', 400],
        [30, 'SCS_VALIDATION', 400],
        [30, 'SCS_UNAUTHORIZED', 401],
      ]);
      expect(lines.join('\n')).not.toMatch(/SECRET|Bearer/);
    } finally {
      await app.close();
    }
  });
});
