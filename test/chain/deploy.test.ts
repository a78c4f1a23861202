/**
 * POST /compliance/scenarios/{id}/deployments on a local Hardhat node with the real iden3 stack (scripts/iden3-stack.mjs,
 * Groth16 stubbed): from an empty verifier, the service turns the rules into requests, sends setRequests with its
 * own key, and the requests on chain are the ones the script computes independently (js-sdk's circuit queries and
 * query hashes, the contract's type-1 ids); a wallet's response then makes execute answer valid. Following the
 * transaction is another part's: the test PATCHes the deployment to Deployed as an operator would.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import pino from 'pino';
import { createPublicClient, createWalletClient, custom, getAddress, type Abi, type Address, type EIP1193Provider, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ID_INFORMATION_CONTEXT_URL } from '../../src/jsonld/urls.js';
import { chainReaderFor } from '../../src/chain/index.js';
import { ChainReader } from '../../src/chain/reader.js';
import { RequestCheck } from '../../src/chain/request-check.js';
import { RequestMatcher } from '../../src/chain/request-match.js';
import { createDocumentLoader } from '../../src/jsonld/documents.js';
import { loadConfig } from '../../src/config.js';
import { auth, makeApp, tempDir } from '../helpers.js';
import { PlanCache } from '../../src/domain/plan-cache.js';
import { typeDeclarations } from '../../src/execution/index.js';
import { accessFor } from '../../src/services/access.js';
import { DeploymentFollower } from '../../src/services/deployment-follower.js';
import { DeploymentRecorder } from '../../src/services/deployment-records.js';
import { DeploymentService } from '../../src/services/deployments.js';
import { openStore, type Store } from '../../src/store/index.js';
import pg from 'pg';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from '../pg.js';
import { ID_INFORMATION, stack, type Stack } from './deploy-stack.js';
import { startLocalChain, type LocalChain } from './evm.js';

const require = createRequire(import.meta.url);
const universal = require('@iden3/contracts/build/contracts/UniversalVerifier.json') as { abi: Abi };

const { OPERATORS } = stack;
const ATTRIBUTE = 'personalData.birthDate';
const SUBVERSION = 'credentialAtomicQueryV3OnChain-16-16-64-16-32';

let chain: LocalChain;
let provider: EIP1193Provider;
let s: Stack;
let stable: Address;
let linked: Address;
let alice: Address;
let bob: Address;
const KEY = generatePrivateKey();
const deployer = privateKeyToAccount(KEY).address;
const logs: string[] = [];
const answers: string[] = [];
const dataDir = tempDir('scs-deploy-');
let app: FastifyInstance;

const rule = (id: string, value: number, extra: Record<string, unknown> = {}) => ({
  id, query: { type: 'IDInformation', context: ID_INFORMATION_CONTEXT_URL, requestId: 1, attribute: ATTRIBUTE, operator: '$lt', value, ...extra },
});

const env = () => ({
  DATA_DIR: dataDir, CHAIN_RPC_URLS: `eip155:31337=${chain.url}`, CHAIN_DEPLOYER_KEY: KEY, CHAIN_VERIFIER_ADDRESS: s.verifier,
  CHAIN_VALIDATORS: [s.sigV2Validator, stable, linked].join(','), CHAIN_REPLACE_AFTER_MS: '0', LOG_LEVEL: 'debug',
});
const logger = { level: 'debug', stream: { write: (line: string) => logs.push(line) } };

async function call(a: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  const res = await a.inject({ method, url, headers: auth, ...(payload !== undefined && { payload: payload as object }) });
  answers.push(res.body, JSON.stringify(res.headers));
  return res;
}

async function createScenario(a: FastifyInstance, id: string, rules: unknown[]) {
  const res = await call(a, 'POST', '/compliance/scenarios', { id, input: { name: id, type: 'OnChainZKP', queryConfigurations: rules, smartContractDeployments: [] } });
  expect(res.statusCode, res.body).toBe(201);
}

const scenarioOf = async (a: FastifyInstance, id: string) => (await call(a, 'GET', `/compliance/scenarios/${id}`)).json().input as {
  queryConfigurations: { id: string; query: { requestId: string } }[];
  smartContractDeployments: { id: string; status: string; address: string; transactions: { id: string; txHash: string; status: string }[]; requests: { requestId: string }[] }[];
};

/** What the operator (or, later, the follower) does once the transaction is mined. */
async function markDeployed(a: FastifyInstance, id: string, deploymentId: string) {
  const input = await scenarioOf(a, id);
  const deployments = input.smartContractDeployments.map((d) => (d.id !== deploymentId
    ? d
    : {
        ...d, status: 'Deployed', transactions: d.transactions.map((t) => ({ ...t, status: 'TxConfirmed' })),
      }));
  const res = await call(a, 'PATCH', `/compliance/scenarios/${id}`, { input: { smartContractDeployments: deployments } });
  expect(res.statusCode, res.body).toBe(200);
}

const client = () => createPublicClient({ transport: custom(provider) });
const onChain = async (requestId: bigint) =>
  (await client().readContract({ address: s.verifier, abi: universal.abi, functionName: 'getRequest', args: [requestId] })) as { validator: Address; params: Hex; creator: Address };

const check = () => new RequestCheck({ matcher: new RequestMatcher({ documentLoader: createDocumentLoader({}) }) });
const reader = () => new ChainReader({
  ...loadConfig({}).chains, chains: [{ chain: chain.chain, chainId: chain.chainId, url: chain.url }], timeoutMs: 30_000, cacheTtlMs: 0, errorTtlMs: 0,
});

async function execute(a: FastifyInstance, scenarioId: string, address: Address) {
  const res = await call(a, 'POST', '/compliance/scenarios/execute', { scenarioId, address, credentials: [] });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { result: { status: string; result: { is_valid: boolean; reasons: string[] } } }[])[0]!.result;
}

beforeAll(async () => {
  chain = await startLocalChain();
  provider = (require('hardhat') as { network: { provider: EIP1193Provider } }).network.provider;
  s = await stack.deployIden3Stack(provider);
  stable = await s.deployStableV3Validator();
  linked = await s.deployLinkedValidator();
  [, alice, bob] = s.accounts as [Address, Address, Address];
  await provider.request({ method: 'hardhat_setBalance', params: [deployer, '0x56BC75E2D63100000'] } as never);
  app = await makeApp(env(), { logger });
}, 240_000);

afterAll(async () => {
  await app?.close();
  await chain?.stop();
});

describe('deploying an OnChainZKP scenario through the service', () => {
  it('sets the SigV2 request the script computes, under the contract\'s type-1 id; a wallet\'s proof makes execute valid', async () => {
    await createScenario(app, 'born-before-2002', [rule('born', 20020101)]);
    const res = await call(app, 'POST', '/compliance/scenarios/born-before-2002/deployments', {});
    expect(res.statusCode, res.body).toBe(202);
    const deployment = res.json() as { id: string; status: string; address: string; transactions: { actionName: string; status: string; txHash: string }[]; requests: { queryConfigurationId: string; requestId: string }[] };
    expect(res.headers.location).toBe(`/compliance/scenarios/born-before-2002/deployments/${deployment.id}`);
    expect(deployment).toMatchObject({ status: 'DeploymentStarted', address: s.verifier.toLowerCase(), transactions: [{ actionName: 'ScenarioDeploy', status: 'TxPosted' }] });
    const receipt = await client().getTransactionReceipt({ hash: deployment.transactions[0]!.txHash as Hex });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(deployer.toLowerCase());

    // The script's own computation of the request (js-sdk from the JSON-LD context), independent of the service's.
    const q = await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$lt!, 20020101);
    const params = stack.sigV2Params(q);
    const requestId = stack.typeOneRequestId(params, deployer);
    expect(deployment.requests).toEqual([{ queryConfigurationId: 'born', requestId: requestId.toString() }]);
    expect(await onChain(requestId)).toMatchObject({ validator: getAddress(s.sigV2Validator), params, creator: deployer });
    const input = await scenarioOf(app, 'born-before-2002');
    expect(input.queryConfigurations[0]!.query.requestId).toBe(requestId.toString());
    expect((await call(app, 'GET', res.headers.location as string)).json()).toEqual(deployment);

    await markDeployed(app, 'born-before-2002', deployment.id);
    await s.submit(alice, requestId, { kind: 'v2', queryHash: stack.queryHashV2(q) });
    expect((await execute(app, 'born-before-2002', alice))).toMatchObject({ status: 'valid', result: { is_valid: true, reasons: [] } });
    expect((await execute(app, 'born-before-2002', bob))).toMatchObject({ status: 'not-valid' });
  });

  it('sets a V3 request on the stable V3 validator and a linked multi-query group; src/chain\'s request check accepts each', async () => {
    await createScenario(app, 'v3-and-linked', [
      rule('born-v3', 20020101, { circuitId: 'credentialAtomicQueryV3', requestId: 1 }),
      rule('session', 20010101, { circuitId: 'credentialAtomicQueryV3', requestId: 4, params: { nullifierSessionId: 77 } }),
      rule('grouped', 20050101, { circuitId: 'credentialAtomicQueryV3', requestId: 2, groupId: 9 }),
      rule('after-1900', 19000101, { circuitId: 'linkedMultiQuery', requestId: 3, groupId: 9, operator: '$gt' }),
    ]);
    const res = await call(app, 'POST', '/compliance/scenarios/v3-and-linked/deployments');
    expect(res.statusCode, res.body).toBe(202);
    const { id, requests } = res.json() as { id: string; requests: { requestId: string }[] };

    const v3 = { ...(await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$lt!, 20020101)), circuitIds: ['credentialAtomicQueryV3OnChain'] };
    const grouped = { ...(await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$lt!, 20050101)), circuitIds: ['credentialAtomicQueryV3OnChain'], groupID: 9n };
    const after = await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$gt!, 19000101);
    const ids = requests.map((r) => BigInt(r.requestId));
    expect((await onChain(ids[0]!)).validator).toBe(getAddress(stable));
    expect((await onChain(ids[0]!)).params).toBe(stack.v3Params(v3));
    expect((await onChain(ids[2]!)).params).toBe(stack.v3Params(grouped));
    expect(await onChain(ids[3]!)).toMatchObject({ validator: getAddress(linked), params: stack.linkedParams([after], 9n) });
    expect(ids[3]).toBe(stack.typeOneRequestId(stack.linkedParams([after], 9n), deployer));

    await markDeployed(app, 'v3-and-linked', id);
    const input = await scenarioOf(app, 'v3-and-linked');
    const rules = input.queryConfigurations as never[];
    const deployments = input.smartContractDeployments as never[];
    // What execute compares: every rule matches its request (bob proved nothing, so not-valid, never error).
    const outcomes = await import('../../src/chain/index.js').then(({ evaluateOnChainRules }) =>
      evaluateOnChainRules(reader(), { queryConfigurations: rules, smartContractDeployments: deployments, address: bob }, check()));
    expect(outcomes.map((o) => [o.objectId, o.status])).toEqual([
      ['born-v3', 'not-valid'], ['session', 'not-valid'], ['grouped', 'not-valid'], ['after-1900', 'not-valid'],
    ]);
    await s.submit(alice, ids[0]!, { kind: 'v3', queryHash: stack.queryHashV3(v3), circuitId: SUBVERSION });
    const [born] = await import('../../src/chain/index.js').then(({ evaluateOnChainRules }) =>
      evaluateOnChainRules(reader(), { queryConfigurations: rules.slice(0, 1), smartContractDeployments: deployments, address: alice }, check()));
    expect(born).toMatchObject({ status: 'valid', is_valid: true });
  });

  it('a redeploy of changed rules is a new deployment; the rules keep the Deployed one\'s ids until supersede; DELETE retires', async () => {
    const unchanged = await call(app, 'POST', '/compliance/scenarios/born-before-2002/deployments');
    expect(unchanged.statusCode).toBe(409);
    // Two at once of the same rules: one deployment, the other refused.
    await createScenario(app, 'twice', [rule('born', 20110101)]);
    const both = await Promise.all([0, 1].map(() => call(app, 'POST', '/compliance/scenarios/twice/deployments')));
    expect(both.map((r) => r.statusCode).sort()).toEqual([202, 409]);
    expect((await scenarioOf(app, 'twice')).smartContractDeployments).toHaveLength(1);
    expect(unchanged.json().detail).toMatch(/deployed as they are already/);
    const before = await scenarioOf(app, 'born-before-2002');
    const patched = await call(app, 'PATCH', '/compliance/scenarios/born-before-2002', { input: { queryConfigurations: [{ ...before.queryConfigurations[0], query: { ...before.queryConfigurations[0]!.query, value: 20030101 } }] } });
    expect(patched.statusCode, patched.body).toBe(200);
    const res = await call(app, 'POST', '/compliance/scenarios/born-before-2002/deployments');
    expect(res.statusCode, res.body).toBe(202);
    const after = await scenarioOf(app, 'born-before-2002');
    expect(after.smartContractDeployments.map((d) => d.status)).toEqual(['Deployed', 'DeploymentStarted']);
    expect(after.queryConfigurations[0]!.query.requestId).toBe(before.queryConfigurations[0]!.query.requestId);
    const retired = await call(app, 'DELETE', `/compliance/scenarios/born-before-2002/deployments/${after.smartContractDeployments[0]!.id}`);
    expect(retired.statusCode, retired.body).toBe(200);
    expect(retired.json()).toMatchObject({ status: 'Deprecated' });
    const notYet = await call(app, 'DELETE', `/compliance/scenarios/born-before-2002/deployments/${after.smartContractDeployments[1]!.id}`);
    expect(notYet.statusCode).toBe(409);
  });

  it('the follower marks a deploy Deployed; after a PATCH and a redeploy, the new one Deployed, the old Deprecated, the rules carry the new ids, execute reads the new request', async () => {
    const followed = await makeApp({ ...env(), DATA_DIR: tempDir('scs-deploy-follow-'), CHAIN_CONFIRMATIONS: '2', CHAIN_FOLLOW_INTERVAL_MS: '100' }, { logger });
    try {
      const statuses = async () => (await scenarioOf(followed, 'followed')).smartContractDeployments.map((d) => d.status);
      await createScenario(followed, 'followed', [rule('born', 20120101)]);
      const first = await call(followed, 'POST', '/compliance/scenarios/followed/deployments');
      expect(first.statusCode, first.body).toBe(202);
      await chain.mine(2);
      await expect.poll(statuses, { timeout: 30_000, interval: 100 }).toEqual(['Deployed']);
      const oldId = (first.json() as { requests: { requestId: string }[] }).requests[0]!.requestId;
      const before = await scenarioOf(followed, 'followed');
      const patched = await call(followed, 'PATCH', '/compliance/scenarios/followed', { input: { queryConfigurations: [{ ...before.queryConfigurations[0], query: { ...before.queryConfigurations[0]!.query, value: 20130101 } }] } });
      expect(patched.statusCode, patched.body).toBe(200);
      const second = await call(followed, 'POST', '/compliance/scenarios/followed/deployments');
      expect(second.statusCode, second.body).toBe(202);
      const newId = (second.json() as { requests: { requestId: string }[] }).requests[0]!.requestId;
      expect(newId).not.toBe(oldId);
      await chain.mine(2);
      await expect.poll(statuses, { timeout: 30_000, interval: 100 }).toEqual(['Deprecated', 'Deployed']);
      expect((await scenarioOf(followed, 'followed')).queryConfigurations[0]!.query.requestId).toBe(newId);
      // Bob proved the old request only, alice the new one: execute reads the new one.
      const oldQuery = await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$lt!, 20120101);
      const newQuery = await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$lt!, 20130101);
      await s.submit(bob, BigInt(oldId), { kind: 'v2', queryHash: stack.queryHashV2(oldQuery) });
      await s.submit(alice, BigInt(newId), { kind: 'v2', queryHash: stack.queryHashV2(newQuery) });
      expect(await execute(followed, 'followed', alice)).toMatchObject({ status: 'valid', result: { is_valid: true } });
      expect(await execute(followed, 'followed', bob)).toMatchObject({ status: 'not-valid' });
    } finally {
      await followed.close();
    }
  });

  it('a send the verifier reverts (an unwhitelisted validator) is refused with the contract\'s error, and no transaction', async () => {
    const wallet = createWalletClient({ transport: custom(provider), account: s.owner });
    const whitelist = (functionName: string) => wallet.writeContract({ address: s.verifier, abi: universal.abi, functionName, args: [s.sigV2Validator], chain: null });
    await whitelist('removeValidatorFromWhitelist');
    try {
      await createScenario(app, 'unwhitelisted', [rule('born', 20040101)]);
      const nonce = await client().getTransactionCount({ address: deployer });
      const res = await call(app, 'POST', '/compliance/scenarios/unwhitelisted/deployments');
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: 'SCS_DEPLOY_REFUSED' });
      expect(res.json().detail).toMatch(/ValidatorIsNotWhitelisted/);
      expect(await client().getTransactionCount({ address: deployer })).toBe(nonce);
      expect((await scenarioOf(app, 'unwhitelisted')).smartContractDeployments).toEqual([]);
    } finally {
      await whitelist('addValidatorToWhitelist');
    }
  });

  it('a body names only the verifier and validators the configuration lists for its chain (422 naming the field, nothing sent)', async () => {
    await createScenario(app, 'allow-listed', [rule('born', 20180101)]);
    const nonce = await client().getTransactionCount({ address: deployer });
    const other = await call(app, 'POST', '/compliance/scenarios/allow-listed/deployments', { verifier: s.sigV2Validator });
    expect(other.statusCode, other.body).toBe(422);
    expect(other.json().detail).toMatch(/^body\.verifier .* is not the verifier CHAIN_VERIFIER_ADDRESS lists for eip155:31337/);
    const unlisted = await call(app, 'POST', '/compliance/scenarios/allow-listed/deployments', { validators: [s.sigV2Validator, s.v3Validator] });
    expect(unlisted.statusCode, unlisted.body).toBe(422);
    expect(unlisted.json().detail).toMatch(new RegExp(`^body\\.validators ${s.v3Validator} is not among CHAIN_VALIDATORS`, 'i'));
    expect(await client().getTransactionCount({ address: deployer })).toBe(nonce);
    const listed = await call(app, 'POST', '/compliance/scenarios/allow-listed/deployments', { verifier: s.verifier.toUpperCase().replace('0X', '0x'), validators: [s.sigV2Validator] });
    expect(listed.statusCode, listed.body).toBe(202);
  });

  it('a non-OnChainZKP scenario is refused (409)', async () => {
    const res = await call(app, 'POST', '/compliance/scenarios', { id: 'challenge', input: { name: 'c', type: 'ChallengeQuery', queryConfigurations: [{ id: 'q', query: { type: 'IDInformation', operator: '$noop' } }], smartContractDeployments: [] } });
    expect(res.statusCode, res.body).toBe(201);
    const refused = await call(app, 'POST', '/compliance/scenarios/challenge/deployments');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'SCS_NOT_ONCHAIN' });
  });

  it('without a key: 409 naming CHAIN_DEPLOYER_KEY', async () => {
    const keyless = await makeApp({ CHAIN_RPC_URLS: `eip155:31337=${chain.url}`, CHAIN_VERIFIER_ADDRESS: s.verifier });
    try {
      await createScenario(keyless, 'keyless', [rule('born', 20020101)]);
      const res = await call(keyless, 'POST', '/compliance/scenarios/keyless/deployments');
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json()).toMatchObject({ code: 'SCS_DEPLOYER_NOT_CONFIGURED' });
      expect(res.json().detail).toMatch(/CHAIN_DEPLOYER_KEY/);
    } finally {
      await keyless.close();
    }
  });

  it('a crash between storing the signed send and broadcasting it ends, after a restart, in exactly one transaction', async () => {
    await createScenario(app, 'crash', [rule('born', 20060101)]);
    await app.close();
    const nonce = await client().getTransactionCount({ address: deployer });
    const crashing = await makeApp(env(), { logger, beforeBroadcast: () => { throw new Error('killed before broadcast'); } });
    const res = await call(crashing, 'POST', '/compliance/scenarios/crash/deployments');
    expect(res.statusCode).toBe(500);
    await crashing.close();
    expect(await client().getTransactionCount({ address: deployer })).toBe(nonce);
    expect((await scenarioOf(app = await makeApp(env(), { logger }), 'crash')).smartContractDeployments).toHaveLength(1);
    expect(await client().getTransactionCount({ address: deployer })).toBe(nonce + 1);
    const [deployment] = (await scenarioOf(app, 'crash')).smartContractDeployments;
    expect(deployment!.transactions).toHaveLength(1);
    const tx = await client().getTransaction({ hash: deployment!.transactions[0]!.txHash as Hex });
    expect(tx.nonce).toBe(nonce);
    // A second restart sends nothing more.
    await app.close();
    app = await makeApp(env(), { logger });
    expect(await client().getTransactionCount({ address: deployer })).toBe(nonce + 1);
  });

  it('/health/ready lists the deployer when it cannot pay for one more deployment', async () => {
    await provider.request({ method: 'hardhat_setBalance', params: [deployer, '0x1'] } as never);
    const poor = await makeApp(env(), { logger });
    try {
      const res = await poor.inject({ method: 'GET', url: '/health/ready' });
      answers.push(res.body);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'ok', details: { deployers: [{ chain: 'eip155:31337', address: deployer, balanceWei: '1' }] } });
    } finally {
      await poor.close();
      await provider.request({ method: 'hardhat_setBalance', params: [deployer, '0x56BC75E2D63100000'] } as never);
    }
  });

  it('the deployer key appears in no log line, answer or stored row', () => {
    const bare = KEY.slice(2).toLowerCase();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.filter((l) => l.toLowerCase().includes(bare))).toEqual([]);
    expect(answers.filter((a) => a.toLowerCase().includes(bare))).toEqual([]);
    const files = fs.readdirSync(dataDir).map((f) => fs.readFileSync(path.join(dataDir, f)));
    for (const bytes of files) {
      expect(bytes.includes(Buffer.from(bare))).toBe(false);
      expect(bytes.includes(Buffer.from(bare.toUpperCase()))).toBe(false);
      expect(bytes.includes(Buffer.from(bare, 'hex'))).toBe(false);
    }
  });
});

describe('the deployment service: stuck transactions and supersede', () => {
  let store: Store;
  let service: DeploymentService;
  let clock = Date.now();
  let config: ReturnType<typeof loadConfig>;
  let recorder: DeploymentRecorder;
  let serviceOptions: () => ConstructorParameters<typeof DeploymentService>[0];
  const access = accessFor('*');
  const scenario = (value: number) => ({ name: 'n', type: 'OnChainZKP' as const, queryConfigurations: [rule('born', value)], smartContractDeployments: [] });

  beforeAll(async () => {
    config = loadConfig({ ...env(), DATA_DIR: tempDir('scs-deploy-service-'), CHAIN_REPLACE_AFTER_MS: '60000', CHAIN_CONFIRMATIONS: '1' });
    store = await openStore(config.database);
    const plans = new PlanCache(typeDeclarations);
    recorder = new DeploymentRecorder({ store, plans, now: () => clock });
    serviceOptions = () => ({
      store, deploy: config.deploy, chains: config.chains, plans, now: () => clock,
      requests: { documentLoader: createDocumentLoader({}) }, recorder,
    });
    service = new DeploymentService(serviceOptions());
  });
  afterAll(async () => store?.close());

  it('replaces a transaction pending past CHAIN_REPLACE_AFTER_MS with the same nonce and a higher fee; the replacement is mined', async () => {
    await store.create('stuck', scenario(20070101) as never, new Date(clock).toISOString());
    await provider.request({ method: 'evm_setAutomine', params: [false] } as never);
    try {
      const nonce = await client().getTransactionCount({ address: deployer });
      const { deployment } = await service.deploy(access, 'stuck', {});
      const first = deployment.transactions![0]!.txHash as Hex;
      expect(await service.replaceStuck()).toBe(0); // not pending long enough yet
      clock += 60_001;
      expect(await service.replaceStuck()).toBe(1);
      const [row] = await store.find('stuck', undefined);
      const txs = row!.input.smartContractDeployments[0]!.transactions!;
      expect(txs.map((t) => [t.id, t.status])).toEqual([['tx-1', 'TxPosted'], ['tx-2', 'TxPosted']]);
      expect(txs[0]!.txHash).toBe(first);
      // The node took the replacement in the first one's place: the same nonce, a higher fee.
      await expect(client().getTransaction({ hash: first })).rejects.toThrow(/could not be found/);
      expect((await client().getTransaction({ hash: txs[1]!.txHash as Hex })).nonce).toBe(nonce);
      await provider.request({ method: 'evm_mine', params: [] } as never);
      expect((await client().getTransactionReceipt({ hash: txs[1]!.txHash as Hex })).status).toBe('success');
      await expect(client().getTransactionReceipt({ hash: first })).rejects.toThrow(/could not be found/);
      clock += 60_001;
      expect(await service.replaceStuck()).toBe(0); // its nonce is used: closed, never replaced again
      expect(await store.openSends()).toEqual([]);
    } finally {
      await provider.request({ method: 'evm_setAutomine', params: [true] } as never);
    }
  });

  it('a deployment whose transaction was replaced (tx-1 loses its nonce to tx-2) ends Deployed, tx-1 TxFailed as dropped', async () => {
    const follower = new DeploymentFollower({
      store, recorder, settings: config.chains, reader: await chainReaderFor(config.chains), check: check(), now: () => clock,
      log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
    });
    await store.create('replaced', scenario(20140101) as never, new Date(clock).toISOString());
    await provider.request({ method: 'evm_setAutomine', params: [false] } as never);
    try {
      await service.deploy(access, 'replaced', {});
      await follower.poll(); // sees tx-1 pending: its sender and nonce
      clock += 60_001;
      expect(await service.replaceStuck()).toBe(1);
      await provider.request({ method: 'evm_mine', params: [] } as never);
    } finally {
      await provider.request({ method: 'evm_setAutomine', params: [true] } as never);
    }
    const deployment = async () => (await store.find('replaced', undefined))[0]!.input.smartContractDeployments[0]!;
    for (let i = 0; i < 6 && (await deployment()).status === 'DeploymentStarted'; i++) {
      await chain.mine(1);
      await follower.poll();
    }
    const d = await deployment();
    expect(d.transactions!.map((t) => [t.id, t.status])).toEqual([['tx-1', 'TxFailed'], ['tx-2', 'TxConfirmed']]);
    expect(d.transactions![0]!.errorMessage).toMatch(/^dropped: sender .* has used nonce/);
    expect(d).toMatchObject({ status: 'Deployed' });
    await follower.stop();
  });

  it('two deployments in flight, transactions of one action: the one dropped for real fails its deployment, the replaced one (known from chain_sends only) does not', async () => {
    const follower = new DeploymentFollower({
      store, recorder, settings: config.chains, reader: await chainReaderFor(config.chains), check: check(), now: () => clock,
      log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
    });
    await store.create('lost-replacement', scenario(20320101) as never, new Date(clock).toISOString());
    await store.create('lost-for-real', scenario(20330101) as never, new Date(clock).toISOString());
    // B: the service's transaction, then a second ScenarioDeploy recorded as a PATCH would, that no node ever held.
    const { deployment: b } = await service.deploy(access, 'lost-for-real', {});
    const [rowB] = await store.find('lost-for-real', undefined);
    const never = `0x${randomBytes(32).toString('hex')}`;
    await service.recordDeployment({ id: 'lost-for-real', projectId: null, seq: rowB!.seq }, b.id, (input) => ({
      ...input,
      smartContractDeployments: input.smartContractDeployments.map((d) => (d.id !== b.id
        ? d
        : {
            ...d, transactions: [...d.transactions!, { id: 'tx-2', actionName: 'ScenarioDeploy', status: 'TxPosted', txHash: never, smartContractDeploymentId: b.id }],
          })),
    }));
    // A: tx-1 replaced by tx-2 (same nonce) before the follower ever saw it: only chain_sends knows their nonce.
    await provider.request({ method: 'evm_setAutomine', params: [false] } as never);
    try {
      await service.deploy(access, 'lost-replacement', {});
      clock += 60_001;
      expect(await service.replaceStuck()).toBe(1);
      await provider.request({ method: 'evm_mine', params: [] } as never);
    } finally {
      await provider.request({ method: 'evm_setAutomine', params: [true] } as never);
    }
    const deployment = async (id: string) => (await store.find(id, undefined))[0]!.input.smartContractDeployments[0]!;
    for (let i = 0; i < 8 && ((await deployment('lost-replacement')).status === 'DeploymentStarted' || (await deployment('lost-for-real')).status === 'DeploymentStarted'); i++) {
      await chain.mine(1);
      clock += config.chains.txDropAfterMs;
      await follower.poll();
    }
    const a = await deployment('lost-replacement');
    expect(a.transactions!.map((t) => [t.id, t.status])).toEqual([['tx-1', 'TxFailed'], ['tx-2', 'TxConfirmed']]);
    expect(a.transactions![0]!.errorMessage).toMatch(/^dropped:/);
    expect(a).toMatchObject({ status: 'Deployed' });
    const lost = await deployment('lost-for-real');
    expect(lost.transactions!.map((t) => [t.id, t.status])).toEqual([['tx-1', 'TxConfirmed'], ['tx-2', 'TxFailed']]);
    expect(lost).toMatchObject({ status: 'DeploymentFailed' });
    expect(lost.errorMessage).toMatch(/^transaction "tx-2" failed: dropped: neither mined nor pending/);
    await follower.stop();
  });

  it('tx-1 (setRequests, nonce n) dropped because a foreign transaction took n, tx-2 (the same call, n+1) confirmed: the deployment fails', async () => {
    const follower = new DeploymentFollower({
      store, recorder, settings: config.chains, reader: await chainReaderFor(config.chains), check: check(), now: () => clock,
      log: pino({ level: 'silent' }) as unknown as FastifyBaseLogger,
    });
    const row = await store.create('foreign-nonce', scenario(20350101) as never, new Date(clock).toISOString());
    const key = privateKeyToAccount(KEY);
    const sendRaw = async (tx: { nonce: number; to: Address; data: Hex; gas: bigint; maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }) =>
      provider.request({ method: 'eth_sendRawTransaction', params: [await key.signTransaction({ type: 'eip1559', chainId: chain.chainId, ...tx })] } as never) as Promise<Hex>;
    let deploymentId: string;
    await provider.request({ method: 'evm_setAutomine', params: [false] } as never);
    try {
      const { deployment } = await service.deploy(access, 'foreign-nonce', {});
      deploymentId = deployment.id;
      const tx1 = await client().getTransaction({ hash: deployment.transactions![0]!.txHash as Hex });
      const fees = { maxFeePerGas: tx1.maxFeePerGas!, maxPriorityFeePerGas: tx1.maxPriorityFeePerGas! };
      // Another holder of the key: a transfer takes n with twice the fee (the node drops tx-1), then the same setRequests
      // at n+1, appended as tx-2 as a PATCH would. The requests end on chain as the rules say; only tx-1's nonce differs.
      await sendRaw({ nonce: tx1.nonce, to: deployer, data: '0x', gas: 21_000n, maxFeePerGas: 2n * fees.maxFeePerGas, maxPriorityFeePerGas: 2n * fees.maxPriorityFeePerGas + 1n });
      const tx2 = await sendRaw({ nonce: tx1.nonce + 1, to: tx1.to!, data: tx1.input, gas: tx1.gas, ...fees });
      await service.recordDeployment({ id: 'foreign-nonce', projectId: null, seq: row!.seq }, deployment.id, (input) => ({
        ...input,
        smartContractDeployments: input.smartContractDeployments.map((d) => (d.id !== deployment.id
          ? d
          : { ...d, transactions: [...d.transactions!, { id: 'tx-2', actionName: 'ScenarioDeploy', status: 'TxPosted', txHash: tx2, smartContractDeploymentId: d.id }] })),
      }));
      await provider.request({ method: 'evm_mine', params: [] } as never);
      expect((await client().getTransactionReceipt({ hash: tx2 })).status).toBe('success');
      await expect(client().getTransactionReceipt({ hash: tx1.hash })).rejects.toThrow(/could not be found/);
    } finally {
      await provider.request({ method: 'evm_setAutomine', params: [true] } as never);
    }
    const deployment = async () => (await store.find('foreign-nonce', undefined))[0]!.input.smartContractDeployments.find((d) => d.id === deploymentId)!;
    for (let i = 0; i < 8 && (await deployment()).status === 'DeploymentStarted'; i++) {
      await chain.mine(1);
      clock += config.chains.txDropAfterMs;
      await follower.poll();
    }
    const d = await deployment();
    expect(d.transactions!.map((t) => [t.id, t.status])).toEqual([['tx-1', 'TxFailed'], ['tx-2', 'TxConfirmed']]);
    expect(d).toMatchObject({ status: 'DeploymentFailed' });
    expect(d.errorMessage).toMatch(/^transaction "tx-1" failed: dropped/);
    await follower.stop();
  });

  it('a deploy whose same call another instance sent, recorded and saw mined after this one read the scenario: 409, nothing sent', async () => {
    const proxy = await stallingProxy();
    try {
      await store.create('mined-meanwhile', scenario(20360101) as never, new Date(clock).toISOString());
      // This instance reaches the chain through the proxy, which holds its nonce read: the last call before its reservation.
      const viaProxy = loadConfig({ ...env(), CHAIN_RPC_URLS: `eip155:31337=${proxy.url}`, CHAIN_READ_TIMEOUT_MS: '120000' });
      const late = new DeploymentService({ ...serviceOptions(), chains: viaProxy.chains });
      proxy.stalled = new Set(['eth_getTransactionCount']);
      const answer = late.deploy(access, 'mined-meanwhile', {}).then(() => undefined, (err: unknown) => err as { statusCode: number; message: string });
      await expect.poll(() => proxy.methods.includes('eth_getTransactionCount'), { timeout: 60_000, interval: 50 }).toBe(true);
      expect(proxy.methods).toEqual(expect.arrayContaining(['eth_call', 'eth_estimateGas', 'eth_getBalance']));
      // The other instance: sent and recorded (automine: mined at once), then closed as mined by replaceStuck.
      const { deployment } = await service.deploy(access, 'mined-meanwhile', {});
      await service.replaceStuck();
      const [sent] = await store.sendsWithHashes('eip155:31337', [deployment.transactions![0]!.txHash!.toLowerCase()]);
      expect(sent).toMatchObject({ state: 'mined' });
      const nonce = await client().getTransactionCount({ address: deployer });
      proxy.stalled = new Set();
      proxy.release();
      const refused = await answer;
      expect(refused).toMatchObject({ statusCode: 409 });
      expect(refused!.message).toBe(`Scenario mined-meanwhile's rules are being deployed already: deployment "${deployment.id}" (its transaction is mined)`);
      expect(proxy.methods).not.toContain('eth_sendRawTransaction');
      expect(await client().getTransactionCount({ address: deployer })).toBe(nonce);
      expect((await store.find('mined-meanwhile', undefined))[0]!.input.smartContractDeployments.map((d) => d.id)).toEqual([deployment.id]);
    } finally {
      await proxy.close();
    }
  });

  it('refuses, before taking a nonce, a deploy whose gas is above CHAIN_DEPLOY_MAX_GAS (422 naming it)', async () => {
    await store.create('too-much-gas', scenario(20150101) as never, new Date(clock).toISOString());
    const capped = new DeploymentService({ ...serviceOptions(), deploy: { ...config.deploy, maxGas: 50_000n } });
    const nonce = await client().getTransactionCount({ address: deployer });
    const open = (await store.openSends()).length;
    const refused = await capped.deploy(access, 'too-much-gas', {}).then(() => undefined, (err: unknown) => err as { statusCode: number; code: string; message: string });
    expect(refused).toMatchObject({ statusCode: 422, code: 'SCS_DEPLOY_REFUSED' });
    expect(refused!.message).toMatch(/above CHAIN_DEPLOY_MAX_GAS \(50000\)/);
    expect(await client().getTransactionCount({ address: deployer })).toBe(nonce);
    expect(await store.openSends()).toHaveLength(open);
  });

  it('a transaction the node refuses for good (insufficient funds at broadcast) answers 422, a transfer fills its nonce, later deploys are mined', async () => {
    await store.create('refused', scenario(20160101) as never, new Date(clock).toISOString());
    await store.create('after-refused', scenario(20170101) as never, new Date(clock).toISOString());
    const setBalance = (wei: string) => provider.request({ method: 'hardhat_setBalance', params: [deployer, wei] } as never);
    let broadcasts = 0;
    // The first broadcast finds the deployer penniless (drained after the checks), the filler finds it funded again.
    const draining = new DeploymentService({ ...serviceOptions(), beforeBroadcast: () => (broadcasts++ === 0 ? setBalance('0x1') : setBalance('0x56BC75E2D63100000')) });
    const nonce = await client().getTransactionCount({ address: deployer });
    try {
      const refused = await draining.deploy(access, 'refused', {}).then(() => undefined, (err: unknown) => err as { statusCode: number; message: string });
      expect(refused).toMatchObject({ statusCode: 422 });
      expect(refused!.message).toMatch(/refused the deploy transaction: .*(funds|balance)/i);
    } finally {
      await setBalance('0x56BC75E2D63100000');
    }
    expect((await store.find('refused', undefined))[0]!.input.smartContractDeployments).toEqual([]);
    // Its nonce went to a 21,000-gas transfer to itself.
    expect(await client().getTransactionCount({ address: deployer })).toBe(nonce + 1);
    const block = await client().getBlock({ blockTag: 'latest', includeTransactions: true });
    expect(block.transactions.map((t) => [t.from.toLowerCase(), t.to?.toLowerCase(), t.nonce, t.gas, t.value])).toEqual([[deployer.toLowerCase(), deployer.toLowerCase(), nonce, 21_000n, 0n]]);
    const { deployment } = await service.deploy(access, 'after-refused', {});
    const receipt = await client().getTransactionReceipt({ hash: deployment.transactions![0]!.txHash as Hex });
    expect(receipt.status).toBe('success');
    expect((await client().getTransaction({ hash: receipt.transactionHash })).nonce).toBe(nonce + 1);
  });

  it('logs replaceStuck\'s and recover\'s failures without the RPC URL (a secret in its path and credentials)', async () => {
    await store.create('secret-url', scenario(20190101) as never, new Date(clock).toISOString());
    await provider.request({ method: 'evm_setAutomine', params: [false] } as never);
    try {
      await service.deploy(access, 'secret-url', {}); // pending: an open send on the chain
    } finally {
      await provider.request({ method: 'evm_setAutomine', params: [true] } as never);
    }
    const logged: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => { logged.push(line); } }) as unknown as FastifyBaseLogger;
    const dead = loadConfig({ ...env(), CHAIN_RPC_URLS: 'eip155:31337=http://scs-user:PASSWORD123@127.0.0.1:9/v3/PATHSECRET456' });
    const unreachable = new DeploymentService({ ...serviceOptions(), chains: dead.chains, log });
    clock += 60_001;
    expect(await unreachable.replaceStuck()).toBe(0);
    expect(await unreachable.recover(0)).toBe(0);
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.filter((l) => /PATHSECRET456|PASSWORD123|scs-user|127\.0\.0\.1:9/.test(l))).toEqual([]);
    await chain.mine(1);
  });

  it('does not replace a stuck transaction when the fee cap leaves less than a tenth more, and says so once', async () => {
    await store.create('near-cap', scenario(20200101) as never, new Date(clock).toISOString());
    await provider.request({ method: 'evm_setAutomine', params: [false] } as never);
    try {
      const { deployment } = await service.deploy(access, 'near-cap', {});
      const sent = await client().getTransaction({ hash: deployment.transactions![0]!.txHash as Hex });
      const logged: string[] = [];
      const log = pino({ level: 'warn' }, { write: (line: string) => { logged.push(line); } }) as unknown as FastifyBaseLogger;
      const capped = new DeploymentService({ ...serviceOptions(), log, deploy: { ...config.deploy, maxFeePerGas: (sent.maxFeePerGas! * 105n) / 100n } });
      clock += 60_001;
      expect(await capped.replaceStuck()).toBe(0);
      expect(await capped.replaceStuck()).toBe(0);
      expect(logged.filter((l) => l.includes('less than the tenth more'))).toHaveLength(1);
      expect((await store.find('near-cap', undefined))[0]!.input.smartContractDeployments[0]!.transactions).toHaveLength(1);
    } finally {
      await provider.request({ method: 'evm_setAutomine', params: [true] } as never);
      await chain.mine(1);
    }
  });

  it('after a key rotation, an open send of the old sender is neither signed nor replaced with the new key (said once)', async () => {
    const old = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    const request = JSON.stringify({ to: s.verifier, data: '0x', gas: '21000', maxFeePerGas: '1000000000', maxPriorityFeePerGas: '1' });
    const orphan = await store.reserveSend({ id: 'rotated-send', chain: 'eip155:31337', sender: old, request, purpose: '{"fills":"none"}', createdAt: new Date(clock).toISOString() }, 0);
    const logged: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => { logged.push(line); } }) as unknown as FastifyBaseLogger;
    const rotated = new DeploymentService({ ...serviceOptions(), log });
    const nonce = await client().getTransactionCount({ address: deployer });
    expect(await rotated.recover(0)).toBe(0);
    expect(await rotated.recover(0)).toBe(0);
    expect(await client().getTransactionCount({ address: deployer })).toBe(nonce);
    expect((await store.openSends()).find((x) => x.id === orphan.id)).toMatchObject({ state: 'reserved', raw: null });
    expect(logged.filter((l) => l.includes('another sender'))).toHaveLength(1);
    await store.moveSend(orphan.id, ['reserved'], 'failed', new Date(clock).toISOString());
  });

  it('supersede: once the new deployment is Deployed, the rules take its requestIds and the old one is Deprecated', async () => {
    const row = await store.create('superseded', scenario(20080101) as never, new Date(clock).toISOString());
    const target = { id: 'superseded', projectId: null, seq: row!.seq };
    const deployed = (id: string) => (input: { smartContractDeployments: { id: string; status?: string }[] }) =>
      ({ ...input, smartContractDeployments: input.smartContractDeployments.map((d) => (d.id === id ? { ...d, status: 'Deployed' } : d)) }) as never;
    const one = (await service.deploy(access, 'superseded', {})).deployment;
    await service.recordDeployment(target, one.id, deployed(one.id));
    await service.recordDeployment(target, one.id, (input) => ({ ...input, queryConfigurations: [{ ...input.queryConfigurations[0]!, query: { ...input.queryConfigurations[0]!.query, value: 20090101 } }] }));
    const two = (await service.deploy(access, 'superseded', {})).deployment;
    const firstId = one.requests![0]!.requestId;
    expect((await store.find('superseded', undefined))[0]!.input.queryConfigurations[0]!.query.requestId).toBe(firstId);
    await service.recordDeployment(target, two.id, deployed(two.id));
    const after = await service.supersede(target, two.id);
    expect(after!.input.queryConfigurations[0]!.query.requestId).toBe(two.requests![0]!.requestId);
    expect(after!.input.smartContractDeployments.map((d) => [d.id, d.status])).toEqual([[one.id, 'Deprecated'], [two.id, 'Deployed']]);
  });
});

describe.skipIf(!pgAvailable)('two instances on one PostgreSQL', () => {
  const schema = freshSchema('deploy');
  afterAll(async () => dropSchema(schema));

  it('deploying at once never take one nonce twice: every transaction is mined', async () => {
    const pgEnv = { ...env(), DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
    const [one, two] = [await makeApp(pgEnv, { logger }), await makeApp(pgEnv, { logger })];
    try {
      const ids = ['pg-a', 'pg-b', 'pg-c', 'pg-d'];
      for (const [i, id] of ids.entries()) await createScenario(one, id, [rule('born', 20100101 + i)]);
      const results = await Promise.all(ids.map((id, i) => call(i % 2 === 0 ? one : two, 'POST', `/compliance/scenarios/${id}/deployments`)));
      expect(results.map((r) => r.statusCode), results.map((r) => r.body).join('\n')).toEqual([202, 202, 202, 202]);
      const hashes = results.map((r) => (r.json() as { transactions: { txHash: Hex }[] }).transactions[0]!.txHash);
      const txs = await Promise.all(hashes.map((hash) => client().waitForTransactionReceipt({ hash }).then(() => client().getTransaction({ hash }))));
      expect(new Set(txs.map((t) => t.nonce)).size).toBe(4);
      // Every row of every table of the schema, dumped: the key is in none.
      const pgClient = new pg.Client({ connectionString: PG_URL });
      await pgClient.connect();
      try {
        const tables = await pgClient.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [schema]);
        expect(tables.rows.map((t) => t.table_name)).toContain('chain_sends');
        for (const { table_name: table } of tables.rows) {
          const dump = JSON.stringify((await pgClient.query(`SELECT * FROM ${schema}.${table}`)).rows).toLowerCase();
          expect(dump.includes(KEY.slice(2).toLowerCase()), table).toBe(false);
        }
      } finally {
        await pgClient.end();
      }
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('concurrent deploys of one scenario on two instances, and retried POSTs (with and without Idempotency-Key): one transaction, one deployment', async () => {
    const pgEnv = { ...env(), DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
    const [one, two] = [await makeApp(pgEnv, { logger }), await makeApp(pgEnv, { logger })];
    try {
      await createScenario(one, 'pg-same', [rule('born', 20340101)]);
      const nonce = await client().getTransactionCount({ address: deployer });
      const post = (a: FastifyInstance, key?: string) => a.inject({
        method: 'POST', url: '/compliance/scenarios/pg-same/deployments', headers: { ...auth, ...(key !== undefined && { 'idempotency-key': key }) },
      });
      const results = await Promise.all([post(one), post(two), post(one, 'retry-1'), post(two, 'retry-1'), post(two)]);
      const statuses = results.map((r) => r.statusCode);
      expect(statuses.filter((c) => c === 202), results.map((r) => r.body).join('\n')).toHaveLength(1);
      // The others: 409 (deployed, or on its way), or 422 when the chain holds the requests already (mined before their estimate).
      const refused = (r: { statusCode: number; body: string }) => r.statusCode === 409 || (r.statusCode === 422 && /RequestIdAlreadyExists/.test(r.body));
      for (const r of results.filter((x) => x.statusCode !== 202)) expect(refused(r), r.body).toBe(true);
      // Retried once the first is recorded, with and without its key: still one.
      for (const retry of [await post(one, 'retry-1'), await post(two, 'retry-1'), await post(two)]) expect(refused(retry), retry.body).toBe(true);
      const deployments = (await scenarioOf(one, 'pg-same')).smartContractDeployments;
      expect(deployments).toHaveLength(1);
      expect(deployments[0]!.transactions).toHaveLength(1);
      await client().waitForTransactionReceipt({ hash: deployments[0]!.transactions[0]!.txHash as Hex });
      expect(await client().getTransactionCount({ address: deployer })).toBe(nonce + 1);
    } finally {
      await one.close();
      await two.close();
    }
  });
});

/**
 * An RPC proxy on 127.0.0.1 in front of the node that holds the calls of the methods in `stalled` unanswered (or, with
 * `mode` 'close', closes their connection): a node that times out or does not answer. A method in `errors` is answered
 * that JSON-RPC error with that HTTP status instead (a rate limit, a failing gateway, a busy node); `release()` sends
 * the held calls on to the node.
 */
async function stallingProxy() {
  const held = new Map<http.ServerResponse, string>();
  const p = {
    stalled: new Set<string>(), mode: 'stall' as 'stall' | 'close', methods: [] as string[], url: '', close: async () => {},
    errors: new Map<string, { status: number; code: number; message: string }>(), release: () => {},
  };
  const forward = (body: string, res: http.ServerResponse) => {
    void fetch(chain.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      .then(async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const calls = [JSON.parse(body)].flat() as { id: number; method: string }[];
      const methods = calls.map((c) => c.method);
      p.methods.push(...methods);
      const error = methods.map((m) => p.errors.get(m)).find((e) => e !== undefined);
      if (error !== undefined) {
        const { status, ...rpc } = error;
        const answers = calls.map((c) => ({ jsonrpc: '2.0', id: c.id, error: rpc }));
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(JSON.parse(body)) ? answers : answers[0]));
        return;
      }
      if (methods.some((m) => p.stalled.has(m))) {
        if (p.mode === 'close') req.socket.destroy();
        else held.set(res, body);
        return;
      }
      forward(body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  p.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  p.release = () => {
    for (const [res, body] of held) forward(body, res);
    held.clear();
  };
  p.close = () => new Promise<void>((resolve) => {
    for (const res of held.keys()) res.socket?.destroy();
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return p;
}

describe('a chain that times out or does not answer during a deploy', () => {
  let proxy: Awaited<ReturnType<typeof stallingProxy>>;
  let slow: FastifyInstance;
  let patient: FastifyInstance;
  let stalls = 0;
  beforeAll(async () => {
    proxy = await stallingProxy();
    const proxied = { ...env(), DATA_DIR: tempDir('scs-deploy-stall-'), CHAIN_RPC_URLS: `eip155:31337=${proxy.url}` };
    // 1 s, not less: every call before the stalled one must still answer in time, and a loaded test machine has kept
    // Hardhat's estimate past 200 ms (the broadcast test then answered 503 instead of 202).
    slow = await makeApp({ ...proxied, CHAIN_READ_TIMEOUT_MS: '1000' }, { logger });
    // A second instance on the same database that waits as long as configured by default: what it is asked does not
    // depend on Hardhat answering within 1 s on a loaded machine.
    patient = await makeApp(proxied, { logger });
  });
  afterAll(async () => {
    await slow?.close();
    await patient?.close();
    await proxy?.close();
  });

  /** `a` answers the deploy 503 while the proxy misbehaves as `setUp` says; nothing is sent or stored; asked again, 202. */
  async function unavailableThenDeployed(a: FastifyInstance, id: string, method: string, setUp: () => void) {
    await createScenario(patient, id, [rule('born', 20300101 + stalls++)]);
    const nonce = await client().getTransactionCount({ address: deployer });
    proxy.methods = [];
    setUp();
    let res: Awaited<ReturnType<typeof call>>;
    try {
      res = await call(a, 'POST', `/compliance/scenarios/${id}/deployments`);
    } finally {
      proxy.stalled = new Set();
      proxy.errors = new Map();
    }
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toMatchObject({ status: 503, code: 'SCS_CHAIN_UNAVAILABLE' });
    expect(res.json().detail).toMatch(/^Chain eip155:31337 did not answer the deploy/);
    expect(res.body).not.toContain(proxy.url.replace('http://', ''));
    expect(proxy.methods).toContain(method);
    expect(proxy.methods).not.toContain('eth_sendRawTransaction');
    expect(await client().getTransactionCount({ address: deployer })).toBe(nonce);
    expect((await scenarioOf(patient, id)).smartContractDeployments).toEqual([]);
    // Asked again once the chain answers, the deploy goes through.
    const again = await call(patient, 'POST', `/compliance/scenarios/${id}/deployments`);
    expect(again.statusCode, again.body).toBe(202);
    return res.json() as { detail: string };
  }

  // The validators' circuits (eth_call), the estimate, the fees and gas limit (the latest block), the balance, the nonce.
  it.each([
    ['eth_call', 'stall'], ['eth_estimateGas', 'stall'], ['eth_getBlockByNumber', 'stall'], ['eth_getBalance', 'stall'],
    ['eth_getTransactionCount', 'stall'], ['eth_estimateGas', 'close'], ['eth_getBalance', 'close'],
  ] as const)('%s (%s): 503 SCS_CHAIN_UNAVAILABLE with Retry-After, nothing sent or recorded', async (method, mode) => {
    await unavailableThenDeployed(slow, `stall-${method}-${mode}`.replace(/_/g, '-'), method, () => {
      proxy.stalled = new Set([method]);
      proxy.mode = mode;
    });
  });

  // A node that answers, but not about the deploy: no evidence of a revert, so no refusal for good (422).
  it.each([
    ['eth_estimateGas', 429, -32005, 'limit exceeded'],
    ['eth_estimateGas', 503, -32603, 'internal error'],
    ['eth_estimateGas', 200, -32000, 'execution aborted (timeout = 5s)'],
    ['eth_estimateGas', 200, -32000, 'header not found'],
    ['eth_estimateGas', 200, -32007, '100/second request limit reached'],
    ['eth_call', 429, -32005, 'limit exceeded'],
    ['eth_call', 502, -32603, 'bad gateway'],
    ['eth_call', 200, -32000, 'execution aborted (timeout = 5s)'],
  ] as const)('%s answered HTTP %i with error %i "%s": 503 SCS_CHAIN_UNAVAILABLE in the node\'s words, not a refusal', async (method, status, code, message) => {
    const id = `busy-${method}-${status}-${-code}-${stalls}`.replace(/_/g, '-');
    const { detail } = await unavailableThenDeployed(patient, id, method, () => {
      proxy.errors = new Map([[method, { status, code, message }]]);
    });
    expect(detail).toContain(message);
    expect(detail).not.toMatch(/revert|not an iden3/i);
  });

  it('a broadcast the node does not answer: the stored transaction is the deployment\'s (202), a retried POST signs no second one (409)', async () => {
    await createScenario(slow, 'stall-broadcast', [rule('born', 20310101)]);
    proxy.stalled = new Set(['eth_sendRawTransaction']);
    proxy.mode = 'stall';
    try {
      const res = await call(slow, 'POST', '/compliance/scenarios/stall-broadcast/deployments');
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxPosted' }] });
      const again = await call(slow, 'POST', '/compliance/scenarios/stall-broadcast/deployments');
      expect(again.statusCode, again.body).toBe(409);
      expect((await scenarioOf(slow, 'stall-broadcast')).smartContractDeployments).toHaveLength(1);
    } finally {
      proxy.stalled = new Set();
    }
  });
});
