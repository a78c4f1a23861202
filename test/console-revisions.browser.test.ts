/**
 * The console's Revisions page in headless chromium against `node dist/server.js`, with approval required for every
 * scenario (SCENARIO_APPROVAL_PROJECTS=*) and two static tokens: static tokens carry every scope, and their subjects
 * (fingerprints) differ, so the first proposes and the second approves (docs/governance.md, "Approve, reject").
 *
 * The proposer changes a rule in the editor: the save answers 202 and links the proposal on this page, which shows it
 * pending, its diff from the live revision field by field, and no approve button for its author. A shadow run started
 * from the page compares real executes sent through the API: the page shows the counts, the per-rule changes and the
 * flipped executions linked to the decisions page. The second token approves; the history shows it applied; a stale
 * proposal's approval shows the API's 409 and what to do. A JWT without sub is offered no approval; /compliance/me
 * answering 503 leaves Approve out, 404 offers it (the API's 403 shown); a late answer does not replace a newer page.
 * axe finds nothing at 1280x800 and 390 px on each state.
 * Without /usr/bin/chromium it is skipped with a message, unless REQUIRE_BROWSER=1. Screenshots: .artefacts/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { runBrowserTests, sayIfNoBrowser } from './browser-harness.js';
import { check, demoBody, openPage, signIn, TOKEN, useConsole, type ConsoleContext } from './console-harness.js';
import { localJwks, type LocalJwks } from './jwks.js';
import { haveIden3Documents, iden3DocumentsEnv } from './shared-fixtures.js';

const APPROVER = 'console-approver-token-0123456789ab';
const ID = 'rev-adult';
sayIfNoBrowser('console-revisions.browser.test.ts', 'Revisions page');

/** The refusals the page meets on purpose, by status and path: a shadow GET's 404 before a start, a stale approval's
 * and OffChainZKP's shadow 409, a self-approval's 403. */
const EXPECTED_REFUSALS = [
  /^404 \/compliance\/scenarios\/[^/]+\/revisions\/\d+\/shadow$/,
  /^409 \/compliance\/scenarios\/[^/]+\/revisions\/\d+\/(approve|shadow)$/,
  /^403 \/compliance\/scenarios\/[^/]+\/revisions\/\d+\/approve$/,
];
const REFUSED = /^Failed to load resource: the server responded with a status of (\d+)/;

/** openPage, also noting each answer Chromium logs as refused with its status and path. */
async function open(ctx: ConsoleContext) {
  const opened = await openPage(ctx);
  const refused: string[] = [];
  opened.page.on('console', (m) => {
    const status = REFUSED.exec(m.text())?.[1];
    if (m.type() === 'error' && status) refused.push(`${status} ${new URL(m.location().url).pathname}`);
  });
  return { ...opened, refused };
}

/** Console errors but the refusals expected, and those refusals expected (by status and path), `also` among them. */
const unexpected = ({ problems, refused }: { problems: string[]; refused: string[] }, also: RegExp[] = []) => [
  ...problems.filter((p) => !REFUSED.test(p.replace(/^console: /, ''))),
  ...refused.filter((r) => ![...EXPECTED_REFUSALS, ...also].some((x) => x.test(r))),
];

/** check() at 1280x800 and at 390 px wide, then back. */
async function checkBoth(page: Page, name: string) {
  await check(page, `${name}-1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  await check(page, `${name}-390`);
  await page.setViewportSize({ width: 1280, height: 800 });
}

describe.skipIf(!runBrowserTests)('the console\'s Revisions page in headless chromium', () => {
  // A JWT issuer for a reviewer without scenarios:approve: its URL joins the server's environment before it starts.
  const env: Record<string, string> = { API_TOKENS: `${TOKEN},${APPROVER}`, SCENARIO_APPROVAL_PROJECTS: '*', ...iden3DocumentsEnv() };
  let jwks: LocalJwks | undefined;
  beforeAll(async () => {
    jwks = await localJwks();
    Object.assign(env, jwks.env);
  });
  afterAll(() => jwks?.close());
  const ctx = useConsole('scs-console-rev-', env);
  /** A ChallengeQuery scenario of one age rule, created by TOKEN. */
  const createAdult = async (id: string, name: string) => {
    const rules = [{ id: 'age', query: { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gte', value: 18 } }];
    const created = await ctx.call('POST', '/compliance/scenarios', { id, input: { name, type: 'ChallengeQuery', queryConfigurations: rules, smartContractDeployments: [] } });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
  };
  const goto = async (page: Page, hash: string, heading: string) => {
    await page.goto(`${ctx.url}/console#${hash}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    // The history is shown while it is read; its status says when the whole list is in.
    if (/\/revisions(\?|$)/.test(hash)) await page.getByRole('status').filter({ hasText: /^\d+ revisions$/ }).waitFor();
  };

  it('proposes from the editor, diffs, shadows on real executes, is approved by another token, and says a stale proposal\'s 409', async () => {
    const rules = [
      { id: 'age', query: { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gte', value: 18 } },
      { id: 'kyc', query: { type: 'IDInformation', requestId: 2, attribute: 'reviewAnswer', operator: '$eq', value: 'GREEN' } },
    ];
    const created = await ctx.call('POST', '/compliance/scenarios', {
      id: ID, input: { name: 'Adult, KYC green', type: 'ChallengeQuery', queryConfigurations: rules, smartContractDeployments: [] },
    });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const proposer = await open(ctx);
    const approver = await open(ctx);
    try {
      // The proposer raises the age in the editor: 202, and a link to the proposal on the Revisions page.
      const page = proposer.page;
      await signIn(ctx, page);
      await goto(page, `/scenarios/${ID}`, `Scenario ${ID}`);
      await page.getByRole('group', { name: 'Rule 1' }).getByLabel('Value').fill('40');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Proposed for approval as').waitFor();
      expect((await ctx.call('GET', `/compliance/scenarios/${ID}`)).json.input.queryConfigurations[0].query.value).toBe(18);
      await page.getByRole('link', { name: 'revision 2' }).click();
      await page.getByRole('heading', { level: 1, name: `Revision 2 of ${ID}` }).waitFor();
      const main = page.locator('main');
      await expect(main.innerText()).resolves.toContain('Proposed: waiting for approval');
      // Its author is offered no approval (the API would refuse it: SCS_SELF_APPROVAL), only a withdrawal.
      await expect(page.getByRole('button', { name: /^Approve/ }).count()).resolves.toBe(0);
      await page.getByText('You proposed this revision: another reviewer must approve it').waitFor();
      await page.getByRole('button', { name: 'Withdraw (reject) revision 2' }).waitFor();
      // The change from the live revision, field by field, in words.
      const ageDiff = page.getByRole('table', { name: 'Rule age, changed, field by field' });
      await expect(ageDiff.getByRole('row').nth(1).innerText()).resolves.toMatch(/query\.value\s+18\s+40\s+changed/);
      await expect(page.getByRole('table', { name: /Rule kyc/ }).count()).resolves.toBe(0);
      await expect(main.innerText()).resolves.toContain('0 field(s) of the scenario and 1 rule(s) differ; 1 rule(s) unchanged.');
      await page.getByText('Not in shadow yet.').waitFor();
      await checkBoth(page, 'revisions-proposal');

      // A shadow run started from the page; executes through the API would pass live and fail under the proposal.
      await page.getByRole('button', { name: 'Start a shadow run' }).click();
      await page.getByText('active: every execute also evaluates this proposal').waitFor();
      const body = demoBody(ctx, ID);
      const executions: string[] = [];
      for (let i = 0; i < 2; i++) {
        const run = await ctx.call('POST', '/compliance/scenarios/execute', body);
        expect(run.status, JSON.stringify(run.json)).toBe(200);
        expect(run.json.map((r: { result: { status: string } }) => r.result.status)).toEqual(['valid', 'valid']);
        executions.push(run.json[0].executionId);
      }
      // Comparisons are written in batches (every 100 ms): refreshed until both are counted.
      await expect.poll(async () => {
        await page.getByRole('button', { name: 'Refresh the results' }).click();
        return page.locator('.rev-headline').innerText();
      }, { timeout: 20_000 }).toBe('2 of 2 compared executions would change verdict.');
      const byRule = page.getByRole('table', { name: /By rule/ });
      await expect(byRule.getByRole('row', { name: /^age/ }).innerText()).resolves.toMatch(/age\s+2\s+2\s+valid → not-valid: 2/);
      await expect(byRule.getByRole('row', { name: /^kyc/ }).innerText()).resolves.toMatch(/kyc\s+2\s+0\s+none/);
      const links = await page.locator('.rev-flips a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
      expect([...links].sort()).toEqual(executions.map((x) => `#/scenarios/${ID}/decisions/${x}`).sort());
      await checkBoth(page, 'revisions-shadow');

      // The history: the proposal waiting, each entry's state and summary, and a diff of any two picked.
      const stale = await ctx.call('PATCH', `/compliance/scenarios/${ID}`, { input: { name: 'Renamed meanwhile' } });
      expect(stale.status, JSON.stringify(stale.json)).toBe(202);
      await goto(page, `/scenarios/${ID}/revisions`, `Revisions of ${ID}`);
      const waiting = page.getByRole('region', { name: 'Waiting for approval' });
      await expect(waiting.getByRole('listitem').allInnerTexts()).resolves.toEqual([
        expect.stringMatching(/^Revision 2, proposed by token:[0-9a-f]{12} \(you\) from revision 1$/),
        expect.stringMatching(/^Revision 3, proposed by token:[0-9a-f]{12} \(you\) from revision 1$/),
      ]);
      const history = page.getByRole('region', { name: 'History, newest first' });
      await expect(history.getByRole('article').count()).resolves.toBe(3);
      await expect(history.getByRole('article', { name: /Revision 2/ }).innerText()).resolves.toContain('rule age changed (query.value)');
      await expect(history.getByRole('article', { name: /Revision 3/ }).innerText()).resolves.toContain('name changed');
      await page.getByLabel('Compare revision').selectOption('3');
      await page.getByLabel('with revision').selectOption('2');
      await page.getByRole('button', { name: 'Compare' }).click();
      await page.getByRole('heading', { name: 'Revision 3 compared with revision 2' }).waitFor();
      await expect(page.getByRole('table', { name: 'The scenario\'s fields' }).getByRole('row').nth(1).innerText())
        .resolves.toMatch(/name\s+"Renamed meanwhile"\s+"Adult, KYC green"\s+changed/);
      await page.getByRole('table', { name: 'Rule age, changed, field by field' }).waitFor();
      await checkBoth(page, 'revisions-history-diff');

      // The second token approves: the proposal is live, its shadow stopped, and the history says so.
      const other = approver.page;
      await signIn(ctx, other, APPROVER);
      await goto(other, `/scenarios/${ID}/revisions/2`, `Revision 2 of ${ID}`);
      await other.getByRole('button', { name: 'Approve revision 2' }).click();
      await other.getByText('Revision 2 approved: it is live now.').waitFor();
      await expect(other.locator('main').innerText()).resolves.toContain('Approved: went live on approval; the live revision now');
      await other.getByText('stopped', { exact: true }).waitFor();
      expect((await ctx.call('GET', `/compliance/scenarios/${ID}`)).json).toMatchObject({ revision: 2 });
      await checkBoth(other, 'revisions-approved');
      await goto(other, `/scenarios/${ID}/revisions`, `Revisions of ${ID}`);
      await expect(other.getByRole('article', { name: /Revision 2/ }).innerText()).resolves.toContain('Approved: went live on approval; the live revision now');

      // Revision 3 was made from revision 1: stale. Said before, and the API's 409 with what to do after a try.
      await goto(other, `/scenarios/${ID}/revisions/3`, `Revision 3 of ${ID}`);
      await other.getByText('Stale: this proposal was made from revision 1, and revision 2 is live now.').waitFor();
      await other.getByRole('button', { name: 'Approve revision 3' }).click();
      const refusal = other.getByRole('alert').filter({ hasText: 'SCS_PROPOSAL_STALE' });
      await expect(refusal.innerText()).resolves.toMatch(/send the change again as a PATCH[\s\S]*What to do: another revision went live/);
      await refusal.getByRole('link', { name: 'Open the rules editor' }).waitFor();
      await checkBoth(other, 'revisions-stale');
      await other.getByRole('button', { name: 'Reject revision 3' }).click();
      await other.getByText('Revision 3 rejected: it will never go live.').waitFor();

      for (const opened of [proposer, approver]) {
        expect(unexpected(opened)).toEqual([]);
        expect(opened.requests.map((r) => new URL(r.url).origin).filter((o) => o !== ctx.url)).toEqual([]);
      }
    } finally {
      await proposer.page.close();
      await approver.page.close();
    }
  }, 240_000);

  it('follows the list\'s cursor past 100 revisions, and offers no decision to a token without scenarios:approve', async () => {
    const id = 'rev-many';
    const input = {
      name: 'Many', type: 'ChallengeQuery', smartContractDeployments: [], queryConfigurations: [
        { id: 'age', query: { type: 'IDInformation', requestId: 1, attribute: 'personalData.age', operator: '$gte', value: 18 } },
      ],
    };
    expect((await ctx.call('POST', '/compliance/scenarios', { id, input })).status).toBe(201);
    const reviewer = await jwks!.sign({ scope: 'scenarios:read scenarios:write', projects: '*' }, 'reader-writer');
    // The last proposal is the reviewer's own.
    for (let i = 1; i <= 101; i++) {
      const proposed = await ctx.call('PATCH', `/compliance/scenarios/${id}`, { input: { name: `Many ${i}` } }, i === 101 ? reviewer : undefined);
      expect(proposed.status, JSON.stringify(proposed.json)).toBe(202);
    }
    const opened = await open(ctx);
    const { page, requests } = opened;
    try {
      await signIn(ctx, page, reviewer);
      await goto(page, `/scenarios/${id}/revisions`, `Revisions of ${id}`);
      const history = page.getByRole('region', { name: 'History, newest first' });
      await expect(history.getByRole('article').count()).resolves.toBe(102);
      await expect(history.getByRole('article').first().innerText()).resolves.toMatch(/^Revision 102 · proposed[\s\S]*name changed/);
      const listed = requests.filter((r) => new URL(r.url).pathname === `/compliance/scenarios/${id}/revisions`).map((r) => new URL(r.url).searchParams);
      expect(listed.map((q) => [q.get('limit'), q.has('cursor')])).toEqual([['100', false], ['100', true]]);
      await expect(page.getByRole('region', { name: 'Waiting for approval' }).getByRole('listitem').count()).resolves.toBe(101);

      // One revision's page reads that revision and its base, not the list.
      const before = requests.length;
      await goto(page, `/scenarios/${id}/revisions/102`, `Revision 102 of ${id}`);
      await page.getByText('Your token lacks the scope scenarios:approve').waitFor();
      await page.getByRole('heading', { name: 'Changes from revision 1' }).waitFor();
      const read = requests.slice(before).map((r) => new URL(r.url).pathname).filter((p) => p.startsWith(`/compliance/scenarios/${id}/revisions`));
      expect(read).toEqual(expect.arrayContaining([`/compliance/scenarios/${id}/revisions/102`, `/compliance/scenarios/${id}/revisions/1`]));
      expect(read.filter((p) => p === `/compliance/scenarios/${id}/revisions`)).toEqual([]);
      // Its author lacks scenarios:approve (reject included): no withdrawal is said to be possible.
      await page.getByText('You proposed this revision: another reviewer must approve it').waitFor();
      await expect(page.locator('main').innerText()).resolves.not.toContain('withdraw');
      await expect(page.getByRole('button', { name: /^(Approve|Reject|Withdraw)/ }).count()).resolves.toBe(0);
      // scenarios:write is enough to put it in shadow.
      await page.getByRole('button', { name: 'Start a shadow run' }).waitFor();
      await checkBoth(page, 'revisions-no-approve-scope');
      expect(unexpected(opened)).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it('offers no approval to a JWT without sub, nor calls another sub-less token\'s proposal its own; /compliance/me failing leaves Approve out, unless 404', async () => {
    const id = 'rev-who';
    await createAdult(id, 'Who');
    // Revision 2 by a sub-less writer; revision 3 by TOKEN.
    const writer = await jwks!.sign({ scope: 'scenarios:read scenarios:write', projects: '*' }, '');
    expect((await ctx.call('PATCH', `/compliance/scenarios/${id}`, { input: { name: 'Who 2' } }, writer)).status).toBe(202);
    expect((await ctx.call('PATCH', `/compliance/scenarios/${id}`, { input: { name: 'Who 3' } })).status).toBe(202);
    const unnamed = await jwks!.sign({ scope: 'scenarios:read scenarios:write scenarios:approve', projects: '*' }, '');
    const opened = await open(ctx);
    const { page } = opened;
    try {
      await signIn(ctx, page, unnamed);
      await goto(page, `/scenarios/${id}/revisions/2`, `Revision 2 of ${id}`);
      await page.getByText('Your token names no subject (a JWT without a sub claim)').waitFor();
      await expect(page.getByRole('button', { name: /^Approve/ }).count()).resolves.toBe(0);
      await page.getByRole('button', { name: 'Reject revision 2' }).waitFor();
      await expect(page.locator('main').innerText()).resolves.not.toContain('(you)');
      await checkBoth(page, 'revisions-unnamed');

      // /compliance/me answering 503 (held back by the test): the problem is said and Approve left out, Reject offered.
      await page.getByRole('button', { name: 'Sign out' }).click();
      await signIn(ctx, page);
      await page.route('**/compliance/me', (route) => route.fulfill({
        status: 503, contentType: 'application/problem+json', body: JSON.stringify({ title: 'Service Unavailable', status: 503, detail: 'Busy, try again', code: 'SCS_OVERLOADED' }),
      }));
      await goto(page, `/scenarios/${id}/revisions/3`, `Revision 3 of ${id}`);
      await page.getByRole('alert').filter({ hasText: 'Who this token is could not be read (Service Unavailable: Busy, try again (SCS_OVERLOADED))' }).waitFor();
      await expect(page.getByRole('button', { name: /^Approve/ }).count()).resolves.toBe(0);
      await page.getByRole('button', { name: 'Reject revision 3' }).waitFor();
      await checkBoth(page, 'revisions-me-failed');

      // 404 (a service without the route): every action offered; approving TOKEN's own proposal shows the API's 403.
      await page.unroute('**/compliance/me');
      await page.route('**/compliance/me', (route) => route.fulfill({ status: 404, contentType: 'application/problem+json', body: JSON.stringify({ title: 'Not Found', status: 404 }) }));
      await page.reload();
      await page.getByRole('heading', { level: 1, name: `Revision 3 of ${id}` }).waitFor();
      await page.getByRole('button', { name: 'Approve revision 3' }).click();
      const refusal = page.getByRole('alert').filter({ hasText: 'SCS_SELF_APPROVAL' });
      await expect(refusal.innerText()).resolves.toMatch(/four eyes[\s\S]*What to do: ask another reviewer/);
      await checkBoth(page, 'revisions-self-approval');
      expect((await ctx.call('GET', `/compliance/scenarios/${id}`)).json.revision).toBe(1);
      expect(unexpected(opened, [/^(503|404) \/compliance\/me$/])).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it('keeps the newer page when an earlier one\'s calls answer late', async () => {
    const id = 'rev-race';
    await createAdult(id, 'Race');
    expect((await ctx.call('PATCH', `/compliance/scenarios/${id}`, { input: { name: 'Race 2' } })).status).toBe(202);
    const opened = await open(ctx);
    const { page } = opened;
    try {
      await signIn(ctx, page);
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        void page.route(`**/compliance/scenarios/${id}/revisions/2`, async (route) => {
          resolve();
          await new Promise<void>((resolve) => { release = resolve; });
          await route.continue();
        });
      });
      await page.evaluate((hash) => { location.hash = hash; }, `#/scenarios/${id}/revisions/2`);
      await held;
      await page.evaluate(() => { location.hash = '#/scenarios'; });
      await page.getByRole('heading', { level: 1, name: 'Scenarios' }).waitFor();
      // The revision page's last call before it would show itself is the shadow GET: once answered, it has had its turn.
      const last = page.waitForResponse((r) => new URL(r.url()).pathname === `/compliance/scenarios/${id}/revisions/2/shadow`);
      release();
      await (await last).finished();
      await page.evaluate(() => new Promise((resolve) => { setTimeout(resolve, 200); }));
      await expect(page.locator('h1').allInnerTexts()).resolves.toEqual(['Scenarios']);
      expect(unexpected(opened)).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it.skipIf(!haveIden3Documents())('says OffChainZKP\'s 409 SCS_SHADOW_UNSUPPORTED as the API gives it', async () => {
    const input = {
      name: 'Wallet proof', type: 'OffChainZKP', smartContractDeployments: [],
      queryConfigurations: [{ id: 'q', query: { type: 'KYCAgeCredential', requestId: 1, attribute: 'birthday', value: 20000101, operator: '$lt', context: 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld' } }],
    };
    const created = await ctx.call('POST', '/compliance/scenarios', { id: 'rev-zkp', input });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect((await ctx.call('PATCH', '/compliance/scenarios/rev-zkp', { input: { name: 'Wallet proof, renamed' } })).status).toBe(202);
    const opened = await open(ctx);
    const { page } = opened;
    try {
      await signIn(ctx, page);
      await goto(page, '/scenarios/rev-zkp/revisions/2', 'Revision 2 of rev-zkp');
      await page.getByRole('button', { name: 'Start a shadow run' }).click();
      const refusal = page.getByRole('alert').filter({ hasText: 'SCS_SHADOW_UNSUPPORTED' });
      await expect(refusal.innerText()).resolves.toMatch(/one authorization request/);
      await checkBoth(page, 'revisions-shadow-unsupported');
      expect(unexpected(opened)).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
});
