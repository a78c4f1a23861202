import { describe, expect, it } from 'vitest';
import { ADDRESS, TOKEN, auth, credential, makeApp, scenario } from './helpers.js';
import Fastify from 'fastify';
import { MAX_JSON_DEPTH, MAX_JSON_KEYS, shapeProblem } from '../src/http/body-policy.js';
import { protection } from '../src/http/protection.js';

/** Where a value nests deeper than `limit` levels (any number of keys), through the production check. */
const tooDeepAt = (value: unknown, limit: number) => shapeProblem(value, limit, Infinity)?.at;
const deeperThan = (value: unknown, limit: number) => tooDeepAt(value, limit) !== undefined;

describe('rate limiting per token', () => {
  it('answers 429 problem+json with Retry-After past the limit, per token, and leaves other tokens alone', async () => {
    const other = 'other-token-0123456789abc';
    const app = await makeApp({ RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000', API_TOKENS: `${TOKEN},${other}` });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth })).statusCode);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
      const limited = await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth });
      expect(limited.headers['content-type']).toMatch(/problem\+json/);
      expect(limited.json()).toMatchObject({ status: 429, code: 'SCS_RATE_LIMITED' });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect((await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { authorization: `Bearer ${other}` } })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('rate-limit identity', () => {
  it('gives one token one budget however its Authorization header is spelled (scheme case, spaces)', async () => {
    const app = await makeApp({ RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_MS: '60000' });
    try {
      const spellings = [`Bearer ${TOKEN}`, `bearer ${TOKEN}`, `BEARER ${TOKEN}`, `Bearer   ${TOKEN}  `, `bEaReR ${TOKEN}`, `Bearer ${TOKEN}`];
      const statuses: number[] = [];
      for (const authorization of spellings) statuses.push((await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { authorization } })).statusCode);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    } finally {
      await app.close();
    }
  });

  it('keys a route without a token on the client address, whatever Authorization header comes with it', async () => {
    const app = await makeApp({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000', ZKP_RESPONSES_PER_MINUTE: '0' });
    try {
      const url = `/compliance/executions/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/zkp-response`; // its own limit off
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await app.inject({ method: 'POST', url, headers: { authorization: `Bearer made-up-${i}`, 'content-type': 'text/plain' }, payload: 'x' });
        statuses.push(res.statusCode);
      }
      expect(statuses.slice(0, 3).every((s) => s !== 429)).toBe(true);
      expect(statuses.slice(3)).toEqual([429, 429]);
    } finally {
      await app.close();
    }
  });

  it('lets unknown tokens share their address budget instead of each getting one, and leaves a known token its own', async () => {
    const app = await makeApp({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        statuses.push((await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { authorization: `Bearer unknown-token-${i}-0123456789` } })).statusCode);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      expect((await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('JSON bodies', () => {
  const send = (app: Awaited<ReturnType<typeof makeApp>>, url: string, payload: string) =>
    app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload });
  const execute = (extra: string) => `{"address": "${ADDRESS}", "scenarioId": "s", "credentials": []${extra}}`;

  it('refuses __proto__ and constructor.prototype keys, spelled plainly or with \\u escapes, on every route', async () => {
    const app = await makeApp();
    try {
      for (const url of ['/compliance/scenarios', '/compliance/scenarios/execute']) {
        for (const extra of [', "__proto__": {"x": 1}', ', "\\u005f_proto__": {"x": 1}', ', "a": {"constructor": {"prototype": {"x": 1}}}', ', "a": {"\\u0063onstructor": {"prototype": {}}}']) {
          const res = await send(app, url, execute(extra));
          expect(res.statusCode, `${url} ${extra}`).toBe(400);
          expect(res.json().code, `${url} ${extra}`).toBe('SCS_PROTOTYPE_KEY');
        }
      }
    } finally {
      await app.close();
    }
  });

  it('parses texts that only mention the names in values, with escapes, or a byte order mark, as JSON.parse does', async () => {
    const app = await makeApp();
    try {
      await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 's', input: scenario() } });
      const description = 'a prototype and its constructor, caf\\u00e9';
      const created = await send(app, '/compliance/scenarios', `\ufeff{"id": "t", "input": ${JSON.stringify(scenario({ description: 'DESCRIPTION' })).replace('"DESCRIPTION"', `"${description}"`)}}`);
      expect(created.statusCode).toBe(201);
      expect(created.json().input.description).toBe('a prototype and its constructor, café');
      expect((await send(app, '/compliance/scenarios/execute', execute(''))).statusCode).toBe(200);
      for (const [bad, code] of [['', 'SCS_EMPTY_BODY'], ['{"address": ', 'SCS_INVALID_JSON'], ['{"a": 1} x', 'SCS_INVALID_JSON']] as const) {
        const res = await send(app, '/compliance/scenarios/execute', bad);
        expect(res.statusCode, JSON.stringify(bad)).toBe(400);
        expect(res.json().code).toBe(code);
      }
    } finally {
      await app.close();
    }
  });
});

describe('limits', () => {
  it('refuses a body nested deeper than 32 levels with 400, not a crash', async () => {
    const app = await makeApp();
    try {
      const deep = `${'['.repeat(5000)}"x"${']'.repeat(5000)}`;
      const body = JSON.stringify({ address: ADDRESS, scenarioId: 's', credentials: [credential({}, { deep: 'DEEP' })] }).replace('"DEEP"', deep);
      const res = await app.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: { ...auth, 'content-type': 'application/json' }, payload: body,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('SCS_TOO_DEEP');
      // The body is level 1, credentials 2, the credential 3, credentialSubject 4, deep 5: level 33 is deep's 28th array.
      const field = `body.credentials.0.credentialSubject.deep${'.0'.repeat(28)}`;
      expect(res.json().errors).toEqual([{
        field, pointer: `/credentials/0/credentialSubject/deep${'/0'.repeat(28)}`, message: 'is nested 33 levels deep; the body may nest at most 32',
      }]);
      expect(res.json().detail).toBe(`The JSON body nests deeper than 32 levels, first at ${field}`);
    } finally {
      await app.close();
    }
  });

  it('counts depth exactly at the limit: 32 levels pass, 33 do not, in objects and arrays alike', () => {
    const nest = (levels: number, array: boolean): unknown => {
      let v: unknown = 'leaf';
      for (let i = 0; i < levels; i++) v = array ? [1, v] : { a: 1, [`k${i}`]: v };
      return v;
    };
    for (const array of [false, true]) {
      expect(deeperThan(nest(MAX_JSON_DEPTH, array), MAX_JSON_DEPTH)).toBe(false);
      expect(deeperThan(nest(MAX_JSON_DEPTH + 1, array), MAX_JSON_DEPTH)).toBe(true);
    }
    expect(deeperThan('x', 0)).toBe(false);
    expect(deeperThan({}, 0)).toBe(true);
    expect(deeperThan({}, 1)).toBe(false);
    expect(deeperThan(JSON.parse('{"__proto__": {"a": {}}}'), 2)).toBe(true);
    expect(tooDeepAt({ ok: [1], 'a/b': [{ x: 1 }, [{ 'c~d': {} }]] }, 3)).toEqual(['a/b', 1, 0]);
    expect(tooDeepAt({ ok: [1], a: [{ x: 1 }] }, 3)).toBeUndefined();
    // Inherited enumerable keys are not the document's.
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = { a: { b: {} } };
    try {
      expect(deeperThan({ x: 1 }, 1)).toBe(false);
    } finally {
      delete proto.polluted;
    }
  });

  it('refuses an object of more than 1000 keys with 400 SCS_TOO_MANY_KEYS naming it, and executes with 1000', async () => {
    const app = await makeApp({ MAX_CREDENTIAL_LEAVES: '5000' });
    try {
      await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 's', input: scenario() } });
      // credential() gives credentialSubject 3 keys of its own.
      const claims = (n: number) => Object.fromEntries(Array.from({ length: n - 3 }, (_, i) => [`claim${i}`, i]));
      const execute = (n: number) => app.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: auth,
        payload: { address: ADDRESS, scenarioId: 's', credentials: [credential(), credential({}, claims(n))] },
      });
      const under = await execute(MAX_JSON_KEYS);
      expect(under.statusCode, under.body).toBe(200);
      const over = await execute(MAX_JSON_KEYS + 1);
      expect(over.statusCode).toBe(400);
      expect(over.json()).toMatchObject({ code: 'SCS_TOO_MANY_KEYS', detail: 'The JSON body has an object of more than 1000 keys, at body.credentials.1.credentialSubject' });
      expect(over.json().errors).toEqual([{
        field: 'body.credentials.1.credentialSubject', pointer: '/credentials/1/credentialSubject', message: 'has 1001 keys; an object of the body may have at most 1000',
      }]);

      // Unknown fields: over the cap the walk refuses them before Ajv lists them; at the cap Ajv names them.
      const unknown = (n: number) => app.inject({
        method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { input: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1])) },
      });
      const many = await unknown(83_000);
      expect(many.statusCode).toBe(400);
      expect(many.json().code).toBe('SCS_TOO_MANY_KEYS');
      expect(many.json().errors).toEqual([expect.objectContaining({ field: 'body.input', pointer: '/input', message: expect.stringContaining('83000 keys') })]);
      const atCap = await unknown(MAX_JSON_KEYS);
      expect(atCap.statusCode).toBe(400);
      expect(atCap.json()).toMatchObject({ code: 'SCS_VALIDATION', errorsTruncated: true });
    } finally {
      await app.close();
    }
  });

  it('counts keys exactly at the cap, own keys only, the whole body included, the first offender named', () => {
    const object = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
    expect(shapeProblem(object(10), 32, 10)).toBeUndefined();
    expect(shapeProblem(object(11), 32, 10)).toEqual({ at: [], keys: 11 });
    expect(shapeProblem({ a: [1, { 'b/c': object(11) }], d: object(12) }, 32, 10)).toEqual({ at: ['a', 1, 'b/c'], keys: 11 });
    // Depth first: the too-deep object inside the first key is found before the big object after it.
    expect(shapeProblem({ a: { b: { c: {} } }, d: object(12) }, 2, 10)).toEqual({ at: ['a', 'b'] });
    expect(shapeProblem([object(5)], 32, 4)).toEqual({ at: [0], keys: 5 });
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = 1;
    try {
      expect(shapeProblem(object(10), 32, 10)).toBeUndefined();
    } finally {
      delete proto.polluted;
    }
  });

  it('names the limit when there are too many credentials or query configurations', async () => {
    const app = await makeApp();
    try {
      const many = await app.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: auth,
        payload: { address: ADDRESS, scenarioId: 's', credentials: Array.from({ length: 101 }, () => credential()) },
      });
      expect(many.statusCode).toBe(400);
      expect(many.json().errors).toContainEqual(expect.objectContaining({ field: 'body.credentials', message: expect.stringContaining('100') }));
      const rules = Array.from({ length: 257 }, (_, i) => ({ id: `q${i}`, query: { type: 'IDInformation', operator: '$noop' } }));
      const big = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { input: scenario({ queryConfigurations: rules }) } });
      expect(big.statusCode).toBe(400);
      expect(big.json().errors).toContainEqual(expect.objectContaining({ field: 'body.input.queryConfigurations', message: expect.stringContaining('256') }));
      const longName = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { input: scenario({ name: 'n'.repeat(257) }) } });
      expect(longName.statusCode, longName.body).toBe(400);
      expect(longName.json().errors).toContainEqual(expect.objectContaining({ field: 'body.input.name', message: expect.stringContaining('256') }));
    } finally {
      await app.close();
    }
  });
});

describe('security headers', () => {
  it('sets helmet headers on API responses', async () => {
    const app = await makeApp();
    try {
      const res = await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth });
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toContain("default-src 'none'");
      expect(res.headers['strict-transport-security']).toBeDefined();
      expect(res.headers['x-frame-options']).toBeDefined();
    } finally {
      await app.close();
    }
  });

  it('the /docs page asks for https subresources (upgrade-insecure-requests) only when it was asked for over https', async () => {
    // TRUST_PROXY: inject's requests come from 127.0.0.1, the proxy whose X-Forwarded-Proto is believed.
    const app = await makeApp({ TRUST_PROXY: '127.0.0.1' });
    try {
      const csp = async (headers: Record<string, string>) => {
        const res = await app.inject({ method: 'GET', url: '/docs', headers });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        return String(res.headers['content-security-policy']);
      };
      const overHttp = await csp({ host: '192.0.2.10:3000' });
      expect(overHttp).toContain("script-src 'self'");
      expect(overHttp).not.toContain('upgrade-insecure-requests');
      expect(await csp({ host: 'scs.example', 'x-forwarded-proto': 'https' })).toContain('upgrade-insecure-requests');
      const api = await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth });
      expect(api.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    } finally {
      await app.close();
    }
  });
});

describe('load shedding', () => {
  it('answers 503 problem+json with Retry-After while the event loop lags', async () => {
    const app = await makeApp({ MAX_EVENT_LOOP_DELAY_MS: '200' });
    try {
      // Lag the event loop with 300 ms tasks one after the other until a sampling window (1 s) has seen only lag.
      let res;
      const until = Date.now() + 5000;
      do {
        const slice = Date.now() + 300;
        while (Date.now() < slice) { /* busy */ }
        await new Promise((r) => setImmediate(r)); // a turn of the event loop: its timers run, late
        res = await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth });
      } while (res.statusCode !== 503 && Date.now() < until);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 503, code: 'SCS_OVERLOADED' });
      expect(res.headers['retry-after']).toBe('1');
      // Liveness is never shed (an orchestrator would restart a busy, healthy process); readiness is.
      expect((await app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(503);
      // And it recovers.
      await new Promise((r) => setTimeout(r, 2500));
      expect((await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('does not shed after a stall of 1.2 s when the threshold is 5 s, even in a window without a sample', async () => {
    // The plugin alone, so that the stall starts as soon as it is registered: its first window then holds no
    // event-loop sample. @fastify/under-pressure 9.2.0 read such a window as an infinite delay (NaN -> Infinity) and
    // answered 503 for a second, whatever MAX_EVENT_LOOP_DELAY_MS said.
    const app = Fastify({ logger: false });
    await app.register(protection, { rateLimit: { max: 0, windowMs: 1000 }, maxEventLoopDelayMs: 5000, identify: () => undefined });
    app.get('/', async () => ({ ok: true }));
    await app.ready();
    try {
      for (const pauseMs of [0, 300]) {
        if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs)); // (even a 0 ms timer lets a sample in)
        const until = Date.now() + 1200;
        while (Date.now() < until) { /* busy */ }
        await new Promise((r) => setTimeout(r, 20));
        const res = await app.inject({ method: 'GET', url: '/' });
        expect(res.statusCode, `after a pause of ${pauseMs} ms: ${res.body}`).toBe(200);
      }
    } finally {
      await app.close();
    }
  });
});

describe('behind a proxy (TRUST_PROXY)', () => {
  const zkp = (app: Awaited<ReturnType<typeof makeApp>>, remoteAddress: string, forwarded: string) => app.inject({
    method: 'POST', url: `/compliance/executions/${crypto.randomUUID()}/zkp-response`, remoteAddress,
    headers: { 'content-type': 'text/plain', 'x-forwarded-for': forwarded }, payload: 'x',
  });
  const anonymous = (app: Awaited<ReturnType<typeof makeApp>>, remoteAddress: string, forwarded: string) => app.inject({
    method: 'GET', url: '/compliance/scenarios', remoteAddress, headers: { 'x-forwarded-for': forwarded },
  });

  it('counts every per-address limit on the client that a listed proxy names, so one wallet cannot spend another\'s', async () => {
    const app = await makeApp({ TRUST_PROXY: '10.1.0.0/16, 127.0.0.1', ZKP_RESPONSES_PER_MINUTE: '3', RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000' });
    try {
      const attacker = [];
      for (let i = 0; i < 30; i++) attacker.push((await zkp(app, '10.1.2.3', '198.51.100.66')).statusCode);
      expect(attacker.slice(0, 3)).toEqual([404, 404, 404]);
      expect(new Set(attacker.slice(3))).toEqual(new Set([429]));
      // The wallet behind the same load balancer keeps its own budget.
      expect((await zkp(app, '10.1.2.3', '203.0.113.9')).statusCode).toBe(404);
      expect((await zkp(app, '127.0.0.1', '203.0.113.10')).statusCode).toBe(404);
      // The service-wide limit for requests without a token, too.
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await anonymous(app, '10.1.9.9', '198.51.100.66')).statusCode);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
      expect((await anonymous(app, '10.1.9.9', '203.0.113.9')).statusCode).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('ignores X-Forwarded-For from anyone not listed, and by default: a client cannot pick a fresh address', async () => {
    for (const env of [{}, { TRUST_PROXY: '10.1.0.0/16' }] as Record<string, string>[]) {
      const app = await makeApp({ ...env, ZKP_RESPONSES_PER_MINUTE: '3' });
      try {
        const statuses = [];
        for (let i = 0; i < 5; i++) statuses.push((await zkp(app, '192.0.2.1', `198.51.100.${i}`)).statusCode);
        expect(statuses).toEqual([404, 404, 404, 429, 429]);
      } finally {
        await app.close();
      }
    }
  });
});
