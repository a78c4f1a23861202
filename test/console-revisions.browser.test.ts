/**
 * The console's Revisions page in headless chromium against `node dist/server.js`, with approval required for every
 * scenario (SCENARIO_APPROVAL_PROJECTS=*) and two static tokens: static tokens carry every scope, and their subjects
 * (fingerprints) differ, so the first proposes and the second approves (docs/governance.md, "Approve, reject").
 *
 * The proposer changes a rule in the editor: the save answers 202 and links the proposal on this page, which shows it
 * pending, its diff from the live revision field by field, and no approve button for its author. A shadow run started
 * from the page compares real executes sent through the API: the page shows the counts, the per-rule changes and the
 * flipped executions linked to the decisions page. The second token approves; the history shows it applied; a stale
 * proposal's approval shows the API's 409 and what to do. axe finds nothing at 1280x800 and 390 px on each state.
 * Without /usr/bin/chromium it is skipped with a message, unless REQUIRE_BROWSER=1. Screenshots: .artefacts/console/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { runBrowserTests, sayIfNoBrowser } from './browser-harness.js';
import { check, demoBody, openPage, signIn, TOKEN, useConsole } from './console-harness.js';
import { localJwks, type LocalJwks } from './jwks.js';
import { haveIden3Documents, iden3DocumentsEnv } from './shared-fixtures.js';

const APPROVER = 'console-approver-token-0123456789ab';
const ID = 'rev-adult';
sayIfNoBrowser('console-revisions.browser.test.ts', 'Revisions page');

/** Chromium logs each refused answer (the shadow GET's 404 before a start, a 409) as a console error; nothing else may be. */
const unexpected = (problems: string[]) =>
  problems.filter((p) => !/^console: Failed to load resource: the server responded with a status of (404 \(Not Found\)|409 \(Conflict\))$/.test(p));

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
  const goto = async (page: Page, hash: string, heading: string) => {
    await page.goto(`${ctx.url}/console#${hash}`);
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
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
    const proposer = await openPage(ctx);
    const approver = await openPage(ctx);
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

      for (const { problems, requests } of [proposer, approver]) {
        expect(unexpected(problems)).toEqual([]);
        expect(requests.map((r) => new URL(r.url).origin).filter((o) => o !== ctx.url)).toEqual([]);
      }
      // Credentials went to execute (by the test), never through the console.
      const credentialId = String(body.credentials[0]!.id);
      expect(proposer.requests.filter((r) => r.body?.includes(credentialId))).toEqual([]);
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
    for (let i = 1; i <= 101; i++) expect((await ctx.call('PATCH', `/compliance/scenarios/${id}`, { input: { name: `Many ${i}` } })).status).toBe(202);
    const reviewer = await jwks!.sign({ scope: 'scenarios:read scenarios:write', projects: '*' }, 'reader-writer');
    const { page, problems, requests } = await openPage(ctx);
    try {
      await signIn(ctx, page, reviewer);
      await goto(page, `/scenarios/${id}/revisions`, `Revisions of ${id}`);
      const history = page.getByRole('region', { name: 'History, newest first' });
      await expect(history.getByRole('article').count()).resolves.toBe(102);
      await expect(history.getByRole('article').first().innerText()).resolves.toMatch(/^Revision 102 · proposed[\s\S]*name changed/);
      const listed = requests.filter((r) => new URL(r.url).pathname === `/compliance/scenarios/${id}/revisions`).map((r) => new URL(r.url).searchParams);
      expect(listed.map((q) => [q.get('limit'), q.has('cursor')])).toEqual([['100', false], ['100', true]]);
      await expect(page.getByRole('region', { name: 'Waiting for approval' }).getByRole('listitem').count()).resolves.toBe(101);

      await goto(page, `/scenarios/${id}/revisions/102`, `Revision 102 of ${id}`);
      await page.getByText('Your token lacks the scope scenarios:approve').waitFor();
      await expect(page.getByRole('button', { name: /^(Approve|Reject|Withdraw)/ }).count()).resolves.toBe(0);
      // scenarios:write is enough to put it in shadow.
      await page.getByRole('button', { name: 'Start a shadow run' }).waitFor();
      await checkBoth(page, 'revisions-no-approve-scope');
      expect(unexpected(problems)).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);

  it.skipIf(!haveIden3Documents())('says OffChainZKP\'s 409 SCS_SHADOW_UNSUPPORTED as the API gives it', async () => {
    const input = {
      name: 'Wallet proof', type: 'OffChainZKP', smartContractDeployments: [],
      queryConfigurations: [{ id: 'q', query: { type: 'KYCAgeCredential', requestId: 1, attribute: 'birthday', value: 20000101, operator: '$lt', context: 'https://raw.githubusercontent.com/iden3/claim-schema-vocab/main/schemas/json-ld/kyc-v3.json-ld' } }],
    };
    const created = await ctx.call('POST', '/compliance/scenarios', { id: 'rev-zkp', input });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect((await ctx.call('PATCH', '/compliance/scenarios/rev-zkp', { input: { name: 'Wallet proof, renamed' } })).status).toBe(202);
    const { page, problems } = await openPage(ctx);
    try {
      await signIn(ctx, page);
      await goto(page, '/scenarios/rev-zkp/revisions/2', 'Revision 2 of rev-zkp');
      await page.getByRole('button', { name: 'Start a shadow run' }).click();
      const refusal = page.getByRole('alert').filter({ hasText: 'SCS_SHADOW_UNSUPPORTED' });
      await expect(refusal.innerText()).resolves.toMatch(/one authorization request/);
      await checkBoth(page, 'revisions-shadow-unsupported');
      expect(unexpected(problems)).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);
});
