/** CORS (CORS_ORIGINS) through the app: preflight, the headers a page may read, unlisted origins, off by default. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { ADDRESS, auth, credential, makeApp, scenario } from './helpers.js';

const APP = 'https://app.example.com';
const OTHER = 'https://evil.example';

const preflight = (origin: string) => ({
  method: 'OPTIONS' as const,
  url: '/compliance/scenarios/execute',
  headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
});

describe('CORS for the origins of CORS_ORIGINS', () => {
  it('answers a listed origin\'s preflight 204 before authentication, with the methods and headers a client sends', async () => {
    const app = await makeApp({ CORS_ORIGINS: `${APP}, http://localhost:5173` });
    try {
      const res = await app.inject(preflight(APP));
      expect(res.statusCode).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(String(res.headers['access-control-allow-methods']).split(', ')).toEqual(expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE']));
      expect(String(res.headers['access-control-allow-headers']).toLowerCase().split(', '))
        .toEqual(expect.arrayContaining(['authorization', 'content-type', 'if-match', 'idempotency-key', 'x-request-id']));
      expect(res.headers.vary).toMatch(/Origin/);
    } finally {
      await app.close();
    }
  });

  it('lets a listed origin read ETag, Location, Idempotent-Replayed, Retry-After, x-request-id and the attestations, and shares the answer cross-origin', async () => {
    const app = await makeApp({ CORS_ORIGINS: APP, RATE_LIMIT_MAX: '2' });
    try {
      const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: { ...auth, origin: APP }, payload: { id: 'cors-1', input: scenario() } });
      expect(created.statusCode).toBe(201);
      expect(created.headers['access-control-allow-origin']).toBe(APP);
      expect(String(created.headers['access-control-expose-headers']).split(', '))
        .toEqual(['ETag', 'Retry-After', 'Location', 'Idempotent-Replayed', 'x-request-id', 'Attestation', 'Attestation-EIP712']);
      expect(created.headers['cross-origin-resource-policy']).toBe('cross-origin');

      const executed = await app.inject({
        method: 'POST', url: '/compliance/scenarios/execute', headers: { ...auth, origin: APP },
        payload: { scenarioId: 'cors-1', address: ADDRESS, credentials: [credential()] },
      });
      expect(executed.statusCode).toBe(200);
      expect(executed.headers['access-control-allow-origin']).toBe(APP);

      // Past the rate limit: the 429 carries the CORS headers, so a page can read its Retry-After.
      const limited = await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { ...auth, origin: APP } });
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['access-control-allow-origin']).toBe(APP);
      expect(limited.headers['retry-after']).toBeDefined();
    } finally {
      await app.close();
    }
  });

  it('gives an unlisted origin no Access-Control-* header, a 404 preflight, and keeps Cross-Origin-Resource-Policy same-origin', async () => {
    const app = await makeApp({ CORS_ORIGINS: APP });
    try {
      const pre = await app.inject(preflight(OTHER));
      expect(pre.statusCode).toBe(404);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      const res = await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { ...auth, origin: OTHER } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
    } finally {
      await app.close();
    }
  });

  it('is off by default: a preflight is a 404 and no Access-Control-* header is sent', async () => {
    const app = await makeApp();
    try {
      expect((await app.inject(preflight(APP))).statusCode).toBe(404);
      const res = await app.inject({ method: 'GET', url: '/compliance/scenarios', headers: { ...auth, origin: APP } });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
    } finally {
      await app.close();
    }
  });

  it('accepts only explicit origins as browsers send them: never `*`, no path, no trailing slash', () => {
    expect(loadConfig({ CORS_ORIGINS: ` ${APP} ,http://localhost:5173,` }).corsOrigins).toEqual([APP, 'http://localhost:5173']);
    for (const bad of ['*', `${APP},*`, `${APP}/`, `${APP}/app`, 'app.example.com', 'ftp://app.example.com', 'https://APP.example.com']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(ConfigError);
    }
    expect(() => loadConfig({ CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS must list origins explicitly/);
  });
});
