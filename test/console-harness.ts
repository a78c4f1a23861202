/**
 * The console's browser tests share this: one real server (`node dist/server.js`, DEMO_ISSUER=1) and one chromium per
 * test file, a page that records console errors and every request, axe-core's WCAG 2.1 A/AA rules evaluated into the
 * page by the test (never served by the service), keyboard sign-in, screenshots and the demo issuer's credentials.
 * Call `useConsole()` inside a `describe.skipIf(!runBrowserTests)`: it registers the beforeAll/afterAll hooks.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, startServer, stopServer, type ServerProcess } from './browser-harness.js';
import { tempDir } from './helpers.js';
import { build } from './server-process.js';

export const TOKEN = 'console-browser-token-0123456789abcdef';
const SHOTS = process.env.CONSOLE_SCREENSHOT_DIR ?? path.resolve('.artefacts/console');
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface RecordedRequest { url: string; method: string; body: string | null; ifMatch: string | undefined }

export interface ConsoleContext {
  readonly url: string;
  readonly browser: Browser;
  /** `fetch` on the service with the token (or `token`), JSON in and out. */
  call(method: string, route: string, body?: unknown, token?: string): Promise<{ status: number; headers: Headers; json: any }>;
}

/**
 * The hooks of a console test file. `env` adds to the server's environment (API_TOKENS is TOKEN unless given).
 */
export function useConsole(prefix: string, env: Record<string, string> = {}): ConsoleContext {
  let server: ServerProcess | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    build();
    fs.mkdirSync(SHOTS, { recursive: true });
    server = await startServer({
      DATA_DIR: tempDir(prefix), API_TOKENS: TOKEN, DEMO_ISSUER: '1', LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0', ...env,
    });
    browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await stopServer(server);
  });
  return {
    get url() { return server!.url; },
    get browser() { return browser!; },
    async call(method, route, body, token = TOKEN) {
      const r = await fetch(`${server!.url}${route}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      const text = await r.text();
      return { status: r.status, headers: r.headers, json: text ? JSON.parse(text) : undefined };
    },
  };
}

/** A page that records console errors, page errors, failed requests and every request (origin, body, If-Match). */
export async function openPage(ctx: ConsoleContext, viewport = { width: 1280, height: 800 }) {
  const page = await ctx.browser.newPage({ viewport });
  const problems: string[] = [];
  const requests: RecordedRequest[] = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // A load the page's own next navigation cuts short (the icon of a page reloaded before it arrived) is the
  // browser's doing, not a fault: net::ERR_ABORTED after a later top-level navigation began is not recorded.
  let navigations = 0;
  const startedIn = new WeakMap<object, number>();
  page.on('request', (r) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navigations += 1;
    startedIn.set(r, navigations);
    requests.push({ url: r.url(), method: r.method(), body: r.postData(), ifMatch: r.headers()['if-match'] });
  });
  page.on('requestfailed', (r) => {
    const error = r.failure()?.errorText;
    if (error === 'net::ERR_ABORTED' && !r.isNavigationRequest() && (startedIn.get(r) ?? navigations) < navigations) return;
    problems.push(`request failed: ${r.url()} ${error}`);
  });
  return { page, problems, requests };
}

/** axe-core's WCAG 2.1 A and AA rules on the page as it is now; evaluated over CDP, so the page's CSP stays as served. */
async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const { violations, passed } = await page.evaluate(async () => {
    type Rule = { id: string; help: string; nodes: { target: unknown }[] };
    const axe = (window as unknown as { axe: { run: (c: unknown, o: unknown) => Promise<{ violations: Rule[]; passes: Rule[] }> } }).axe;
    const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return { violations: r.violations.map((v) => `${v.id}: ${v.help} at ${JSON.stringify(v.nodes.map((n) => n.target))}`), passed: r.passes.map((p) => p.id) };
  });
  // axe really ran its rules on this page (labels and contrast among them), not an empty document.
  expect(passed).toEqual(expect.arrayContaining(['color-contrast', 'html-has-lang']));
  return violations;
}

/** axe finds nothing, nothing scrolls sideways, and a full-page screenshot is kept as `name`.png. */
export async function check(page: Page, name: string): Promise<void> {
  expect(await axeViolations(page), `axe on ${name}`).toEqual([]);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow, `${name} scrolls sideways`).toBeLessThanOrEqual(0);
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Signs in by keyboard only: the heading has focus, Tab reaches the token field, the token typed, Enter. */
export async function signIn(ctx: ConsoleContext, page: Page, token = TOKEN): Promise<void> {
  await page.goto(`${ctx.url}/console`);
  await page.getByLabel('API token').waitFor();
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('token');
  await page.keyboard.type(token);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Scenarios' }).waitFor();
}

/** An execute body for `scenarioId` with the demo issuer's credentials (scripts/demo-credentials). */
export function demoBody(ctx: ConsoleContext, scenarioId: string, extra: string[] = []) {
  return JSON.parse(execFileSync(process.execPath, [
    'dist/scripts/demo-credentials.js', '--scenario-id', scenarioId, '--status-url', `${ctx.url}/demo-issuer/status`, '--body', ...extra,
  ], { encoding: 'utf8' })) as { address: string; credentials: Array<Record<string, unknown>> };
}
