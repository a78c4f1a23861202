/**
 * The console's Decisions page in headless chromium against `node dist/server.js` (DEMO_ISSUER=1): executions made
 * through the API with the demo issuer's credentials (two addresses; valid on revision 1, not-valid on revision 2),
 * the page lists them, the verdict and address filters narrow the list and stay in the hash (a bookmark opens the same
 * view), one execution shows its results, reasons and revision (and no credential content), the chart of verdicts
 * and of the rules that fail most is drawn (a canvas) with its numbers in tables, and the export downloads the
 * filtered rows. axe-core finds nothing at 1280x800 and 390 px wide; no request leaves the service's origin; uPlot is
 * loaded by this page only, never by the console's first load. Screenshots: .artefacts/console/decisions-*.png.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { runBrowserTests, sayIfNoBrowser } from './browser-harness.js';
import { TOKEN, check, demoBody, openPage, signIn, useConsole } from './console-harness.js';

const FIRST_LOAD_LIMIT = 300 * 1024;
const ID = 'decisions-adult';
const SECOND = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
/** A token of two projects: the export asks it to name one. */
const TWO_PROJECTS = 'console-decisions-two-projects-0123456789';
sayIfNoBrowser('console-decisions.browser.test.ts', '/console decisions');

const rules = (minAge: number) => [
  { id: 'age', query: { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gte', value: minAge } },
  { id: 'green', query: { type: 'IDInformation', requestId: 2, attribute: 'reviewAnswer', operator: '$eq', value: 'GREEN' } },
];

describe.skipIf(!runBrowserTests)('the Decisions page of the console in headless chromium', () => {
  const ctx = useConsole('scs-console-decisions-', { API_TOKENS: `${TOKEN},${TWO_PROJECTS}:projA+projB` });
  const executions: Array<{ executionId: string; address: string; verdict: string }> = [];
  let first: ReturnType<typeof demoBody>;

  /** Two addresses pass revision 1; the first fails revision 2 (age at least 40: the demo holder is 30). */
  async function seed() {
    if (executions.length > 0) return;
    const created = await ctx.call('POST', '/compliance/scenarios', {
      id: ID, input: { name: 'Adult, KYC green', type: 'ChallengeQuery', queryConfigurations: rules(18), smartContractDeployments: [] },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    first = demoBody(ctx, ID);
    const second = demoBody(ctx, ID, ['--address', SECOND]);
    const execute = async (body: unknown) => {
      const r = await ctx.call('POST', '/compliance/scenarios/execute', body);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      const record = await ctx.call('GET', `/compliance/executions/${r.json[0].executionId}`);
      executions.push({ executionId: record.json.executionId, address: record.json.address, verdict: record.json.verdict });
    };
    await execute(first);
    await execute(second);
    const patched = await ctx.call('PATCH', `/compliance/scenarios/${ID}`, { input: { queryConfigurations: rules(40) } });
    expect(patched.status, JSON.stringify(patched.json)).toBe(200);
    await execute(first);
    expect(executions.map((x) => x.verdict)).toEqual(['passed', 'passed', 'failed']);
    expect(executions[1]!.address).toBe(SECOND);
  }

  const rowsOf = (page: Page, region: string) => page.getByRole('region', { name: region }).locator('tbody tr');
  const cells = async (page: Page, region: string) =>
    rowsOf(page, region).evaluateAll((rows) => rows.map((r) => [...r.children].map((c) => (c.textContent ?? '').trim())));
  const decisionsOf = async (page: Page, id = ID) => page.getByRole('heading', { level: 1, name: `Decisions of ${id}` }).waitFor();
  const listed = async (page: Page) => {
    await page.getByRole('status').filter({ hasText: /shown|matches/ }).first().waitFor();
    return (await cells(page, 'Executions table')).map((c) => c[4]);
  };
  const short = (k: number) => executions[k]!.executionId.slice(0, 8);

  it('lists the executions, filters them by verdict and address in a bookmarkable hash, charts them and exports the filtered rows (1280x800)', async () => {
    await seed();
    const { page, problems, requests } = await openPage(ctx);
    try {
      const sizes: Promise<number>[] = [];
      const counting = (r: { sizes(): Promise<{ responseBodySize: number }> }) => { sizes.push(r.sizes().then((x) => x.responseBodySize)); };
      page.on('requestfinished', counting);
      await signIn(ctx, page);
      page.off('requestfinished', counting);
      const firstLoad = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
      expect(firstLoad, `first load: ${firstLoad} bytes`).toBeLessThan(FIRST_LOAD_LIMIT);
      console.info(`console-decisions.browser.test.ts: first load and sign-in ${firstLoad} bytes compressed`);
      expect(requests.filter((r) => r.url.includes('/vendor/'))).toEqual([]);

      await page.getByRole('link', { name: ID }).click();
      // The editor first: a tab left before its page is shown would be replaced by it (app.js does not cancel a view).
      await page.getByRole('heading', { level: 1, name: `Scenario ${ID}` }).waitFor();
      await page.getByRole('link', { name: 'Decisions' }).click();
      await decisionsOf(page);
      expect(await listed(page)).toEqual([short(2), short(1), short(0)]);
      // The default period (7 days, counted by day) runs from one UTC midnight to another.
      const summary = new URL(requests.find((r) => r.url.includes('/executions/summary'))!.url).searchParams;
      expect([summary.get('bucket'), summary.get('from')?.slice(10), summary.get('to')?.slice(10)]).toEqual(['day', 'T00:00:00.000Z', 'T00:00:00.000Z']);
      expect(requests.filter((r) => r.url.includes('/vendor/')).map((r) => new URL(r.url).pathname).sort())
        .toEqual(['/console/vendor/uPlot.esm.js', '/console/vendor/uPlot.min.css']);

      // The chart is drawn (uPlot's canvas), and its numbers are in the tables beside it.
      await expect(page.locator('figure .chart canvas').count()).resolves.toBe(2);
      const totals = await page.getByRole('region', { name: 'Verdicts per bucket table' }).locator('tfoot tr').evaluate((r) => [...r.children].map((c) => c.textContent));
      expect(totals).toEqual(['Total', '2', '1', '0', '0']);
      expect(await cells(page, 'Failing rules table')).toEqual([['age', '1', '0']]);
      await expect(page.getByText('Rules that fail most: age (1 not-valid)').count()).resolves.toBe(1);
      await check(page, 'decisions-1280');

      // Verdict: the hash takes the filter, the list narrows.
      await page.getByLabel('Verdict', { exact: true }).selectOption('failed');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => page.evaluate(() => location.hash)).toContain('verdict=failed');
      expect(await listed(page)).toEqual([short(2)]);
      await expect(page.getByLabel('Verdict', { exact: true }).inputValue()).resolves.toBe('failed');

      // The export downloads the filtered period: the one failed execution, through fetch with the token.
      await page.getByLabel('Format', { exact: true }).selectOption('csv');
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the filtered period' }).click()]);
      const csv = fs.readFileSync((await download.path())!, 'utf8').split('\r\n').filter(Boolean);
      expect(csv[0]).toBe('executionId,createdAt,projectId,scenarioId,scenarioRevision,scenarioDigest,address,state,verdict,rules,credentials');
      expect(csv).toHaveLength(2);
      expect(csv[1]).toContain(`${executions[2]!.executionId},`);
      expect(csv[1]).toContain(',failed,age=not-valid green=valid,');
      const exported = requests.filter((r) => r.url.includes('/compliance/executions/export'));
      expect(exported).toHaveLength(1);
      expect(new URL(exported[0]!.url).searchParams.get('verdict')).toBe('failed');
      await page.getByText('Downloaded.').waitFor();

      // Address: the second address's only execution.
      await page.getByLabel('Verdict', { exact: true }).selectOption('');
      await page.getByLabel('Address', { exact: true }).fill(SECOND);
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => page.evaluate(() => decodeURIComponent(location.hash))).toContain(`address=${SECOND}`);
      expect(await listed(page)).toEqual([short(1)]);
      await expect(page.getByRole('region', { name: 'Verdicts per bucket table' }).locator('tfoot td').first().innerText()).resolves.toBe('1');

      // The hash is the view: opened again from it, the same filters and rows.
      const bookmark = page.url();
      const again = await openPage(ctx);
      try {
        await signIn(ctx, again.page);
        await again.page.goto(bookmark);
        await decisionsOf(again.page);
        expect(await listed(again.page)).toEqual([short(1)]);
        await expect(again.page.getByLabel('Address', { exact: true }).inputValue()).resolves.toBe(SECOND);
        expect(again.problems).toEqual([]);
      } finally {
        await again.page.close();
      }

      expect(requests.map((r) => new URL(r.url).origin).filter((o) => o !== ctx.url)).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    it(`shows one execution: its results per rule, reasons, revision, time and address, no credential content (${viewport.width} wide)`, async () => {
      await seed();
      const { page, problems, requests } = await openPage(ctx, viewport);
      try {
        await signIn(ctx, page);
        await page.goto(`${ctx.url}/console#/scenarios/${ID}/decisions?verdict=failed`);
        await decisionsOf(page);
        expect(await listed(page)).toEqual([short(2)]);
        await check(page, `decisions-filtered-${viewport.width}`);
        await page.getByRole('link', { name: `Execution ${executions[2]!.executionId}` }).click();
        await page.getByRole('heading', { level: 1, name: `Execution ${executions[2]!.executionId}` }).waitFor();
        const failed = page.locator('article.result.not-valid');
        await expect(failed.count()).resolves.toBe(1);
        await expect(failed.innerText()).resolves.toMatch(/Rule age: not-valid/);
        await expect(failed.innerText()).resolves.toMatch(/personalData\.age is not \$gte 40/);
        await expect(page.locator('article.result.valid').innerText()).resolves.toMatch(/Rule green: valid/);
        await expect(page.getByRole('link', { name: 'Revision 2' }).getAttribute('href')).resolves.toBe(`#/scenarios/${ID}/revisions/2`);
        const text = await page.locator('main').innerText();
        expect(text).toContain(first.address);
        expect(text).toContain('failed');
        // Reasons may name a credential by its id, as the audit log does; nothing of its subject or proof is shown.
        const subject = first.credentials[0]!.credentialSubject as { journeyId: string; personalData: Record<string, unknown> };
        const contents = [subject.journeyId, subject.personalData.firstName, subject.personalData.lastName, String(subject.personalData.birthDate),
          'PASSPORT', JSON.stringify(first.credentials[0]!.proof).slice(10, 60)];
        for (const content of contents) expect(text).not.toContain(String(content));
        await check(page, `decisions-execution-${viewport.width}`);
        await page.getByRole('link', { name: 'Back to the decisions' }).click();
        await decisionsOf(page);
        await expect(page.getByLabel('Verdict', { exact: true }).inputValue()).resolves.toBe('failed');
        expect(requests.map((r) => new URL(r.url).origin).filter((o) => o !== ctx.url)).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    }, 180_000);
  }
  it('exports for a token of several projects: the scenario\'s project is named when the export asks for one', async () => {
    const id = 'decisions-project-a';
    const created = await ctx.call('POST', '/compliance/scenarios', {
      id, input: { name: 'In project A', type: 'ChallengeQuery', queryConfigurations: rules(18), smartContractDeployments: [], projectId: 'projA' },
    }, TWO_PROJECTS);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const ran = await ctx.call('POST', '/compliance/scenarios/execute', demoBody(ctx, id), TWO_PROJECTS);
    expect(ran.status, JSON.stringify(ran.json)).toBe(200);
    const { page, problems, requests } = await openPage(ctx);
    try {
      await signIn(ctx, page, TWO_PROJECTS);
      await page.goto(`${ctx.url}/console#/scenarios/${id}/decisions`);
      await decisionsOf(page, id);
      await page.getByLabel('Format', { exact: true }).selectOption('ndjson');
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the filtered period' }).click()]);
      const lines = fs.readFileSync((await download.path())!, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      expect(lines.map((l) => l.executionId ?? l.end)).toEqual([ran.json[0].executionId, true]);
      expect(lines[0].projectId).toBe('projA');
      const exports = requests.filter((r) => r.url.includes('/compliance/executions/export')).map((r) => new URL(r.url).searchParams.get('projectId'));
      expect(exports).toEqual([null, 'projA']);
      // The first export's 400 (a project to name) is logged by chromium; nothing else.
      expect(problems).toEqual(['console: Failed to load resource: the server responded with a status of 400 (Bad Request)']);

      // Where the page's address names the project (as the scenarios list links it), the filters keep it and the export sends it.
      await page.goto(`${ctx.url}/console#/scenarios/${id}/decisions?projectId=projA`);
      await decisionsOf(page, id);
      await page.getByLabel('Verdict', { exact: true }).selectOption('passed');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await expect.poll(() => page.evaluate(() => new URLSearchParams(location.hash.split('?')[1]).get('projectId'))).toBe('projA');
      await decisionsOf(page, id);
      await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download the filtered period' }).click()]);
      const last = requests.filter((r) => r.url.includes('/compliance/executions/export')).at(-1)!;
      expect(new URL(last.url).searchParams.get('projectId')).toBe('projA');
      expect(new URL(last.url).searchParams.get('verdict')).toBe('passed');
      // The list and the charts read the same project.
      const read = (path: string) => requests.filter((r) => new URL(r.url).pathname === `/compliance/scenarios/${id}/executions${path}`).at(-1)!;
      expect(new URL(read('').url).searchParams.get('projectId')).toBe('projA');
      expect(new URL(read('/summary').url).searchParams.get('projectId')).toBe('projA');
      expect(problems).toHaveLength(1);
    } finally {
      await page.close();
    }
  }, 180_000);
});
