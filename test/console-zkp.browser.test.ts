/**
 * The rule editor's zero-knowledge parts and projects in headless chromium (test/console-harness.ts), against
 * `node dist/server.js` with the chain settings the deploy tests use, on the local Hardhat node with the real iden3
 * contracts (test/chain/evm.ts, scripts/iden3-stack.mjs; the node runs in this test's process, so the file is in
 * vitest.config.ts's isolated project):
 * - OnChainZKP: the deployments (status, chain, verifier, transactions, failures, each rule's request and whether it is
 *   on chain), Deploy followed until the follower marks it Deployed, Retire, and the 409 of a chain without a deployer key;
 * - OffChainZKP: each rule's circuit options, and the authorization request of a dry run and of an execution drawn as
 *   a QR code that jsQR decodes back to the request;
 * - a token of two projects: the project field of a new scenario, and an id both projects use opened in each.
 * Each page: axe-core's WCAG 2.1 AA rules at 1280x800 and 390 px wide, no sideways scroll, screenshots in .artefacts/console/.
 */
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { EIP1193Provider } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ID_INFORMATION_CONTEXT_URL } from '../src/jsonld/urls.js';
import { runBrowserTests, sayIfNoBrowser } from './browser-harness.js';
import { check, openPage, signIn, TOKEN, useConsole } from './console-harness.js';
import { stack, type Stack } from './chain/deploy-stack.js';
import { startLocalChain, type LocalChain } from './chain/evm.js';
import { localJwks, type LocalJwks } from './jwks.js';

const require = createRequire(import.meta.url);
/** jsQR (CommonJS): the decoder, independent of the console's encoder. */
const jsQR = require('jsqr') as (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
/** A token of two projects (static tokens carry every scope). */
const BOTH = 'console-token-of-a-and-b-0123456789';
const KEY = generatePrivateKey();
/** Listed in CHAIN_RPC_URLS without a deployer key: a deploy to it is refused (409) before any call to it. */
const KEYLESS_CHAIN = 'eip155:31338';
const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const VIEWPORTS = [{ width: 1280, height: 800 }, { width: 390, height: 844 }];
sayIfNoBrowser('console-zkp.browser.test.ts', 'rule editor (zero-knowledge and projects)');

/** The text of the QR code drawn on the page's canvas, as jsQR reads its pixels. */
async function decodeQr(page: Page): Promise<string> {
  const canvas = page.locator('canvas.qr');
  await canvas.waitFor();
  const { width, height, pixels } = await canvas.evaluate((c: HTMLCanvasElement) => ({
    width: c.width, height: c.height, pixels: Array.from(c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data),
  }));
  const code = jsQR(Uint8ClampedArray.from(pixels), width, height);
  expect(code, 'jsQR found no QR code on the canvas').not.toBeNull();
  return code!.data;
}

/** The request a deep link carries (iden3comm://?i_m= and base64 JSON). */
const requestOf = (link: string): unknown => {
  const m = /^iden3comm:\/\/\?i_m=(.+)$/.exec(link);
  expect(m, link).not.toBeNull();
  return JSON.parse(Buffer.from(decodeURIComponent(m![1]!), 'base64').toString('utf8'));
};

const onChainRule = { id: 'born', query: { type: 'IDInformation', context: ID_INFORMATION_CONTEXT_URL, requestId: 1, attribute: 'personalData.birthDate', operator: '$lt', value: 20020101 } };

describe.skipIf(!runBrowserTests)('the rule editor\'s OnChainZKP deployments, OffChainZKP options and QR code, and projects', () => {
  let chain: LocalChain | undefined;
  let s: Stack;
  let jwks: LocalJwks | undefined;
  const env: Record<string, string> = {};
  beforeAll(async () => {
    jwks = await localJwks();
    chain = await startLocalChain();
    const provider = (require('hardhat') as { network: { provider: EIP1193Provider } }).network.provider;
    s = await stack.deployIden3Stack(provider);
    await provider.request({ method: 'hardhat_setBalance', params: [privateKeyToAccount(KEY).address, '0x56BC75E2D63100000'] } as never);
    Object.assign(env, {
      API_TOKENS: `${TOKEN},${BOTH}:projA+projB`,
      CHAIN_RPC_URLS: `${chain.chain}=${chain.url},${KEYLESS_CHAIN}=http://127.0.0.1:9`, CHAIN_DEFAULT: chain.chain,
      CHAIN_DEPLOYER_KEY: `${chain.chain}=${KEY}`, CHAIN_VERIFIER_ADDRESS: s.verifier, CHAIN_VALIDATORS: s.sigV2Validator,
      CHAIN_CONFIRMATIONS: '1', CHAIN_FOLLOW_INTERVAL_MS: '300', CHAIN_REPLACE_AFTER_MS: '0',
      ...jwks.env,
      ZKP_VERIFIER_DID: 'did:iden3:polygon:amoy:x6x5sor7zpxYggmPs5jcaiu5TEWAU2knvRifZbzCp', PUBLIC_BASE_URL: 'http://192.0.2.2:3000',
    });
  }, 300_000);
  // Its beforeAll runs after the one above: the server starts with the chain's settings.
  const ctx = useConsole('scs-console-zkp-', env);
  afterAll(async () => {
    await chain?.stop();
    jwks?.close();
  });

  it('shows an OnChainZKP scenario\'s deployments, deploys it (409 saying how to set a key where there is none), follows it to Deployed and retires it', async () => {
    const { page, problems, requests } = await openPage(ctx);
    const id = 'onchain-console';
    // The ETag of each read of the scenario, in order.
    const etags: string[] = [];
    page.on('response', (r) => {
      if (r.request().method() === 'GET' && new URL(r.url()).pathname === `/compliance/scenarios/${id}` && r.ok()) etags.push(r.headers()['etag'] ?? '');
    });
    const created = await ctx.call('POST', '/compliance/scenarios', { id, input: { name: 'Born before 2002', type: 'OnChainZKP', queryConfigurations: [onChainRule], smartContractDeployments: [] } });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    try {
      await signIn(ctx, page);
      await page.goto(`${ctx.url}/console#/scenarios/${id}`);
      const panel = page.getByRole('region', { name: 'Deployments' });
      await panel.getByText('Not deployed').waitFor();
      await expect(panel.getByRole('region', { name: 'Rules on chain' }).innerText()).resolves.toMatch(/born\s+1\s+Not on chain/);

      // A chain that is no CAIP-2 one: the problem goes on the field.
      await panel.getByLabel('Chain to deploy to').fill('polygon');
      await panel.getByRole('button', { name: 'Deploy' }).click();
      await expect.poll(() => panel.getByLabel('Chain to deploy to').getAttribute('aria-invalid')).toBe('true');
      // A chain the service has no key for: the 409 says which variable to set.
      await panel.getByLabel('Chain to deploy to').fill(KEYLESS_CHAIN);
      await panel.getByRole('button', { name: 'Deploy' }).click();
      await panel.getByRole('alert').getByText('set CHAIN_DEPLOYER_KEY').waitFor();
      await expect(panel.getByRole('alert').innerText()).resolves.toContain(`No deployer key is configured for chain ${KEYLESS_CHAIN}`);
      await check(page, 'onchain-no-key-1280');

      await panel.getByLabel('Chain to deploy to').fill('');
      await panel.getByRole('button', { name: 'Deploy' }).click();
      // Followed from the 202's Location until the follower marks it Deployed.
      await panel.getByRole('status').getByText(/is Deployed\./).waitFor({ timeout: 120_000 });
      const stored = (await ctx.call('GET', `/compliance/scenarios/${id}`)).json.input;
      const [deployment] = stored.smartContractDeployments as { id: string; status: string; address: string; transactions: { txHash: string; blockNumber: number; status: string }[]; requests: { requestId: string }[] }[];
      expect(deployment!.status).toBe('Deployed');
      const article = panel.locator(`article[data-deployment="${deployment!.id}"]`);
      const text = await article.innerText();
      expect(text).toContain(`Deployment ${deployment!.id}: Deployed`);
      expect(text).toContain(chain!.chain);
      expect(text).toContain(deployment!.address);
      expect(text).toContain(deployment!.transactions[0]!.txHash);
      expect(text).toMatch(new RegExp(`TxConfirmed\\s+${deployment!.transactions[0]!.txHash}\\s+${deployment!.transactions[0]!.blockNumber}`));
      const requestId = deployment!.requests[0]!.requestId;
      await expect(panel.getByRole('region', { name: 'Rules on chain' }).innerText()).resolves.toContain(`born\t${requestId}\tOn chain (deployment ${deployment!.id})`);
      // The editor took the deploy's revision: the rule shows the deployment's requestId and a save is not refused (412).
      const posts = requests.filter((r) => r.method === 'POST' && r.url.endsWith(`/compliance/scenarios/${id}/deployments`));
      expect(posts.map((r) => r.body)).toEqual([JSON.stringify({ chain: 'polygon' }), JSON.stringify({ chain: KEYLESS_CHAIN }), '{}']);
      expect(requests.filter((r) => r.method === 'GET' && r.url.includes(`/deployments/${deployment!.id}`)).length).toBeGreaterThan(0);
      for (const viewport of VIEWPORTS) {
        await page.setViewportSize(viewport);
        await check(page, `onchain-deployed-${viewport.width}`);
      }
      await page.setViewportSize(VIEWPORTS[0]!);
      await page.getByLabel('Name').fill('Born before 2002, deployed');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Saved', { exact: true }).waitFor();
      // The save named the revision the editor last read, the deploy's: its ETag, not the page's first.
      const patches = requests.filter((r) => r.method === 'PATCH');
      expect(patches).toHaveLength(1);
      expect(etags.length).toBeGreaterThan(1);
      expect(patches[0]!.ifMatch).toBe(etags.at(-1));
      expect(patches[0]!.ifMatch).not.toBe(etags[0]);

      // Retire asks first; once done, focus goes to the section's heading.
      await panel.getByRole('button', { name: `Retire ${deployment!.id}` }).click();
      await panel.getByRole('button', { name: 'Keep it' }).click();
      expect((await ctx.call('GET', `/compliance/scenarios/${id}`)).json.input.smartContractDeployments[0].status).toBe('Deployed');
      await panel.getByRole('button', { name: `Retire ${deployment!.id}` }).click();
      await panel.getByRole('button', { name: `Yes, retire ${deployment!.id}` }).click();
      await panel.getByRole('status').getByText(`Deployment ${deployment!.id} is Deprecated.`).waitFor();
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('deployments-heading');
      await expect(article.innerText()).resolves.toContain('Deprecated');
      expect((await ctx.call('GET', `/compliance/scenarios/${id}`)).json.input.smartContractDeployments[0].status).toBe('Deprecated');
      expect(problems).toEqual(['console: Failed to load resource: the server responded with a status of 400 (Bad Request)', 'console: Failed to load resource: the server responded with a status of 409 (Conflict)']);
    } finally {
      await page.close();
    }
  }, 240_000);

  it('offers no Deploy or Retire to a token without scenarios:write, and says why', async () => {
    const { page, problems } = await openPage(ctx);
    const reader = await jwks!.sign({ scope: 'scenarios:read', projects: '*' }, 'reader');
    const id = 'onchain-read-only';
    const live = { id: 'd-live', status: 'Deployed', chain: 'eip155:80002', address: '0x3333333333333333333333333333333333333333', transactions: [] };
    const created = await ctx.call('POST', '/compliance/scenarios', { id, input: { name: 'Read only', type: 'OnChainZKP', queryConfigurations: [onChainRule], smartContractDeployments: [live] } });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    try {
      await signIn(ctx, page, reader);
      await page.goto(`${ctx.url}/console#/scenarios/${id}`);
      const panel = page.getByRole('region', { name: 'Deployments' });
      await panel.getByText('This token may not deploy (scenarios:write).').waitFor();
      await panel.locator('article[data-deployment="d-live"]').getByText('Deployed').waitFor();
      await expect(panel.getByRole('button').count()).resolves.toBe(0);
      // Nor saving, adding a rule or a dry run (the API refuses them without scenarios:write): the page says why.
      await page.getByText('This token may not change scenarios (scenarios:write)').waitFor();
      await page.getByText('No dry run: the API runs one for a token with scenarios:write only.').waitFor();
      await expect(page.getByRole('button', { name: /Save changes|Add a rule|Dry-run|Remove rule/ }).count()).resolves.toBe(0);
      await check(page, 'onchain-reader-1280');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('shows a deployment recorded by PATCH with its failure and its failed transaction\'s error', async () => {
    const { page, problems } = await openPage(ctx, VIEWPORTS[1]);
    const id = 'onchain-recorded';
    const failed = {
      id: 'd-recorded', contractName: 'UniversalVerifier', status: 'DeploymentStarted', chain: 'eip155:80002', address: '0x1111111111111111111111111111111111111111',
      transactions: [{ id: 'tx-1', actionName: 'ScenarioDeploy', status: 'TxPosted', txHash: `0x${'ab'.repeat(32)}` }],
    };
    expect((await ctx.call('POST', '/compliance/scenarios', { id, input: { name: 'Recorded', type: 'OnChainZKP', queryConfigurations: [onChainRule], smartContractDeployments: [failed] } })).status).toBe(201);
    const patched = await ctx.call('PATCH', `/compliance/scenarios/${id}`, {
      input: {
        smartContractDeployments: [{
          ...failed, status: 'DeploymentFailed', errorMessage: 'ValidatorIsNotWhitelisted',
          transactions: [{ ...failed.transactions[0], status: 'TxFailed', blockNumber: 4242, errorMessage: 'execution reverted: ValidatorIsNotWhitelisted' }],
        }],
      },
    });
    expect(patched.status, JSON.stringify(patched.json)).toBe(200);
    try {
      await signIn(ctx, page);
      await page.goto(`${ctx.url}/console#/scenarios/${id}`);
      const article = page.locator('article[data-deployment="d-recorded"]');
      await article.waitFor();
      const text = await article.innerText();
      expect(text).toContain('Deployment d-recorded: DeploymentFailed');
      expect(text).toMatch(/Failure\s+ValidatorIsNotWhitelisted/);
      expect(text).toMatch(/TxFailed\s+0x(ab){32}\s+4242\s+execution reverted: ValidatorIsNotWhitelisted/);
      expect(text).toContain('eip155:80002');
      await expect(page.getByRole('region', { name: 'Rules on chain' }).innerText()).resolves.toMatch(/born\s+1\s+Not on chain/);
      await check(page, 'onchain-failed-390');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('follows a deployment on its way when the page opens, and stops reading it once the page is left', async () => {
    const { page, problems, requests } = await openPage(ctx);
    const id = 'onchain-on-its-way';
    // A chain the service does not follow: the deployment stays DeploymentStarted.
    const started = { id: 'd-waiting', status: 'DeploymentStarted', chain: 'eip155:80002', address: '0x2222222222222222222222222222222222222222', transactions: [] };
    expect((await ctx.call('POST', '/compliance/scenarios', { id, input: { name: 'Waiting', type: 'OnChainZKP', queryConfigurations: [onChainRule], smartContractDeployments: [started] } })).status).toBe(201);
    const reads = () => requests.filter((r) => r.method === 'GET' && r.url.includes('/deployments/d-waiting')).length;
    try {
      await signIn(ctx, page);
      await page.goto(`${ctx.url}/console#/scenarios/${id}`);
      await page.getByRole('status').getByText('Deployment d-waiting is DeploymentStarted: following it').waitFor();
      await expect.poll(reads, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
      // A second deployment would be refused (409) while this one is on its way: Deploy waits, and says why.
      await expect(page.getByRole('button', { name: 'Deploy' }).isDisabled()).resolves.toBe(true);
      await page.getByText('A deployment is on its way: Deploy is offered again once it is final.').waitFor();
      await page.getByRole('link', { name: 'Scenarios' }).click();
      await page.getByRole('heading', { level: 1, name: 'Scenarios' }).waitFor();
      const before = reads();
      // Its next read was due 2 s after the first, the one after 4 s later: neither is made.
      await page.waitForTimeout(7000);
      expect(reads()).toBe(before);
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('keeps a rule edited while a deployment is followed from overwriting the deployment\'s requestIds: the save is refused (412) and says to reload', async () => {
    const { page, problems, requests } = await openPage(ctx);
    const id = 'onchain-edited-meanwhile';
    const started = { id: 'd-meanwhile', status: 'DeploymentStarted', chain: 'eip155:80002', address: '0x4444444444444444444444444444444444444444', transactions: [] };
    expect((await ctx.call('POST', '/compliance/scenarios', { id, input: { name: 'Meanwhile', type: 'OnChainZKP', queryConfigurations: [onChainRule], smartContractDeployments: [started] } })).status).toBe(201);
    try {
      await signIn(ctx, page);
      await page.goto(`${ctx.url}/console#/scenarios/${id}`);
      await page.getByRole('status').getByText('Deployment d-meanwhile is DeploymentStarted: following it').waitFor();
      // The user edits the rule; meanwhile the deployment ends with a new requestId for it.
      await page.getByRole('group', { name: 'Rule 1' }).getByLabel('Value').fill('20030101');
      const done = await ctx.call('PATCH', `/compliance/scenarios/${id}`, {
        input: {
          queryConfigurations: [{ ...onChainRule, query: { ...onChainRule.query, requestId: 77 } }],
          smartContractDeployments: [{ ...started, status: 'Deployed' }],
        },
      });
      expect(done.status, JSON.stringify(done.json)).toBe(200);
      await page.getByRole('status').getByText('Deployment d-meanwhile is Deployed.').waitFor({ timeout: 60_000 });
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByRole('alert').getByText('changed meanwhile').waitFor();
      expect(requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
      const stored = (await ctx.call('GET', `/compliance/scenarios/${id}`)).json.input;
      expect(stored.queryConfigurations[0].query.requestId).toBe(77);
      expect(stored.queryConfigurations[0].query.value).toBe(20020101);
      await check(page, 'onchain-changed-meanwhile-1280');
      expect(problems).toEqual(['console: Failed to load resource: the server responded with a status of 412 (Precondition Failed)']);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('stops following a deployment the API refuses to read (404), says so and offers to check again', async () => {
    const { page, requests } = await openPage(ctx);
    const id = 'onchain-gone';
    const started = { id: 'd-gone', status: 'DeploymentStarted', chain: 'eip155:80002', address: '0x5555555555555555555555555555555555555555', transactions: [] };
    expect((await ctx.call('POST', '/compliance/scenarios', { id, input: { name: 'Gone', type: 'OnChainZKP', queryConfigurations: [onChainRule], smartContractDeployments: [started] } })).status).toBe(201);
    const reads = () => requests.filter((r) => r.method === 'GET' && r.url.includes('/deployments/d-gone')).length;
    try {
      await signIn(ctx, page);
      await page.goto(`${ctx.url}/console#/scenarios/${id}`);
      await page.getByRole('status').getByText('Deployment d-gone is DeploymentStarted: following it').waitFor();
      expect((await ctx.call('DELETE', `/compliance/scenarios/${id}`)).status).toBeLessThan(300);
      await page.getByRole('status').getByText('Stopped following deployment d-gone').waitFor({ timeout: 30_000 });
      const made = reads();
      expect(made).toBeGreaterThanOrEqual(1);
      await page.getByRole('button', { name: 'Check again' }).waitFor();
      await check(page, 'onchain-stopped-1280');
      // No read after the refusal: the axe check above took longer than the next wait would have.
      expect(reads()).toBe(made);
    } finally {
      await page.close();
    }
  }, 120_000);

  for (const viewport of VIEWPORTS) {
    it(`edits an OffChainZKP rule's circuit options and shows its authorization request as a QR code that decodes to it (${viewport.width} wide)`, async () => {
      const { page, problems, requests } = await openPage(ctx, viewport);
      const id = `offchain-console-${viewport.width}`;
      const qrLoads = () => requests.filter((r) => new URL(r.url).pathname === '/console/vendor/qr.js').length;
      try {
        await signIn(ctx, page);
        await page.getByRole('link', { name: 'New scenario' }).click();
        await page.getByRole('heading', { level: 1, name: 'New scenario' }).waitFor();
        await page.getByLabel('Scenario id').fill(id);
        await page.getByLabel('Name').fill('Adult, one account per person');
        await page.getByLabel('Type', { exact: true }).selectOption('OffChainZKP');
        const rule = page.getByRole('group', { name: 'Rule 1' });
        await rule.getByLabel('Credential type').selectOption('IDInformation');
        await rule.getByLabel('Attribute', { exact: true }).selectOption('personalData.birthDate');
        const operators = () => rule.getByLabel('Operator').locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
        // A circuit that does not prove the operator: another of its shape is chosen, said, and the typed value kept.
        await rule.getByLabel('Operator').selectOption('$lte');
        await rule.getByLabel('Value').fill('20080101');
        // The circuit decides the operators: SigV2 proves no $between, V3 does; $sd is offered (OffChainZKP).
        await rule.getByLabel('Circuit').selectOption('credentialAtomicQuerySigV2');
        await rule.getByText('This circuit does not prove $lte').waitFor();
        await expect(rule.getByLabel('Value').inputValue()).resolves.toBe('20080101');
        // linkedMultiQuery takes a proof type (the API accepts it), not a nullifier.
        await rule.getByLabel('Circuit').selectOption('linkedMultiQuery');
        await expect(rule.getByLabel('Proof type').isDisabled()).resolves.toBe(false);
        await expect(rule.getByLabel('Nullifier session id').isDisabled()).resolves.toBe(true);
        await rule.getByLabel('Circuit').selectOption('credentialAtomicQuerySigV2');
        expect(await operators()).not.toContain('$between');
        expect(await operators()).toContain('$sd');
        await expect(rule.getByLabel('Proof type').isDisabled()).resolves.toBe(true);
        await rule.getByLabel('Circuit').selectOption('credentialAtomicQueryV3');
        expect(await operators()).toEqual(expect.arrayContaining(['$between', '$lte', '$sd']));
        await rule.getByLabel('Operator').selectOption('$lt');
        await rule.getByLabel('Value').fill('20080101');
        await rule.getByLabel('Proof type').selectOption('BJJSignature2021');
        await rule.getByLabel('Nullifier session id').fill('20260101');
        await rule.getByLabel('JSON-LD context URL').fill(ID_INFORMATION_CONTEXT_URL);
        await page.getByLabel('Allowed issuers').fill('*');

        // The QR library is loaded only once a request is to be drawn.
        expect(qrLoads()).toBe(0);
        // A dry run of the unsaved rule: its request, drawn as a QR code jsQR reads back.
        await page.getByLabel('Credentials (a JSON array)').fill('[]');
        await page.getByLabel('Holder address').fill(ADDRESS);
        const answer = page.waitForResponse((r) => r.url().endsWith('/compliance/scenarios/dry-run'));
        await page.getByRole('button', { name: 'Dry-run' }).click();
        const dryRun = await (await answer).json() as { results: { result: { status: string; authorizationRequest: { body: { scope: unknown[] } } } }[] };
        expect(dryRun.results[0]!.result.status).toBe('pending');
        const link = await decodeQr(page);
        expect(qrLoads()).toBe(1);
        expect(requestOf(link)).toEqual(dryRun.results[0]!.result.authorizationRequest);
        await expect(page.getByLabel('Deep link').inputValue()).resolves.toBe(link);
        expect(JSON.stringify(dryRun.results[0]!.result.authorizationRequest.body.scope)).toContain('"nullifierSessionId":"20260101"');
        await check(page, `offchain-dry-run-${viewport.width}`);

        await page.getByRole('button', { name: 'Create scenario' }).click();
        await page.getByRole('heading', { level: 1, name: `Scenario ${id}` }).waitFor();
        const stored = (await ctx.call('GET', `/compliance/scenarios/${id}`)).json.input;
        expect(stored.trustedIssuers).toEqual(['*']);
        expect(stored.queryConfigurations[0].query).toEqual({
          type: 'IDInformation', requestId: 1, attribute: 'personalData.birthDate', operator: '$lt', value: 20080101, context: ID_INFORMATION_CONTEXT_URL,
          circuitId: 'credentialAtomicQueryV3', proofType: 'BJJSignature2021', params: { nullifierSessionId: 20260101 },
        });
        // Reopened, the options show as stored.
        const reopened = page.getByRole('group', { name: 'Rule 1' });
        await expect(reopened.getByLabel('Circuit').inputValue()).resolves.toBe('credentialAtomicQueryV3');
        await expect(reopened.getByLabel('Nullifier session id').inputValue()).resolves.toBe('20260101');

        // Ask a wallet: a real execution, whose request names its callback.
        await page.getByLabel('Holder address').fill(ADDRESS);
        // The page names the scenario's project (empty: none), as every link to a scenario does.
        const executed = page.waitForResponse((r) => new URL(r.url()).pathname === '/compliance/scenarios/execute');
        await page.getByRole('button', { name: 'Ask a wallet' }).click();
        const execution = await (await executed).json() as { executionId: string; result: { authorizationRequest: { body: { callbackUrl: string } } } }[];
        await page.getByText(`Execution ${execution[0]!.executionId}: pending`).waitFor();
        const request = requestOf(await decodeQr(page)) as { body: { callbackUrl: string } };
        expect(request).toEqual(execution[0]!.result.authorizationRequest);
        expect(request.body.callbackUrl).toBe(`http://192.0.2.2:3000/compliance/executions/${execution[0]!.executionId}/zkp-response`);
        await check(page, `offchain-wallet-${viewport.width}`);
        expect(problems).toEqual([]);
      } finally {
        await page.close();
      }
    }, 180_000);
  }

  it('says a request too large for a QR code is so, offers its link and JSON, and loads no QR library for it', async () => {
    const { page, problems, requests } = await openPage(ctx);
    const id = 'offchain-too-large';
    const rules = Array.from({ length: 24 }, (_, i) => ({ id: `rule-${i + 1}`, query: { type: 'IDInformation', context: ID_INFORMATION_CONTEXT_URL, requestId: i + 1, attribute: 'personalData.birthDate', operator: '$lt', value: 20080101, circuitId: 'credentialAtomicQueryV3' } }));
    expect((await ctx.call('POST', '/compliance/scenarios', { id, input: { name: 'Many rules', type: 'OffChainZKP', trustedIssuers: ['*'], queryConfigurations: rules, smartContractDeployments: [] } })).status).toBe(201);
    try {
      await signIn(ctx, page);
      await page.goto(`${ctx.url}/console#/scenarios/${id}`);
      await page.getByLabel('Credentials (a JSON array)').fill('[]');
      await page.getByLabel('Holder address').fill(ADDRESS);
      await page.getByRole('button', { name: 'Dry-run' }).click();
      await page.getByText('This request is too large for a QR code').waitFor();
      const link = await page.getByLabel('Deep link').inputValue();
      expect(Buffer.byteLength(link)).toBeGreaterThan(2953);
      await expect(page.locator('pre.json').getAttribute('aria-label')).resolves.toBe('The request as JSON');
      expect(requests.filter((r) => new URL(r.url).pathname === '/console/vendor/qr.js')).toHaveLength(0);
      await check(page, 'offchain-too-large-1280');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('gives a token of two projects the project field, and opens an id both its projects use in each (no 409)', async () => {
    const { page, problems, requests } = await openPage(ctx);
    const id = 'shared-by-two';
    for (const projectId of ['projA', 'projB']) {
      const r = await ctx.call('POST', '/compliance/scenarios', { id, input: { name: `In ${projectId}`, type: 'ChallengeQuery', projectId, queryConfigurations: [{ id: 'r', query: { type: 'IDInformation', requestId: 1, operator: '$noop' } }], smartContractDeployments: [] } }, BOTH);
      expect(r.status, JSON.stringify(r.json)).toBe(201);
    }
    try {
      await signIn(ctx, page, BOTH);
      // The id alone is ambiguous for this token: the list's links name the project.
      expect((await ctx.call('GET', `/compliance/scenarios/${id}`, undefined, BOTH)).status).toBe(409);
      const rows = page.getByRole('row').filter({ hasText: id });
      await expect.poll(() => rows.count()).toBe(2);
      await rows.filter({ hasText: 'projB' }).getByRole('link', { name: id }).click();
      await page.getByRole('heading', { level: 1, name: `Scenario ${id}` }).waitFor();
      await expect(page.getByLabel('Name').inputValue()).resolves.toBe('In projB');
      await page.getByText('Project: projB').waitFor();
      await page.getByLabel('Name').fill('Renamed in projB');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByText('Saved', { exact: true }).waitFor();
      const name = async (p: string) => (await ctx.call('GET', `/compliance/scenarios/${id}?projectId=${p}`, undefined, BOTH)).json.input.name;
      expect([await name('projA'), await name('projB')]).toEqual(['In projA', 'Renamed in projB']);
      expect(requests.filter((r) => r.method === 'PATCH').map((r) => new URL(r.url).search)).toEqual(['?projectId=projB']);
      // The tabs keep the project.
      await expect(page.getByRole('link', { name: 'Revisions' }).getAttribute('href')).resolves.toBe(`#/scenarios/${id}/revisions?projectId=projB`);
      // The Revisions tab reads projB's history (no 409 for the id alone), and its links keep the project.
      await page.getByRole('link', { name: 'Revisions' }).click();
      await page.getByRole('heading', { level: 1, name: `Revisions of ${id}` }).waitFor();
      await page.getByRole('status').getByText('2 revisions').waitFor();
      await expect(page.getByRole('link', { name: 'Revision 2' }).first().getAttribute('href')).resolves.toBe(`#/scenarios/${id}/revisions/2?projectId=projB`);
      expect(requests.filter((r) => new URL(r.url).pathname.startsWith(`/compliance/scenarios/${id}`) && r.method === 'GET').map((r) => new URL(r.url).searchParams.get('projectId'))).not.toContain(null);
      await page.getByRole('link', { name: 'Rules' }).click();
      await page.getByRole('heading', { level: 1, name: `Scenario ${id}` }).waitFor();
      for (const viewport of VIEWPORTS) {
        await page.setViewportSize(viewport);
        await check(page, `project-editor-${viewport.width}`);
      }

      // A new scenario: the project is one of the token's (GET /compliance/me), not free text.
      await page.setViewportSize(VIEWPORTS[0]!);
      await page.getByRole('link', { name: 'New scenario' }).click();
      await page.getByRole('heading', { level: 1, name: 'New scenario' }).waitFor();
      const project = page.getByLabel('Project');
      await project.waitFor();
      // None is chosen for the user: a placeholder first.
      expect(await project.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['', 'projA', 'projB']);
      await expect(project.inputValue()).resolves.toBe('');
      await project.selectOption('projB');
      await page.getByLabel('Scenario id').fill('made-in-b');
      await page.getByLabel('Name').fill('Made in B');
      const rule = page.getByRole('group', { name: 'Rule 1' });
      await rule.getByLabel('Credential type').selectOption('IDInformation');
      await rule.getByLabel('Attribute', { exact: true }).selectOption('personalData.age');
      await rule.getByLabel('Operator').selectOption('$gt');
      await rule.getByLabel('Value').fill('17');
      for (const viewport of VIEWPORTS) {
        await page.setViewportSize(viewport);
        await check(page, `project-new-${viewport.width}`);
      }
      await page.getByRole('button', { name: 'Create scenario' }).click();
      await page.getByRole('heading', { level: 1, name: 'Scenario made-in-b' }).waitFor();
      expect(await page.evaluate(() => location.hash)).toBe('#/scenarios/made-in-b?projectId=projB');
      expect((await ctx.call('GET', '/compliance/scenarios/made-in-b', undefined, BOTH)).json.input.projectId).toBe('projB');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 180_000);
});
