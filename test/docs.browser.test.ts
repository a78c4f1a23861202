/**
 * The docs UI at /docs in a real headless browser: Debian's chromium (/usr/bin/chromium, installed with
 * `apt-get install -y chromium`) driven by playwright-core. No browser is ever downloaded.
 *
 * The server is the real process (`npm run build`, then `node dist/server.js`, as the README starts it). The test
 * checks that the page renders the two contract operations (execute and update), then authorizes with the bearer token in
 * the UI and runs "Try it out" on execute with the example body the page offers: the answer must be 200, through the
 * page. The scenario the example body names is created beforehand with fetch.
 *
 * The page also renders over plain http on this machine's own (non-loopback) address, as a teammate opens it: its CSP
 * has no upgrade-insecure-requests there (a browser would fetch its scripts over https and show a blank page).
 *
 * CORS, in the same browser: pages served from two other origins (127.0.0.1 on other ports) call execute with fetch;
 * the one listed in CORS_ORIGINS gets the answer and can read its exposed headers, the other is refused by the browser.
 *
 * Without /usr/bin/chromium the test is skipped with a message, unless REQUIRE_BROWSER=1 (CI), where that fails.
 * Screenshots: /tmp/scs-docs-*.png (DOCS_SCREENSHOT_DIR to change).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ADDRESS, credential, scenario, tempDir } from './helpers.js';
import { launchBrowser, runBrowserTests, sayIfNoBrowser, startServer, stopServer, type ServerProcess } from './browser-harness.js';
import { build } from './server-process.js';

const TOKEN = 'docs-browser-token-0123456789abcdef';
const SHOTS = process.env.DOCS_SCREENSHOT_DIR ?? '/tmp';
sayIfNoBrowser('docs.browser.test.ts', '/docs');

/** An IPv4 address of this machine's own network interfaces other than loopback, as a teammate would open it. */
const OWN_ADDRESS = Object.values(os.networkInterfaces()).flat().find((a) => a?.family === 'IPv4' && !a.internal)?.address;

/** A page server on 127.0.0.1 and a free port: another origin than the service's. */
async function pageOrigin(): Promise<{ origin: string; close: () => void }> {
  const pages = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(pages.address() as AddressInfo).port}`, close: () => pages.close() };
}

let server: ServerProcess | undefined;
let browser: Browser | undefined;
let listed: Awaited<ReturnType<typeof pageOrigin>> | undefined;
let unlisted: Awaited<ReturnType<typeof pageOrigin>> | undefined;
const knownCspReports = new Set<string>();

describe.skipIf(!runBrowserTests)('the docs UI at /docs in headless chromium', () => {
  beforeAll(async () => {
    build();
    listed = await pageOrigin();
    unlisted = await pageOrigin();
    server = await startServer({ DATA_DIR: tempDir('scs-docs-'), API_TOKENS: TOKEN, LOG_LEVEL: 'info', CORS_ORIGINS: listed.origin });
    browser = await launchBrowser();
  }, 180_000);

  afterAll(async () => {
    for (const report of knownCspReports) console.warn(`docs.browser.test.ts: known docs CSP issue (not failed): ${report}`);
    await browser?.close();
    listed?.close();
    unlisted?.close();
    await stopServer(server);
  });

  /**
   * A page on /docs that records the browser's console errors, page errors and failed requests. One console error is
   * known and only reported: the docs' CSP (src/app.ts, swagger-ui `staticCSP: true`) has no hash for an inline
   * style swagger-ui applies, so chromium logs a style-src violation on every load; the page works regardless.
   */
  async function openDocs(base = server!.url): Promise<{ page: Page; problems: string[] }> {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 1600 } });
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      if (/^Applying inline style violates the following Content Security Policy directive 'style-src /.test(m.text())) {
        knownCspReports.add(m.text());
        return;
      }
      problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    const res = await page.goto(`${base}/docs`, { waitUntil: 'load' });
    expect(res?.status()).toBe(200);
    return { page, problems };
  }

  it('renders the two contract operations, execute and update', async () => {
    const { page, problems } = await openDocs();
    try {
      const execute = page.locator('.opblock').filter({ has: page.locator('.opblock-summary-path', { hasText: /^\/compliance\/scenarios\/execute$/ }) })
        .filter({ has: page.locator('.opblock-summary-method', { hasText: 'POST' }) });
      const update = page.locator('.opblock').filter({ has: page.locator('.opblock-summary-path', { hasText: /^\/compliance\/scenarios\/\{scenarioId\}$/ }) })
        .filter({ has: page.locator('.opblock-summary-method', { hasText: 'PATCH' }) });
      await execute.first().waitFor({ state: 'visible', timeout: 20_000 });
      await update.first().waitFor({ state: 'visible', timeout: 20_000 });
      await expect(execute.count()).resolves.toBe(1);
      await expect(update.count()).resolves.toBe(1);
      await expect(page.locator('.info .title').innerText()).resolves.toMatch(/Scenario Compliance Service/);
      await page.screenshot({ path: path.join(SHOTS, 'scs-docs-operations.png'), fullPage: false });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 60_000);

  // Over plain http on the machine's own address (not localhost, which browsers treat as secure): the page's CSP must
  // not send its scripts to https, where nothing listens (the page stayed blank).
  it.skipIf(OWN_ADDRESS === undefined)(`renders over http on this machine's own address (${OWN_ADDRESS ?? 'none but loopback'})`, async () => {
    // No load shedding: on a busy machine a 503 would stand for the answer this test reads.
    const own = await startServer({ DATA_DIR: tempDir('scs-docs-'), API_TOKENS: TOKEN, MAX_EVENT_LOOP_DELAY_MS: '0' }, OWN_ADDRESS);
    try {
      const { page, problems } = await openDocs(own.url);
      try {
        const execute = page.locator('.opblock-summary-path', { hasText: /^\/compliance\/scenarios\/execute$/ });
        await execute.first().waitFor({ state: 'visible', timeout: 20_000 });
        await expect(page.locator('.info .title').innerText()).resolves.toMatch(/Scenario Compliance Service/);
        // Chromium notes that it ignores helmet's Cross-Origin-Opener-Policy on an http origin; harmless, as designed.
        expect(problems.filter((p) => !/^console: The Cross-Origin-Opener-Policy header has been ignored/.test(p))).toEqual([]);
      } finally {
        await page.close();
      }
    } finally {
      await stopServer(own);
    }
  }, 90_000);

  it('"Try it out" on execute with the example body answers 200 through the page, once authorized', async () => {
    const { page, problems } = await openDocs();
    try {
      const execute = page.locator('.opblock').filter({ has: page.locator('.opblock-summary-path', { hasText: /^\/compliance\/scenarios\/execute$/ }) })
        .filter({ has: page.locator('.opblock-summary-method', { hasText: 'POST' }) }).first();
      await execute.waitFor({ state: 'visible', timeout: 20_000 });

      // Authorize in the UI with the bearer token.
      await page.locator('.auth-wrapper .authorize').first().click();
      const dialog = page.locator('.dialog-ux .modal-ux');
      await dialog.waitFor({ state: 'visible' });
      await dialog.locator('input#auth-bearer-value, input[type="text"], input[type="password"]').first().fill(TOKEN);
      await dialog.locator('button.authorize').first().click();
      await dialog.getByRole('heading', { name: 'Authorized' }).waitFor({ state: 'visible' });
      await dialog.getByRole('button', { name: 'Close' }).first().click();
      await dialog.waitFor({ state: 'detached' });

      // Open execute, press "Try it out", and read the example body the page offers.
      await execute.locator('.opblock-summary').first().click();
      await execute.locator('button.try-out__btn').click();
      const editor = execute.locator('textarea.body-param__text');
      await editor.waitFor({ state: 'visible' });
      const example = JSON.parse(await editor.inputValue()) as { scenarioId: string; address: unknown; credentials: unknown[] };
      expect(typeof example.scenarioId).toBe('string');

      // The scenario the example names must exist: create it (idempotently) with fetch.
      const created = await fetch(`${server!.url}/compliance/scenarios`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: example.scenarioId, input: scenario() }),
      });
      expect([201, 409], await created.text()).toContain(created.status);

      // Execute through the page and wait for the browser's own request.
      const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/compliance/scenarios/execute' && r.request().method() === 'POST');
      await execute.locator('button.execute').click();
      const response = await answered;
      const text = await response.text();
      const sentAuth = await response.request().headerValue('authorization');
      expect(sentAuth).toBe(`Bearer ${TOKEN}`);
      expect(response.status(), `the example body ${JSON.stringify(example).slice(0, 600)} answered ${text.slice(0, 600)}`).toBe(200);

      // The page shows the 200 and the results.
      const live = execute.locator('.live-responses-table tbody .response-col_status').first();
      await live.waitFor({ state: 'visible' });
      await expect(live.innerText()).resolves.toMatch(/^200/);
      const results = JSON.parse(text) as { scenarioId: string; objectId: string }[];
      expect(results.map((r) => r.objectId)).toEqual(scenario().queryConfigurations.map((q) => q.id));
      expect(results.every((r) => r.scenarioId === example.scenarioId)).toBe(true);
      await execute.locator('.live-responses-table').scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(SHOTS, 'scs-docs-execute.png'), fullPage: false });
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 90_000);

  it('a page on an origin listed in CORS_ORIGINS calls execute and reads its headers; one on another origin cannot', async () => {
    const created = await fetch(`${server!.url}/compliance/scenarios`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'cors-browser', input: scenario() }),
    });
    expect(created.status, await created.text()).toBe(201);
    const call = { url: `${server!.url}/compliance/scenarios/execute`, token: TOKEN, body: JSON.stringify({ scenarioId: 'cors-browser', address: ADDRESS, credentials: [credential()] }) };
    const fromPage = async (origin: string) => {
      const page = await browser!.newPage();
      try {
        await page.goto(`${origin}/`);
        // Authorization and a JSON Content-Type make this a preflighted request, as every real client's is.
        return await page.evaluate(async ({ url, token, body }) => {
          try {
            const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
            return { status: res.status, requestId: res.headers.get('x-request-id'), body: await res.json() as unknown };
          } catch (err) {
            return { error: String(err) };
          }
        }, call);
      } finally {
        await page.close();
      }
    };

    const allowed = await fromPage(listed!.origin);
    expect(allowed).toMatchObject({ status: 200, requestId: expect.stringMatching(/\S/) });
    expect((allowed as { body: { objectId: string }[] }).body.map((r) => r.objectId)).toEqual(['q-kyc', 'q-age']);

    const refused = await fromPage(unlisted!.origin);
    expect(refused).toEqual({ error: expect.stringMatching(/Failed to fetch/) });
  }, 60_000);
});
