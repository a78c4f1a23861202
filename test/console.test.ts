/** /console: the console's static files, their CSP, and CONSOLE=false. The pages themselves: console.browser.test.ts. */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { acceptsGzip, CONSOLE_CSP, consoleRoutes, VENDOR } from '../src/http/console.js';
import { tempDir } from './helpers.js';
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
      // No other site may frame the console (clickjacking of a signed-in officer).
      expect(csp.split('; ')).toContain("frame-ancestors 'none'");
      // Every script is a file of this origin; no style attribute or element the CSP would block.
      expect(res.body).not.toMatch(/<script(?![^>]*\bsrc="\/console\/)/);
      expect(res.body).not.toMatch(/\sstyle=|<style/);
    }
  });

  it('serves the charting library from the installed package under vendor/, and no first-load file names it', async () => {
    const require = createRequire(import.meta.url);
    for (const [name, resolve] of Object.entries(VENDOR)) {
      const res = await app.inject({ method: 'GET', url: `/console/${name}`, headers: { 'accept-encoding': 'gzip' } });
      expect(res.statusCode, name).toBe(200);
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['content-type']).toBe(name.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8');
      expect(gunzipSync(res.rawPayload).equals(fs.readFileSync(resolve()))).toBe(true);
    }
    expect(require(require.resolve('uplot/package.json')).version).toBe('1.6.32');
    // Loaded by the decisions page only, with a dynamic import when it draws: no other console file names it.
    for (const file of ['index.html', 'app.js', 'api.js', 'dom.js', 'editor.js', 'revisions.js']) {
      expect(fs.readFileSync(path.resolve('console', file), 'utf8'), file).not.toContain('vendor/');
    }
    expect(fs.readFileSync(path.resolve('console/decisions.js'), 'utf8')).toMatch(/import\('\/console\/vendor\/uPlot\.esm\.js'\)/);
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
    // Each traversal names a file the console would serve (a .js) were it read from outside console/.
    for (const url of ['/console/nope.js', '/console/%2e%2e/eslint.config.js', '/console/..%2feslint.config.js', '/console/..%5capp.js',
      '/console/%2e%2e%5ceslint.config.js']) {
      const missing = await app.inject({ method: 'GET', url });
      expect(missing.statusCode, url).toBe(404);
      expect(missing.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });

  it('serves the QR code library from the package\'s dependencies as /console/vendor/qr.js, an ES module that imports nothing', async () => {
    const qr = await app.inject({ method: 'GET', url: '/console/vendor/qr.js', headers: { 'accept-encoding': 'gzip' } });
    expect(qr.statusCode).toBe(200);
    expect(qr.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(qr.headers['content-security-policy']).toBe(CONSOLE_CSP);
    const text = gunzipSync(qr.rawPayload).toString();
    expect(text).toBe(fs.readFileSync(fileURLToPath(import.meta.resolve('@paulmillr/qr')), 'utf8'));
    expect(text).toMatch(/^export default encodeQR;$/m);
    // One file: a relative or bare import would be a request the console does not serve.
    expect(text).not.toMatch(/^\s*import\s|\bimport\(/m);
    // Loaded only where a request is shown: no module of the first load imports it statically.
    for (const file of ['app.js', 'editor.js', 'offchain.js']) {
      const body = (await app.inject({ method: 'GET', url: `/console/${file}`, headers: { 'accept-encoding': 'identity' } })).body;
      expect(body, file).not.toMatch(/^import .*vendor\/qr/m);
    }
  });

  it('gzips only when Accept-Encoding takes gzip with a q above 0', async () => {
    for (const [header, gz] of [['gzip;q=0', false], ['gzip; q=0.0, identity', false], ['br, gzip;q=0.5', true], ['*', true], ['*;q=0', false],
      ['identity', false], ['GZIP', true]] as const) {
      expect(acceptsGzip(header), header).toBe(gz);
      const res = await app.inject({ method: 'GET', url: '/console/app.js', headers: { 'accept-encoding': header } });
      expect(res.headers['content-encoding'], header).toBe(gz ? 'gzip' : undefined);
    }
  });

  it('tags each file with a content hash ETag and answers 304 to If-None-Match with it', async () => {
    const plain = await app.inject({ method: 'GET', url: '/console/app.js', headers: { 'accept-encoding': 'identity' } });
    const gz = await app.inject({ method: 'GET', url: '/console/app.js', headers: { 'accept-encoding': 'gzip' } });
    const tag = String(plain.headers.etag);
    expect(tag).toMatch(/^"[\w-]{22}"$/);
    expect(gz.headers.etag).not.toBe(tag);
    const other = await app.inject({ method: 'GET', url: '/console/editor.js', headers: { 'accept-encoding': 'identity' } });
    expect(other.headers.etag).not.toBe(tag);
    const again = await app.inject({ method: 'GET', url: '/console/app.js', headers: { 'accept-encoding': 'identity', 'if-none-match': `"x", ${tag}` } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(tag);
    const changed = await app.inject({ method: 'GET', url: '/console/app.js', headers: { 'accept-encoding': 'identity', 'if-none-match': '"stale"' } });
    expect(changed.statusCode).toBe(200);
  });

  it('says a missing console/ directory by name and how to turn the console off, not a raw ENOENT', async () => {
    const app2 = Fastify();
    const dir = path.join(tempDir('scs-console-missing-'), 'console');
    await expect(app2.register(consoleRoutes, { dir }).ready()).rejects.toThrow(/console's files are missing: .*console does not exist.*CONSOLE=false/);
    await app2.close().catch(() => undefined);
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
