/** /console: the console's static files, their CSP, and CONSOLE=false. The pages themselves: console.browser.test.ts. */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { CONSOLE_CSP } from '../src/http/console.js';
import { auth, makeApp } from './helpers.js';

describe('the console at /console', () => {
  let app: FastifyInstance;
  beforeAll(async () => { app = await makeApp(); });
  afterAll(async () => { await app?.close(); });

  it('serves its page with a CSP allowing only this origin, and no inline script or style in it', async () => {
    for (const url of ['/console', '/console/']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toBe(CONSOLE_CSP);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
      expect(csp).not.toContain('upgrade-insecure-requests');
      // Every script is a file of this origin; no style attribute or element the CSP would block.
      expect(res.body).not.toMatch(/<script(?![^>]*\bsrc="\/console\/)/);
      expect(res.body).not.toMatch(/\sstyle=|<style/);
    }
  });

  it('serves its modules and stylesheet, gzipped when asked, and 404 for a file it does not have', async () => {
    const js = await app.inject({ method: 'GET', url: '/console/app.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(js.rawPayload).toString()).toContain('/compliance/scenarios');
    const css = await app.inject({ method: 'GET', url: '/console/console.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['content-encoding']).toBeUndefined();
    for (const url of ['/console/nope.js', '/console/../package.json', '/console/%2e%2e/package.json']) {
      const missing = await app.inject({ method: 'GET', url });
      expect(missing.statusCode, url).toBe(404);
      expect(missing.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });

  it('is off with CONSOLE=false, and leaves the other routes\' CSP as it is without it', async () => {
    const off = await makeApp({ CONSOLE: 'false' });
    try {
      expect((await off.inject({ method: 'GET', url: '/console' })).statusCode).toBe(404);
      expect((await off.inject({ method: 'GET', url: '/console/app.js' })).statusCode).toBe(404);
      const csp = async (instance: FastifyInstance) =>
        (await instance.inject({ method: 'GET', url: '/compliance/scenarios', headers: auth })).headers['content-security-policy'];
      expect(await csp(app)).toMatch(/^default-src 'none'/);
      expect(await csp(app)).toBe(await csp(off));
    } finally {
      await off.close();
    }
  });
});
