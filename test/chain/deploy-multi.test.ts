/**
 * A deployment of several proofs at once on a local Hardhat node with the real iden3 stack (@iden3/contracts 3.4.0,
 * scripts/iden3-stack.mjs; Groth16 stubbed): setRequests, then setMultiRequest as its own transaction, both recorded
 * in the deployment; the follower marks it Deployed only when the verifier holds the rules' requests and their
 * multi-request. Encodings follow the contract's side where iden3's libraries and it could differ: the request id is
 * VerifierLib.checkRequestIdCorrectness's, the multi-request id VerifierLib.setMultiRequest's keccak256 (the script
 * computes both independently, as @iden3/contracts' own tests do); the params are js-sdk's query hashes.
 */
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import {
  createPublicClient, custom, decodeFunctionData, encodePacked, getAddress, keccak256, type Abi, type Address, type EIP1193Provider, type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ID_INFORMATION_CONTEXT_URL } from '../../src/jsonld/urls.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { auth, makeApp, tempDir } from '../helpers.js';
import { dropSchema, freshSchema, pgAvailable, PG_URL } from '../pg.js';
import { ID_INFORMATION, stack, type Stack } from './deploy-stack.js';
import { startLocalChain, type LocalChain } from './evm.js';

const require = createRequire(import.meta.url);
const universal = require('@iden3/contracts/build/contracts/UniversalVerifier.json') as { abi: Abi };

const { OPERATORS } = stack;
const ATTRIBUTE = 'personalData.birthDate';
const SUBVERSION = 'credentialAtomicQueryV3OnChain-16-16-64-16-32';
const GROUP = 9;

let chain: LocalChain;
let provider: EIP1193Provider;
let s: Stack;
let stable: Address;
let linked: Address;
/** A second stable V3 validator: the same circuit, so the same params and request ids as `stable`'s. */
let otherStable: Address;
let alice: Address;
let bob: Address;
const KEY = generatePrivateKey();
const deployer = privateKeyToAccount(KEY).address;
let app: FastifyInstance;

const rule = (id: string, value: number, extra: Record<string, unknown> = {}) => ({
  id, query: { type: 'IDInformation', context: ID_INFORMATION_CONTEXT_URL, requestId: 1, attribute: ATTRIBUTE, operator: '$lt', value, circuitId: 'credentialAtomicQueryV3', ...extra },
});
/**
 * A V3 rule alone, and a linked multi-query rule: a V3 query and a linkedMultiQuery one sharing a groupId. Group ids
 * are the verifier's, not a scenario's (GroupIdAlreadyExists): each scenario here takes its own.
 */
const rules = (after: number, group: number) => [
  rule('born-v3', 20020101 + group),
  rule('grouped', 20050101, { requestId: 2, groupId: group }),
  rule('after', after, { requestId: 3, groupId: group, circuitId: 'linkedMultiQuery', operator: '$gt' }),
];

interface Deployment {
  id: string; status: string; errorMessage?: string;
  transactions: { id: string; actionName: string; status: string; txHash: string }[];
  requests: { queryConfigurationId: string; requestId: string }[];
  multiRequest?: { multiRequestId: string; requestIds: string[]; groupIds: string[]; transactions?: string[] };
}

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  return app.inject({ method, url, headers: auth, ...(payload !== undefined && { payload: payload as object }) });
}

async function deploy(id: string, queryConfigurations: unknown[]): Promise<Deployment> {
  const created = await call('POST', '/compliance/scenarios', { id, input: { name: id, type: 'OnChainZKP', queryConfigurations, smartContractDeployments: [] } });
  expect(created.statusCode, created.body).toBe(201);
  const res = await call('POST', `/compliance/scenarios/${id}/deployments`, {});
  expect(res.statusCode, res.body).toBe(202);
  return res.json() as Deployment;
}

const scenarioOf = async (id: string) => (await call('GET', `/compliance/scenarios/${id}`)).json().input as {
  queryConfigurations: { id: string; query: Record<string, unknown> }[]; smartContractDeployments: Deployment[];
};
const client = () => createPublicClient({ transport: custom(provider) });
const read = (functionName: string, args: unknown[]) => client().readContract({ address: s.verifier, abi: universal.abi, functionName, args });

/** What VerifierLib.setMultiRequest requires of the id, computed here apart from src/chain. */
const multiRequestId = (requestIds: bigint[], groupIds: bigint[]) =>
  BigInt(keccak256(encodePacked(['uint256[]', 'uint256[]', 'address'], [requestIds, groupIds, deployer])));

beforeAll(async () => {
  chain = await startLocalChain();
  provider = (require('hardhat') as { network: { provider: EIP1193Provider } }).network.provider;
  s = await stack.deployIden3Stack(provider);
  stable = await s.deployStableV3Validator();
  linked = await s.deployLinkedValidator();
  otherStable = await s.deployStableV3Validator();
  [, alice, bob] = s.accounts as [Address, Address, Address];
  await provider.request({ method: 'hardhat_setBalance', params: [deployer, '0x56BC75E2D63100000'] } as never);
  app = await makeApp({
    DATA_DIR: tempDir('scs-deploy-multi-'), CHAIN_RPC_URLS: `eip155:31337=${chain.url}`, CHAIN_DEPLOYER_KEY: KEY, CHAIN_VERIFIER_ADDRESS: s.verifier,
    CHAIN_VALIDATORS: [stable, linked, otherStable].join(','), CHAIN_CONFIRMATIONS: '2', CHAIN_FOLLOW_INTERVAL_MS: '100',
  });
}, 240_000);

afterAll(async () => {
  await app?.close();
  await chain?.stop();
});

describe('a deployment of several proofs at once (@iden3/contracts 3.4.0 UniversalVerifier)', () => {
  it('a request carries no auth method in 3.4.0: setRequests takes (requestId, metadata, validator, params, creator) and getRequest answers each as sent', async () => {
    // The auth method is the verifier's (owner-only setAuthMethod) and the prover's (submitResponse's AuthResponse).
    const setRequests = universal.abi.find((e) => e.type === 'function' && e.name === 'setRequests') as unknown as { inputs: { components: { name: string }[] }[] };
    expect(setRequests.inputs[0]!.components.map((c) => c.name)).toEqual(['requestId', 'metadata', 'validator', 'params', 'creator']);
    const withAuth = universal.abi.flatMap((e) => (e.type === 'function' && JSON.stringify(e.inputs).includes('authMethod') ? [e.name] : [])).sort();
    expect(withAuth).toEqual(['authMethodExists', 'disableAuthMethod', 'enableAuthMethod', 'getAuthMethod', 'setAuthMethod', 'submitResponse']);

    const d = await deploy('sent-as-read', rules(19100101, 11));
    const tx = await client().getTransaction({ hash: d.transactions[0]!.txHash as Hex });
    const { functionName, args } = decodeFunctionData({ abi: universal.abi, data: tx.input });
    expect(functionName).toBe('setRequests');
    const sent = (args as [{ requestId: bigint }[]])[0];
    expect(sent).toHaveLength(3);
    for (const request of sent) expect(await read('getRequest', [request.requestId])).toEqual(request);
  });

  it('sends setMultiRequest after setRequests, recorded as the deployment\'s tx-2 (ScenarioDeploy), of the single request and the group, under the contract\'s id', async () => {
    const d = await deploy('multi-sent', [...rules(19200101, 12), rule('second', 20060101, { requestId: 4 }), rule('third', 20070101, { requestId: 5 })]);
    expect(d.transactions.map((t) => [t.id, t.actionName, t.status])).toEqual([['tx-1', 'ScenarioDeploy', 'TxPosted'], ['tx-2', 'ScenarioDeploy', 'TxPosted']]);
    const [first, , , second, third] = d.requests.map((r) => BigInt(r.requestId));
    const singles = [first!, second!, third!];
    const expected = multiRequestId(singles, [12n]);
    const receipt = await client().getTransactionReceipt({ hash: d.transactions[1]!.txHash as Hex });
    expect(receipt.status).toBe('success');
    const tx = await client().getTransaction({ hash: d.transactions[1]!.txHash as Hex });
    expect(decodeFunctionData({ abi: universal.abi, data: tx.input }).functionName).toBe('setMultiRequest');
    // The gas it was given is a bound (it cannot be estimated before setRequests is mined): what it used, against it.
    console.log(`setMultiRequest gas used ${receipt.gasUsed} of ${tx.gas} given (${(Number(receipt.gasUsed) / Number(tx.gas)).toFixed(2)})`);
    expect(receipt.gasUsed * 3n / 2n).toBeLessThanOrEqual(tx.gas);
    expect(await read('getMultiRequest', [expected])).toEqual({ multiRequestId: expected, requestIds: singles, groupIds: [12n], metadata: '0x' });
    // Recorded as sent, read-only: the follower checks exactly this one.
    expect((await scenarioOf('multi-sent')).smartContractDeployments[0]!.multiRequest)
      .toEqual({ multiRequestId: String(expected), requestIds: singles.map(String), groupIds: ['12'], transactions: ['tx-2'] });
  });

  it('a PATCH or create that sets or changes a deployment\'s multiRequest is refused (400, naming it); one that leaves it out keeps it', async () => {
    const input = await scenarioOf('multi-sent');
    const [d] = input.smartContractDeployments;
    const changed = { ...d!, multiRequest: { ...d!.multiRequest!, groupIds: ['13'] } };
    const res = await call('PATCH', '/compliance/scenarios/multi-sent', { input: { smartContractDeployments: [changed] } });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().errors).toContainEqual(expect.objectContaining({ field: 'body.input.smartContractDeployments.0.multiRequest' }));
    // The seed's shape (no multiRequest), and the scenario sent back whole with its keys in another order: kept.
    const { multiRequest: _m, ...seedShape } = d!;
    const { multiRequestId, requestIds, groupIds, transactions } = d!.multiRequest!;
    const reordered = { ...d!, multiRequest: { transactions, groupIds, requestIds, multiRequestId } };
    for (const deployment of [seedShape, reordered]) {
      const kept = await call('PATCH', '/compliance/scenarios/multi-sent', { input: { smartContractDeployments: [deployment] } });
      expect(kept.statusCode, kept.body).toBe(200);
      expect(kept.json().input.smartContractDeployments[0].multiRequest).toEqual(d!.multiRequest);
    }
    const forged = await call('POST', '/compliance/scenarios', {
      id: 'forged', input: { name: 'forged', type: 'OnChainZKP', queryConfigurations: input.queryConfigurations, smartContractDeployments: [{ ...d!, id: 'forged' }] },
    });
    expect(forged.statusCode, forged.body).toBe(400);
    expect(forged.json().errors).toContainEqual(expect.objectContaining({ field: 'body.input.smartContractDeployments.0.multiRequest' }));
    expect((await scenarioOf('multi-sent')).smartContractDeployments[0]!.multiRequest).toEqual(d!.multiRequest);
  });

  it('rules ordered [linked g2, V3 g1, V3 g2, linked g1] (the deploy sends the linked groups last): Deployed', async () => {
    const d = await deploy('groups-order', [
      rule('linked-2', 19400101, { requestId: 1, groupId: 22, circuitId: 'linkedMultiQuery', operator: '$gt' }),
      rule('v3-1', 20100101, { requestId: 2, groupId: 21 }),
      rule('v3-2', 20110101, { requestId: 3, groupId: 22 }),
      rule('linked-1', 19410101, { requestId: 4, groupId: 21, circuitId: 'linkedMultiQuery', operator: '$gt' }),
    ]);
    await chain.mine(2);
    const found = async () => (await scenarioOf('groups-order')).smartContractDeployments[0]!;
    await expect.poll(async () => (await found()).status, { timeout: 30_000, interval: 100 }).not.toBe('DeploymentStarted');
    expect((await found()).errorMessage).toBeUndefined();
    expect((await found()).status).toBe('Deployed');
    expect(d.multiRequest).toMatchObject({ requestIds: [], groupIds: ['21', '22'] });
  });

  it('rules reordered by a PATCH before the follower decides: the recorded multi-request is checked, Deployed', async () => {
    await deploy('reordered', [rule('one', 20120101, { requestId: 1 }), rule('two', 20130101, { requestId: 2 }), rule('three', 20140101, { requestId: 3 })]);
    const before = await scenarioOf('reordered');
    const patched = await call('PATCH', '/compliance/scenarios/reordered', { input: { queryConfigurations: [...before.queryConfigurations].reverse() } });
    expect(patched.statusCode, patched.body).toBe(200);
    await chain.mine(2);
    const found = async () => (await scenarioOf('reordered')).smartContractDeployments[0]!;
    await expect.poll(async () => (await found()).status, { timeout: 30_000, interval: 100 }).not.toBe('DeploymentStarted');
    expect((await found()).errorMessage).toBeUndefined();
    expect((await found()).status).toBe('Deployed');
  });

  it('a crash before setMultiRequest is broadcast: no verdict while it is unrecorded; after a restart recover() sends it and the deployment is Deployed', async () => {
    const dir = tempDir('scs-deploy-multi-crash-');
    const env = {
      DATA_DIR: dir, CHAIN_RPC_URLS: `eip155:31337=${chain.url}`, CHAIN_DEPLOYER_KEY: KEY, CHAIN_VERIFIER_ADDRESS: s.verifier,
      CHAIN_VALIDATORS: [stable, linked].join(','), CHAIN_CONFIRMATIONS: '2', CHAIN_FOLLOW_INTERVAL_MS: '100',
    };
    const crashing = await makeApp(env, {
      beforeBroadcast: (send) => {
        if ((JSON.parse(send.purpose) as { call?: string }).call === 'setMultiRequest') throw new Error('killed before the second broadcast');
      },
    });
    const inject = (a: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: object) => a.inject({ method, url, headers: auth, ...(payload && { payload }) });
    const found = async (a: FastifyInstance) => ((await inject(a, 'GET', '/compliance/scenarios/unsent')).json().input as { smartContractDeployments: Deployment[] }).smartContractDeployments[0]!;
    let restarted: FastifyInstance | undefined;
    let closed = false;
    const closeOnce = async () => { if (!closed) { closed = true; await crashing.close(); } };
    try {
      const queryConfigurations = [rule('one', 20150101, { requestId: 1 }), rule('two', 20160101, { requestId: 2 })];
      expect((await inject(crashing, 'POST', '/compliance/scenarios', { id: 'unsent', input: { name: 'unsent', type: 'OnChainZKP', queryConfigurations, smartContractDeployments: [] } })).statusCode).toBe(201);
      const res = await inject(crashing, 'POST', '/compliance/scenarios/unsent/deployments', {});
      expect(res.statusCode, res.body).toBe(202);
      expect((res.json() as Deployment).transactions).toHaveLength(1);
      await chain.mine(2);
      // The round that confirms tx-1 is the one that would decide: it must not.
      await expect.poll(async () => (await found(crashing)).transactions[0]!.status, { timeout: 30_000, interval: 100 }).toBe('TxConfirmed');
      expect((await found(crashing)).status).toBe('DeploymentStarted');
      await closeOnce();
      restarted = await makeApp(env);
      const recovered = await found(restarted);
      expect(recovered.transactions.map((t) => t.id)).toEqual(['tx-1', 'tx-2']);
      expect(recovered.multiRequest?.transactions).toEqual(['tx-2']);
      await chain.mine(2);
      await expect.poll(async () => (await found(restarted!)).status, { timeout: 30_000, interval: 100 }).not.toBe('DeploymentStarted');
      expect((await found(restarted)).errorMessage).toBeUndefined();
      expect((await found(restarted)).status).toBe('Deployed');
    } finally {
      await closeOnce();
      await restarted?.close();
    }
  });

  it('a crash before setRequests is broadcast: after a restart recover() sends both setRequests and the setMultiRequest it carries, Deployed', async () => {
    const env = {
      DATA_DIR: tempDir('scs-deploy-multi-crash1-'), CHAIN_RPC_URLS: `eip155:31337=${chain.url}`, CHAIN_DEPLOYER_KEY: KEY, CHAIN_VERIFIER_ADDRESS: s.verifier,
      CHAIN_VALIDATORS: [stable, linked].join(','), CHAIN_CONFIRMATIONS: '2', CHAIN_FOLLOW_INTERVAL_MS: '100',
    };
    const nonce = await client().getTransactionCount({ address: deployer });
    const crashing = await makeApp(env, { beforeBroadcast: () => { throw new Error('killed before the first broadcast'); } });
    const inject = (a: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: object) => a.inject({ method, url, headers: auth, ...(payload && { payload }) });
    const queryConfigurations = [rule('one', 20170101, { requestId: 1 }), rule('two', 20180101, { requestId: 2 })];
    expect((await inject(crashing, 'POST', '/compliance/scenarios', { id: 'crash1', input: { name: 'crash1', type: 'OnChainZKP', queryConfigurations, smartContractDeployments: [] } })).statusCode).toBe(201);
    expect((await inject(crashing, 'POST', '/compliance/scenarios/crash1/deployments', {})).statusCode).toBe(500);
    await crashing.close();
    expect(await client().getTransactionCount({ address: deployer })).toBe(nonce);
    const restarted = await makeApp(env);
    try {
      const found = async () => ((await inject(restarted, 'GET', '/compliance/scenarios/crash1')).json().input as { smartContractDeployments: Deployment[] }).smartContractDeployments[0]!;
      expect((await found()).transactions.map((t) => t.id)).toEqual(['tx-1', 'tx-2']);
      expect(await client().getTransactionCount({ address: deployer, blockTag: 'pending' })).toBe(nonce + 2);
      await chain.mine(2);
      await expect.poll(async () => (await found()).status, { timeout: 30_000, interval: 100 }).not.toBe('DeploymentStarted');
      expect((await found()).errorMessage).toBeUndefined();
      expect((await found()).status).toBe('Deployed');
    } finally {
      await restarted.close();
    }
  });

  it.skipIf(!pgAvailable)('two instances on one PostgreSQL carrying the same setRequests (after a crash before its broadcast) reserve one setMultiRequest: two transactions, Deployed', async () => {
    const schema = freshSchema('multi_two');
    const env = {
      DATA_DIR: tempDir('scs-deploy-multi-two-'), DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema, CHAIN_RPC_URLS: `eip155:31337=${chain.url}`,
      CHAIN_DEPLOYER_KEY: KEY, CHAIN_VERIFIER_ADDRESS: s.verifier, CHAIN_VALIDATORS: [stable, linked].join(','), CHAIN_CONFIRMATIONS: '2', CHAIN_FOLLOW_INTERVAL_MS: '100',
    };
    const nonce = await client().getTransactionCount({ address: deployer, blockTag: 'pending' });
    const inject = (a: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: object) => a.inject({ method, url, headers: auth, ...(payload && { payload }) });
    const apps: FastifyInstance[] = [];
    try {
      const crashing = await makeApp(env, { beforeBroadcast: () => { throw new Error('killed before the first broadcast'); } });
      apps.push(crashing);
      const queryConfigurations = [rule('one', 20280101, { requestId: 1 }), rule('two', 20290101, { requestId: 2 })];
      expect((await inject(crashing, 'POST', '/compliance/scenarios', { id: 'two-instances', input: { name: 'two', type: 'OnChainZKP', queryConfigurations, smartContractDeployments: [] } })).statusCode).toBe(201);
      expect((await inject(crashing, 'POST', '/compliance/scenarios/two-instances/deployments', {})).statusCode).toBe(500);
      await crashing.close();
      // Each instance's recover() carries the stored setRequests on; both wait for the other before reserving the
      // setMultiRequest it carries (at most a minute), so both have looked for one before either reserves.
      let arrived = 0;
      let release = () => {};
      const both = new Promise<void>((resolve) => { release = resolve; });
      const barrier = async () => {
        if (++arrived === 2) release();
        await Promise.race([both, sleep(60_000)]);
      };
      const [one, two] = await Promise.all([makeApp(env, { beforeFollowUp: barrier }), makeApp(env, { beforeFollowUp: barrier })]);
      apps.push(one!, two!);
      expect(arrived).toBe(2);
      expect(await client().getTransactionCount({ address: deployer, blockTag: 'pending' })).toBe(nonce + 2);
      const found = async () => ((await inject(one!, 'GET', '/compliance/scenarios/two-instances')).json().input as { smartContractDeployments: Deployment[] }).smartContractDeployments;
      expect((await found()).map((d) => d.transactions.map((t) => t.id))).toEqual([['tx-1', 'tx-2']]);
      await chain.mine(2);
      await expect.poll(async () => (await found())[0]!.status, { timeout: 30_000, interval: 100 }).toBe('Deployed');
      expect(await client().getTransactionCount({ address: deployer, blockTag: 'pending' })).toBe(nonce + 2);
    } finally {
      for (const a of apps) await a.close().catch(() => {});
      await dropSchema(schema);
    }
  });

  it('a balance that pays setRequests but not setMultiRequest too: refused (409) before either is sent', async () => {
    const queryConfigurations = [rule('one', 20190101, { requestId: 1 }), rule('two', 20200101, { requestId: 2 })];
    expect((await call('POST', '/compliance/scenarios', { id: 'underfunded', input: { name: 'underfunded', type: 'OnChainZKP', queryConfigurations, smartContractDeployments: [] } })).statusCode).toBe(201);
    const setBalance = (wei: bigint) => provider.request({ method: 'hardhat_setBalance', params: [deployer, `0x${wei.toString(16)}`] } as never);
    const nonce = await client().getTransactionCount({ address: deployer });
    try {
      await setBalance(1n);
      const poor = await call('POST', '/compliance/scenarios/underfunded/deployments', {});
      expect(poor.statusCode, poor.body).toBe(409);
      // What setRequests alone may cost, as the refusal says: enough for it, not for both.
      const setRequestsCost = BigInt(/may cost \((\d+) wei\)/.exec(poor.json().detail as string)![1]!);
      await setBalance(setRequestsCost);
      const res = await call('POST', '/compliance/scenarios/underfunded/deployments', {});
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json().detail).toMatch(/less than this deploy may cost/);
      expect(await client().getTransactionCount({ address: deployer, blockTag: 'pending' })).toBe(nonce);
      expect((await scenarioOf('underfunded')).smartContractDeployments).toEqual([]);
    } finally {
      await setBalance(0x56BC75E2D63100000n);
    }
  });

  it('from an empty chain: a V3 rule and a linked multi-query group, deployed, Deployed by the follower; the wallet\'s proofs make execute valid and the multi-request verified', async () => {
    const d = await deploy('v3-linked', rules(19000101, GROUP));
    await chain.mine(2);
    const status = async () => (await scenarioOf('v3-linked')).smartContractDeployments.map((x) => x.status);
    await expect.poll(status, { timeout: 30_000, interval: 100 }).toEqual(['Deployed']);
    const input = await scenarioOf('v3-linked');
    expect(input.smartContractDeployments[0]!.transactions.map((t) => t.status)).toEqual(['TxConfirmed', 'TxConfirmed']);
    const [single, grouped, after] = d.requests.map((r) => BigInt(r.requestId)) as [bigint, bigint, bigint];
    expect(input.queryConfigurations.map((qc) => qc.query.requestId)).toEqual([single, grouped, after].map(String));

    // The script's own requests (js-sdk from the JSON-LD context): what the chain holds.
    const v3 = { ...(await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$lt!, 20020101 + GROUP)), circuitIds: ['credentialAtomicQueryV3OnChain'] };
    const inGroup = { ...(await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$lt!, 20050101)), circuitIds: ['credentialAtomicQueryV3OnChain'], groupID: BigInt(GROUP) };
    const condition = await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$gt!, 19000101);
    expect(await read('getRequest', [single])).toMatchObject({ validator: getAddress(stable), params: stack.v3Params(v3), creator: deployer });
    expect(await read('getRequest', [grouped])).toMatchObject({ validator: getAddress(stable), params: stack.v3Params(inGroup) });
    expect(await read('getRequest', [after])).toMatchObject({ validator: getAddress(linked), params: stack.linkedParams([condition], BigInt(GROUP)) });
    const multi = multiRequestId([single], [BigInt(GROUP)]);

    await s.submit(alice, single, { kind: 'v3', queryHash: stack.queryHashV3(v3), circuitId: SUBVERSION });
    await s.submit(alice, grouped, { kind: 'v3', queryHash: stack.queryHashV3(inGroup), circuitId: SUBVERSION, linkID: 4242n });
    await s.submit(alice, after, { kind: 'linked', linkID: 4242n, queryHashes: [stack.queryHashLinked(condition)] });
    const executed = await call('POST', '/compliance/scenarios/execute', { scenarioId: 'v3-linked', address: alice, credentials: [] });
    expect(executed.statusCode, executed.body).toBe(200);
    expect(executed.json()[0].result).toMatchObject({ status: 'valid', result: { is_valid: true } });
    expect(await read('areMultiRequestProofsVerified', [multi, alice])).toBe(true);

    // Bob's linked proof names another credential (linkID): each request is proved, the multi-request is not.
    await s.submit(bob, single, { kind: 'v3', queryHash: stack.queryHashV3(v3), circuitId: SUBVERSION });
    await s.submit(bob, grouped, { kind: 'v3', queryHash: stack.queryHashV3(inGroup), circuitId: SUBVERSION, linkID: 1n });
    await s.submit(bob, after, { kind: 'linked', linkID: 2n, queryHashes: [stack.queryHashLinked(condition)] });
    expect(await read('areMultiRequestProofsVerified', [multi, bob])).toBe(false);
  });

  it('a rule whose on-chain request differs (the linked condition changed before the follower decided) is never Deployed', async () => {
    const d = await deploy('differs', rules(19300101, 13));
    const before = await scenarioOf('differs');
    const changed = before.queryConfigurations.map((qc) => (qc.id === 'after' ? { ...qc, query: { ...qc.query, value: 19310101 } } : qc));
    const patched = await call('PATCH', '/compliance/scenarios/differs', { input: { queryConfigurations: changed } });
    expect(patched.statusCode, patched.body).toBe(200);
    await chain.mine(2);
    const deployment = async () => (await scenarioOf('differs')).smartContractDeployments.find((x) => x.id === d.id)!;
    await expect.poll(async () => (await deployment()).status, { timeout: 30_000, interval: 100 }).toBe('DeploymentFailed');
    expect((await deployment()).errorMessage).toMatch(/rule "after" does not match request/);
  });

  it('a deployment recorded by hand (no multiRequest of the service\'s) is asked for no multi-request: Deployed on its requests alone', async () => {
    const queries = await Promise.all([20080101, 20090101].map(async (v) =>
      ({ ...(await stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS.$lt!, v)), circuitIds: ['credentialAtomicQueryV3OnChain'] })));
    const ids = [7001n, 7002n];
    // setRequests alone, by the owner: the requests match the rules, no multi-request holds them.
    const { transactionHash } = await s.setRequests(queries.map((q, i) => ({ requestId: ids[i]!, validator: stable, params: stack.v3Params(q) })));
    const queryConfigurations = [rule('a', 20080101, { requestId: '7001' }), rule('b', 20090101, { requestId: '7002' })];
    const deployment = {
      id: 'by-hand', contractName: 'UniversalVerifier', status: 'DeploymentStarted', address: s.verifier, chain: chain.chain,
      transactions: [{ id: 'tx-1', actionName: 'ScenarioDeploy', status: 'TxPosted', txHash: transactionHash, smartContractDeploymentId: 'by-hand' }],
      requests: [{ queryConfigurationId: 'a', requestId: '7001' }, { queryConfigurationId: 'b', requestId: '7002' }],
    };
    const created = await call('POST', '/compliance/scenarios', { id: 'no-multi', input: { name: 'no-multi', type: 'OnChainZKP', queryConfigurations, smartContractDeployments: [deployment] } });
    expect(created.statusCode, created.body).toBe(201);
    await chain.mine(2);
    const found = async () => (await scenarioOf('no-multi')).smartContractDeployments[0]!;
    await expect.poll(async () => (await found()).status, { timeout: 30_000, interval: 100 }).not.toBe('DeploymentStarted');
    expect((await found()).errorMessage).toBeUndefined();
    expect((await found()).status).toBe('Deployed');
  });

  describe('a redeploy, and deploys of requests the verifier holds already', () => {
    const redeployRules = (one: number, grouped = 20250101) => [
      rule('one', one, { requestId: 1 }), rule('two', 20240101, { requestId: 2 }),
      rule('grouped', grouped, { requestId: 3, groupId: 41 }),
      rule('linked', 19600101, { requestId: 4, groupId: 41, circuitId: 'linkedMultiQuery', operator: '$gt' }),
    ];
    const statuses = async (id: string) => (await scenarioOf(id)).smartContractDeployments.map((x) => x.status);
    const patchRules = (id: string, queryConfigurations: unknown[]) => call('PATCH', `/compliance/scenarios/${id}`, { input: { queryConfigurations } });
    const sentRequests = async (hash: string) => {
      const { functionName, args } = decodeFunctionData({ abi: universal.abi, data: (await client().getTransaction({ hash: hash as Hex })).input });
      return { functionName, ids: functionName === 'setRequests' ? (args as [{ requestId: bigint }[]])[0].map((r) => r.requestId) : [] };
    };

    it('one rule of four changed: setRequests sends its request alone, the others reused; the new deployment Deployed, the old Deprecated; execute valid on it', async () => {
      const first = await deploy('redeploy', redeployRules(20210101));
      await chain.mine(2);
      await expect.poll(() => statuses('redeploy'), { timeout: 30_000, interval: 100 }).toEqual(['Deployed']);
      const before = await scenarioOf('redeploy');
      expect((await patchRules('redeploy', before.queryConfigurations.map((qc) => (qc.id === 'one' ? { ...qc, query: { ...qc.query, value: 20230101 } } : qc)))).statusCode).toBe(200);
      const res = await call('POST', '/compliance/scenarios/redeploy/deployments', {});
      expect(res.statusCode, res.body).toBe(202);
      const second = res.json() as Deployment;
      const ids = second.requests.map((r) => BigInt(r.requestId)) as [bigint, bigint, bigint, bigint];
      expect(ids.slice(1)).toEqual(first.requests.slice(1).map((r) => BigInt(r.requestId)));
      expect(await sentRequests(second.transactions[0]!.txHash)).toEqual({ functionName: 'setRequests', ids: [ids[0]] });
      expect(second.multiRequest).toMatchObject({ requestIds: [ids[0], ids[1]].map(String), groupIds: ['41'], transactions: ['tx-2'] });
      await chain.mine(2);
      await expect.poll(() => statuses('redeploy'), { timeout: 30_000, interval: 100 }).toEqual(['Deprecated', 'Deployed']);
      expect((await scenarioOf('redeploy')).queryConfigurations.map((qc) => qc.query.requestId)).toEqual(ids.map(String));

      const q = (operator: string, value: number) => stack.circuitQuery(ID_INFORMATION, ATTRIBUTE, OPERATORS[operator]!, value);
      const v3 = (query: Awaited<ReturnType<typeof q>>, groupID?: bigint) => ({ ...query, circuitIds: ['credentialAtomicQueryV3OnChain'], ...(groupID && { groupID }) });
      const [one, two, grouped] = [v3(await q('$lt', 20230101)), v3(await q('$lt', 20240101)), v3(await q('$lt', 20250101), 41n)];
      const condition = await q('$gt', 19600101);
      await s.submit(alice, ids[0], { kind: 'v3', queryHash: stack.queryHashV3(one), circuitId: SUBVERSION });
      await s.submit(alice, ids[1], { kind: 'v3', queryHash: stack.queryHashV3(two), circuitId: SUBVERSION });
      await s.submit(alice, ids[2], { kind: 'v3', queryHash: stack.queryHashV3(grouped), circuitId: SUBVERSION, linkID: 77n });
      await s.submit(alice, ids[3], { kind: 'linked', linkID: 77n, queryHashes: [stack.queryHashLinked(condition)] });
      const executed = await call('POST', '/compliance/scenarios/execute', { scenarioId: 'redeploy', address: alice, credentials: [] });
      expect(executed.statusCode, executed.body).toBe(200);
      expect(executed.json()[0].result).toMatchObject({ status: 'valid', result: { is_valid: true } });
      expect(await read('areMultiRequestProofsVerified', [BigInt(second.multiRequest!.multiRequestId), alice])).toBe(true);
    });

    it('a changed grouped rule that keeps its groupId: 422 naming the group\'s rules\' groupId and saying to choose a new one; nothing sent', async () => {
      const before = await scenarioOf('redeploy');
      expect((await patchRules('redeploy', before.queryConfigurations.map((qc) => (qc.id === 'grouped' ? { ...qc, query: { ...qc.query, value: 20260101 } } : qc)))).statusCode).toBe(200);
      const nonce = await client().getTransactionCount({ address: deployer, blockTag: 'pending' });
      const res = await call('POST', '/compliance/scenarios/redeploy/deployments', {});
      expect(res.statusCode, res.body).toBe(422);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'SCS_HELD_BY_VERIFIER' });
      const errors = res.json().errors as { pointer: string; message: string }[];
      expect(errors.map((e) => e.pointer)).toEqual(['/input/queryConfigurations/2/query/groupId', '/input/queryConfigurations/3/query/groupId']);
      expect(errors[0]!.message).toMatch(/holds group 41 already.*choose a new groupId/);
      expect(await client().getTransactionCount({ address: deployer, blockTag: 'pending' })).toBe(nonce);
      expect(await statuses('redeploy')).toEqual(['Deprecated', 'Deployed']);
      // The same change under a new groupId deploys.
      const renamed = (await scenarioOf('redeploy')).queryConfigurations.map((qc) => (qc.query.groupId === 41 ? { ...qc, query: { ...qc.query, groupId: 42 } } : qc));
      expect((await patchRules('redeploy', renamed)).statusCode).toBe(200);
      const again = await call('POST', '/compliance/scenarios/redeploy/deployments', {});
      expect(again.statusCode, again.body).toBe(202);
      await chain.mine(2);
      await expect.poll(() => statuses('redeploy'), { timeout: 30_000, interval: 100 }).toEqual(['Deprecated', 'Deprecated', 'Deployed']);
    });

    it('a rule whose request id the verifier holds with another validator (the same params, another validator of its circuit): 422 naming its requestId', async () => {
      await deploy('held-by-stable', [rule('alone', 20270101, { requestId: 1 })]);
      await chain.mine(2);
      const created = await call('POST', '/compliance/scenarios', { id: 'other-validator', input: { name: 'other', type: 'OnChainZKP', queryConfigurations: [rule('alone', 20270101, { requestId: 1 })], smartContractDeployments: [] } });
      expect(created.statusCode, created.body).toBe(201);
      const res = await call('POST', '/compliance/scenarios/other-validator/deployments', { validators: [otherStable] });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().errors).toEqual([expect.objectContaining({ pointer: '/input/queryConfigurations/0/query/requestId', message: expect.stringMatching(/choose a new id/) })]);
      expect((await scenarioOf('other-validator')).smartContractDeployments).toEqual([]);
    });

    it('the same rules in another scenario: no transaction, Deployed by the read check alone (and again after a retire); reordered: setMultiRequest alone (tx-1), Deployed', async () => {
      const current = (await scenarioOf('redeploy')).queryConfigurations.map(({ id, query }) => ({ id, query }));
      const nonce = await client().getTransactionCount({ address: deployer, blockTag: 'pending' });
      const copy = await deploy('copy', current);
      expect(copy.transactions).toEqual([]);
      expect(copy.multiRequest).toMatchObject({ transactions: [] });
      expect(await client().getTransactionCount({ address: deployer, blockTag: 'pending' })).toBe(nonce);
      await expect.poll(() => statuses('copy'), { timeout: 30_000, interval: 100 }).toEqual(['Deployed']);
      expect((await call('POST', '/compliance/scenarios/copy/deployments', {})).statusCode).toBe(409);
      // Retired, then deployed again: again no transaction, Deployed.
      expect((await call('DELETE', `/compliance/scenarios/copy/deployments/${copy.id}`)).statusCode).toBe(200);
      const again = await call('POST', '/compliance/scenarios/copy/deployments', {});
      expect(again.statusCode, again.body).toBe(202);
      expect((again.json() as Deployment).transactions).toEqual([]);
      await expect.poll(() => statuses('copy'), { timeout: 30_000, interval: 100 }).toEqual(['Deprecated', 'Deployed']);

      const [a, b, ...group] = current;
      const swapped = await deploy('swapped', [b, a, ...group]);
      expect(swapped.transactions).toHaveLength(1);
      expect((await sentRequests(swapped.transactions[0]!.txHash)).functionName).toBe('setMultiRequest');
      expect(swapped.multiRequest?.transactions).toEqual(['tx-1']);
      await chain.mine(2);
      await expect.poll(() => statuses('swapped'), { timeout: 30_000, interval: 100 }).toEqual(['Deployed']);
    });
  });
});
