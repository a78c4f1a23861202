/**
 * The chain follower (src/services/deployment-follower.ts) on the local Hardhat node with the real iden3 stack
 * (scripts/iden3-stack.mjs; Groth16 stubbed), on a real SQLite file and real PostgreSQL: each test drives its rounds
 * with poll() and the chain with evm_mine / evm_snapshot / evm_revert, so nothing waits on a timer.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, custom, encodeFunctionData, getAddress, toFunctionSelector, type Abi, type Address, type EIP1193Provider, type Hash, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../../src/config.js';
import { chainReaderFor } from '../../src/chain/index.js';
import { RequestCheck } from '../../src/chain/request-check.js';
import { RequestMatcher } from '../../src/chain/request-match.js';
import { PlanCache } from '../../src/domain/plan-cache.js';
import { typeDeclarations } from '../../src/execution/index.js';
import type { Scenario } from '../../src/schemas/scenario.js';
import { txRound } from '../../src/chain/tx-round.js';
import { DeploymentFollower } from '../../src/services/deployment-follower.js';
import { DeploymentRecorder } from '../../src/services/deployment-records.js';
import { openStore, type Store } from '../../src/store/index.js';
import { auth, makeApp, scenario, tempDir } from '../helpers.js';
import { dropSchema, freshSchema, pgAvailable, PG_URL } from '../pg.js';
import { haveIden3Documents } from '../shared-fixtures.js';
import { iden3DocumentLoader } from '../zkp/fixtures.js';
// @ts-expect-error: a JavaScript module without declarations (it is also the demo's)
import * as stackModule from '../../scripts/iden3-stack.mjs';
import { startLocalChain, type LocalChain } from './evm.js';

const require = createRequire(import.meta.url);
const universal = require('@iden3/contracts/build/contracts/UniversalVerifier.json') as { abi: Abi };

interface Query { schema: bigint; claimPathKey: bigint; operator: bigint; values: bigint[] }
interface Stack {
  owner: Address; verifier: Address; sigV2Validator: Address; state: Address; groth16: Address;
  setRequests(requests: { requestId: bigint; validator: Address; params: Hex }[]): Promise<{ transactionHash: Hash; blockNumber: bigint }>;
}
const stack = stackModule as {
  deployIden3Stack(p: EIP1193Provider): Promise<Stack>;
  sigV2Params(q: Query): Hex;
  KYC_AGE: { context: string; type: string; schema: bigint; birthdayPathKey: bigint };
  OPERATORS: Record<string, bigint>;
};
const { KYC_AGE, OPERATORS } = stack;

/** Hardhat's first default account (its well-known development key): signs the raw transaction sent twice. */
const OWNER_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const HOOK = 'https://hooks.example/deployments';
const CONFIRMATIONS = 2;
const DROP_AFTER_MS = 60_000;

let chain: LocalChain;
let provider: EIP1193Provider;
let s: Stack;
let nextRequestId = 1000n;

const born = (before: bigint): Query => ({ schema: KYC_AGE.schema, claimPathKey: KYC_AGE.birthdayPathKey, operator: OPERATORS.$lt!, values: [before] });
const rule = (requestId: bigint) => ({
  id: 'adult', query: { type: KYC_AGE.type, context: KYC_AGE.context, requestId: requestId.toString(), attribute: 'birthday', operator: '$lt', value: 20020101 },
});
const setRequestsCall = (requestId: bigint, validator: Address, params: Hex) => encodeFunctionData({
  abi: universal.abi, functionName: 'setRequests', args: [[{ requestId, metadata: '', validator, params, creator: s.owner }]],
});
const rpc = (method: string, params: unknown[] = []) => provider.request({ method, params } as never) as Promise<unknown>;

const onChainScenario = (requestId: bigint, txHashes: string[], deployment: Record<string, unknown> = {}): Scenario => scenario({
  type: 'OnChainZKP', projectId: 'p1', webhookUrl: HOOK, queryConfigurations: [rule(requestId)],
  smartContractDeployments: [{
    id: 'd1', contractName: 'UniversalVerifier', status: 'DeploymentStarted', chain: chain.chain, address: s.verifier,
    transactions: txHashes.map((txHash, i) => ({ id: `t${i + 1}`, actionName: 'ScenarioDeploy', status: 'TxPosted', txHash, smartContractDeploymentId: 'd1' })),
    ...deployment,
  }],
}) as unknown as Scenario;

beforeAll(async () => {
  chain = await startLocalChain();
  provider = (require('hardhat') as { network: { provider: EIP1193Provider } }).network.provider;
  s = await stack.deployIden3Stack(provider);
}, 180_000);

afterAll(async () => {
  await chain?.stop();
});

interface Harness {
  store: Store;
  follower: DeploymentFollower;
  clock: { t: number };
  deployment(id: string): Promise<Record<string, unknown> & { transactions: Record<string, unknown>[] }>;
}

const opened: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of opened.splice(0)) await close();
});

const silent = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;

async function harness(storeEnv: Record<string, string>, rpcUrl = chain.url, extra: Record<string, string> = {}, log = silent): Promise<Harness> {
  const config = loadConfig({
    ...storeEnv, CHAIN_RPC_URLS: `${chain.chain}=${rpcUrl}`, CHAIN_CONFIRMATIONS: String(CONFIRMATIONS),
    CHAIN_TX_DROP_AFTER_MS: String(DROP_AFTER_MS), CHAIN_READ_TIMEOUT_MS: '30000', WEBHOOK_SECRET: SECRET, ...extra,
  });
  const store = await openStore(config.database);
  const clock = { t: Date.now() };
  const now = () => clock.t;
  const recorder = new DeploymentRecorder({ store, plans: new PlanCache(typeDeclarations), webhook: config.webhook, now });
  const follower = new DeploymentFollower({
    store, recorder, settings: config.chains, reader: await chainReaderFor(config.chains), log, now,
    check: new RequestCheck({ matcher: new RequestMatcher({ documentLoader: iden3DocumentLoader() }) }),
  });
  opened.push(async () => {
    await follower.stop();
    await store.close();
  });
  return {
    store, follower, clock,
    async deployment(id) {
      const [row] = await store.find(id, ['p1']);
      return row!.input.smartContractDeployments[0] as never;
    },
  };
}

const stores: Array<{ name: string; env: () => Promise<Record<string, string>> }> = [
  { name: 'SQLite', env: async () => ({ DATA_DIR: tempDir() }) },
  ...(pgAvailable
    ? [{
        name: 'PostgreSQL',
        env: async () => {
          const schema = freshSchema('follow');
          opened.push(() => dropSchema(schema));
          return { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema };
        },
      }]
    : []),
];

interface ProxiedBatch { calls: { method: string }[]; answeredCalls: number }

/** An RPC proxy on 127.0.0.1 in front of the node: records each batch and how many of its calls the node answered. */
async function rpcProxy(before?: (calls: { method: string }[]) => Promise<void>, authorization?: string) {
  const seen = { batches: [] as ProxiedBatch[], refused: 0, url: '' };
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (authorization !== undefined && req.headers.authorization !== authorization) {
        seen.refused++;
        res.writeHead(401).end();
        return;
      }
      const body = Buffer.concat(chunks).toString();
      const batch: ProxiedBatch = { calls: [JSON.parse(body)].flat() as { method: string }[], answeredCalls: 0 };
      seen.batches.push(batch);
      void (before?.(batch.calls) ?? Promise.resolve())
        .then(() => fetch(chain.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body }))
        .then(async (r) => {
          const text = await r.text();
          const answers = [JSON.parse(text)].flat() as { result?: unknown; error?: unknown }[];
          batch.answeredCalls = answers.filter((a) => a.error === undefined && 'result' in a).length;
          res.writeHead(r.status, { 'content-type': 'application/json' }).end(text);
        });
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  opened.push(() => new Promise((resolve) => proxy.close(() => resolve())));
  seen.url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return seen;
}

async function create(h: Harness, id: string, input: Scenario): Promise<void> {
  expect(await h.store.create(id, input, new Date(h.clock.t).toISOString())).not.toBeNull();
}

/** Sends setRequests with automining off, so a reverting one is mined rather than refused at send time. */
async function sendUnchecked(data: Hex): Promise<Hash> {
  const wallet = createWalletClient({ transport: custom(provider), account: s.owner });
  await rpc('evm_setAutomine', [false]);
  try {
    const hash = await wallet.sendTransaction({ to: s.verifier, data, gas: 3_000_000n, chain: null });
    await rpc('evm_mine');
    return hash;
  } finally {
    await rpc('evm_setAutomine', [true]);
  }
}

describe.skipIf(!haveIden3Documents())('the chain follower on the local iden3 stack', () => {
  describe.each(stores)('on $name', ({ env }) => {
    it('confirms a successful setRequests only CHAIN_CONFIRMATIONS deep, then the deployment is Deployed once getRequest matches the rule', async () => {
      const h = await harness(await env());
      const requestId = nextRequestId++;
      const { transactionHash, blockNumber } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
      await create(h, 'ok', onChainScenario(requestId, [transactionHash]));

      await h.follower.poll();
      await h.follower.poll();
      expect(await h.deployment('ok')).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxPosted' }] });

      await chain.mine(CONFIRMATIONS - 1);
      await h.follower.poll();
      const block = await rpc('eth_getBlockByNumber', [`0x${blockNumber.toString(16)}`, false]) as { timestamp: Hex };
      const d = await h.deployment('ok');
      expect(d).toMatchObject({ status: 'Deployed', address: s.verifier });
      expect(d.transactions[0]).toMatchObject({ status: 'TxConfirmed', txHash: transactionHash, blockNumber: Number(blockNumber), timestamp: Number(block.timestamp) });

      const [row] = await h.store.find('ok', ['p1']);
      const revision = await h.store.getRevision(row!.seq, row!.revision);
      expect(revision).toMatchObject({ author: 'service:chain', state: 'live' });
      const claimed = await h.store.claimWebhooks(new Date(h.clock.t + 1000).toISOString(), 10, new Date(h.clock.t + 60_000).toISOString(),
        { perTarget: 10, perProject: 10, scan: 100, skipTargets: [], skipProjects: [], targetRooms: {}, projectRooms: {} });
      expect(claimed).toHaveLength(1);
      expect(claimed[0]).toMatchObject({ event: 'deployment.updated', executionId: null, url: HOOK, projectId: 'p1' });
      expect(JSON.parse(claimed[0]!.payload)).toMatchObject({
        type: 'deployment.updated',
        data: { scenarioId: 'ok', projectId: 'p1', revision: row!.revision, deployment: { id: 'd1', status: 'Deployed', address: s.verifier } },
      });
    });

    it('fails a reverted setRequests (an unwhitelisted validator) with the reason decoded, and the deployment with it', async () => {
      const h = await harness(await env());
      const requestId = nextRequestId++;
      // A real credential validator (behind its proxy, initialised as the stack's) the verifier has not whitelisted.
      const validator = require('@iden3/contracts/build/contracts/CredentialAtomicQuerySigV2Validator.json') as { abi: Abi; bytecode: Hex };
      const implementation = await chain.deployArtifact(validator);
      const stranger = await chain.deployArtifact({ abi: [], bytecode: `0x3d602d80600a3d3981f3363d3d373d3d3d363d73${implementation.slice(2)}5af43d82803e903d91602b57fd5bf3` });
      const wallet = createWalletClient({ transport: custom(provider), account: s.owner });
      await wallet.writeContract({ address: stranger, abi: validator.abi, functionName: 'initialize', args: [s.state, s.groth16, s.owner], chain: null });
      const hash = await sendUnchecked(setRequestsCall(requestId, stranger, stack.sigV2Params(born(20020101n))));
      expect((await rpc('eth_getTransactionReceipt', [hash]) as { status: Hex }).status).toBe('0x0');
      await create(h, 'reverted', onChainScenario(requestId, [hash]));
      await chain.mine(CONFIRMATIONS);
      for (let i = 0; i < 3; i++) await h.follower.poll();
      const d = await h.deployment('reverted');
      expect(d.transactions[0]).toMatchObject({ status: 'TxFailed', errorMessage: `reverted: ValidatorIsNotWhitelisted(${getAddress(stranger)})` });
      expect(d).toMatchObject({ status: 'DeploymentFailed' });
      expect(d.errorMessage).toContain('ValidatorIsNotWhitelisted');
    });

    it('fails a transaction that never lands after CHAIN_TX_DROP_AFTER_MS unseen while the chain advances (a stalled head counts nothing)', async () => {
      const h = await harness(await env());
      const hash = `0x${randomBytes(32).toString('hex')}`;
      await create(h, 'dropped', onChainScenario(nextRequestId++, [hash]));
      await h.follower.poll();
      h.clock.t += DROP_AFTER_MS;
      await h.follower.poll();
      expect(await h.deployment('dropped')).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxPosted' }] });
      await chain.mine(1);
      h.clock.t += DROP_AFTER_MS - 1;
      await h.follower.poll();
      expect(await h.deployment('dropped')).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxPosted' }] });
      await chain.mine(1);
      h.clock.t += 1;
      await h.follower.poll();
      const d = await h.deployment('dropped');
      expect(d.transactions[0]).toMatchObject({ status: 'TxFailed' });
      expect(d.transactions[0]!.errorMessage).toMatch(/^dropped: neither mined nor pending on eip155:31337/);
      expect(d).toMatchObject({ status: 'DeploymentFailed' });
    });

    it('fails a transaction when its sender\'s nonce passes it CHAIN_CONFIRMATIONS deep (replaced by another of that nonce)', async () => {
      const h = await harness(await env());
      const sender = (await rpc('eth_accounts') as Address[])[5]!;
      const wallet = createWalletClient({ transport: custom(provider), account: sender });
      const nonce = Number(await rpc('eth_getTransactionCount', [sender, 'latest']));
      const send = (maxFeePerGas: bigint) => wallet.sendTransaction({
        to: sender, value: 0n, nonce, gas: 21_000n, maxFeePerGas, maxPriorityFeePerGas: maxFeePerGas / 2n, chain: null,
      });
      await rpc('evm_setAutomine', [false]);
      try {
        const replaced = await send(10_000_000_000n);
        await create(h, 'replaced', onChainScenario(nextRequestId++, [replaced]));
        await h.follower.poll();
        const replacement = await send(50_000_000_000n);
        expect(replacement).not.toBe(replaced);
        await rpc('evm_mine');
      } finally {
        await rpc('evm_setAutomine', [true]);
      }
      // The replacement is 1 block deep: a reorganisation could still bring the replaced one back.
      await h.follower.poll();
      await h.follower.poll();
      expect(await h.deployment('replaced')).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxPosted' }] });
      await chain.mine(CONFIRMATIONS - 1);
      await h.follower.poll();
      await h.follower.poll();
      const d = await h.deployment('replaced');
      expect(d.transactions[0]).toMatchObject({ status: 'TxFailed', errorMessage: `dropped: sender ${sender.toLowerCase()} has used nonce ${nonce} for another transaction` });
      expect(d).toMatchObject({ status: 'DeploymentFailed' });
    });

    it('keeps a transaction TxPosted when a reorganisation removes its block before the depth, and confirms it where it lands again', async () => {
      const h = await harness(await env());
      const requestId = nextRequestId++;
      const account = privateKeyToAccount(OWNER_KEY);
      expect(account.address.toLowerCase()).toBe(s.owner.toLowerCase());
      const nonce = Number(await rpc('eth_getTransactionCount', [s.owner, 'latest']));
      const raw = await account.signTransaction({
        to: s.verifier, data: setRequestsCall(requestId, s.sigV2Validator, stack.sigV2Params(born(20020101n))), nonce, gas: 3_000_000n,
        maxFeePerGas: 100_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, chainId: chain.chainId, type: 'eip1559',
      });
      const snapshot = await rpc('evm_snapshot');
      const hash = await rpc('eth_sendRawTransaction', [raw]) as Hash;
      const first = await rpc('eth_getTransactionReceipt', [hash]) as { blockNumber: Hex; blockHash: Hex };
      await create(h, 'reorg', onChainScenario(requestId, [hash]));
      await h.follower.poll();
      await h.follower.poll();
      expect(await h.deployment('reorg')).toMatchObject({ transactions: [{ status: 'TxPosted' }] });

      expect(await rpc('evm_revert', [snapshot])).toBe(true);
      await chain.mine(3);
      expect(await rpc('eth_getTransactionReceipt', [hash])).toBeNull();
      await h.follower.poll();
      await h.follower.poll();
      expect(await h.deployment('reorg')).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxPosted' }] });

      expect(await rpc('eth_sendRawTransaction', [raw])).toBe(hash);
      const again = await rpc('eth_getTransactionReceipt', [hash]) as { blockNumber: Hex; blockHash: Hex };
      expect(again.blockHash).not.toBe(first.blockHash);
      await chain.mine(CONFIRMATIONS - 1);
      await h.follower.poll();
      await h.follower.poll();
      const d = await h.deployment('reorg');
      expect(d.transactions[0]).toMatchObject({ status: 'TxConfirmed', blockNumber: Number(again.blockNumber) });
      expect(d).toMatchObject({ status: 'Deployed' });
    });

    it('holds the lease on the database\'s clock: an expired one is taken over, a live one is not, the holder renews it', async () => {
      const h = await harness(await env());
      expect(await h.store.holdLease('test-lease', 'a', -1000)).toBe(true);
      expect(await h.store.holdLease('test-lease', 'b', 60_000)).toBe(true);
      expect(await h.store.holdLease('test-lease', 'a', 60_000)).toBe(false);
      expect(await h.store.holdLease('test-lease', 'b', 60_000)).toBe(true);
      await h.store.releaseLease('test-lease', 'b');
      expect(await h.store.holdLease('test-lease', 'a', 60_000)).toBe(true);
    });

    it('fails a deployment whose request differs from the rule, naming the difference', async () => {
      const h = await harness(await env());
      const requestId = nextRequestId++;
      const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20100101n)) }]);
      await create(h, 'differs', onChainScenario(requestId, [transactionHash]));
      await chain.mine(CONFIRMATIONS);
      await h.follower.poll();
      await h.follower.poll();
      const d = await h.deployment('differs');
      expect(d.transactions[0]).toMatchObject({ status: 'TxConfirmed' });
      expect(d).toMatchObject({ status: 'DeploymentFailed' });
      expect(d.errorMessage).toMatch(/^the verifier's requests differ from the rules: rule "adult" does not match request \d+/);
      expect(d.errorMessage).toContain('its values are [20100101], the rule\'s [20020101]');
    });

    it('waits for a recorded multi-request\'s unsent setMultiRequest until CHAIN_TX_DROP_AFTER_MS past setRequests\' block (the follower\'s clock), then fails naming it', async () => {
      const h = await harness(await env());
      const requestId = nextRequestId++;
      const { transactionHash, blockNumber } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
      const multiRequest = { multiRequestId: '4242', requestIds: [requestId.toString()], groupIds: [] };
      await create(h, 'unsent', onChainScenario(requestId, [transactionHash], { multiRequest }));
      await chain.mine(CONFIRMATIONS);
      const mined = Number((await rpc('eth_getBlockByNumber', [`0x${blockNumber.toString(16)}`, false]) as { timestamp: Hex }).timestamp) * 1000;
      // Its clock stands just before the limit: confirmed, no verdict.
      h.clock.t = mined + DROP_AFTER_MS - 1;
      await h.follower.poll();
      await h.follower.poll();
      expect(await h.deployment('unsent')).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxConfirmed' }] });
      h.clock.t = mined + DROP_AFTER_MS;
      await h.follower.poll();
      const d = await h.deployment('unsent');
      expect(d).toMatchObject({ status: 'DeploymentFailed' });
      expect(d.errorMessage).toBe(`its multi-request 4242's setMultiRequest transaction was not recorded ${DROP_AFTER_MS / 1000} s after setRequests was mined`);
    });
  });

  it('follows 1,000 pending transactions in ceil(calls / CHAIN_RPC_BATCH_LIMIT) answered batches per poll (counted on an RPC proxy)', async () => {
    const p = await rpcProxy();
    const h = await harness({ DATA_DIR: tempDir() }, p.url);
    for (let k = 0; k < 4; k++) {
      await create(h, `many-${k}`, onChainScenario(nextRequestId++, Array.from({ length: 250 }, () => `0x${randomBytes(32).toString('hex')}`)));
    }
    for (let poll = 1; poll <= 3; poll++) {
      const before = p.batches.length;
      await h.follower.poll();
      const round = p.batches.slice(before);
      const calls = round.reduce((n, b) => n + b.calls.length, 0);
      // The head and chain id, then a receipt and a transaction lookup for each (none has a receipt or is pending).
      expect(calls).toBe(2 + 2 * 1000);
      expect(round).toHaveLength(Math.ceil(calls / 100));
      for (const batch of round) {
        expect(batch.calls.length).toBeLessThanOrEqual(100);
        expect(batch.answeredCalls).toBe(batch.calls.length);
      }
      expect(round.flatMap((b) => b.calls).filter((c) => c.method === 'eth_getTransactionReceipt')).toHaveLength(1000);
    }
    expect(h.follower.snapshot()).toEqual({ pending: 1000, rounds: 3, holding: true, behind: [] });
  });

  it('decides 20 deployments in one round with their getRequest reads in one HTTP request (counted on an RPC proxy)', async () => {
    const p = await rpcProxy();
    const h = await harness({ DATA_DIR: tempDir() }, p.url);
    const ids = Array.from({ length: 20 }, () => nextRequestId++);
    const { transactionHash } = await s.setRequests(ids.map((requestId) => ({ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) })));
    for (const [i, requestId] of ids.entries()) await create(h, `batched-${i}`, onChainScenario(requestId, [transactionHash]));
    await chain.mine(CONFIRMATIONS);
    await h.follower.poll();
    const before = p.batches.length;
    await h.follower.poll();
    const round = p.batches.slice(before);
    for (const [i] of ids.entries()) expect(await h.deployment(`batched-${i}`)).toMatchObject({ status: 'Deployed' });
    const getRequest = toFunctionSelector('getRequest(uint256)');
    const reading = round.filter((b) => b.calls.some((c) => (c as { params?: [{ data?: string }] }).params?.[0]?.data?.startsWith(getRequest)));
    expect(reading).toHaveLength(1);
    expect(reading[0]!.calls.filter((c) => c.method === 'eth_call')).toHaveLength(20);
    // The receipts' round, the reader's chain check, the 20 getRequest and the validator's circuits: not one per deployment.
    expect(round.length).toBeLessThanOrEqual(4);
  });

  it('loads at most CHAIN_FOLLOW_MAX_TXS transactions a round, in turn, and follows every one in the end', async () => {
    const p = await rpcProxy();
    const h = await harness({ DATA_DIR: tempDir() }, p.url, { CHAIN_FOLLOW_MAX_TXS: '2' });
    const ids = ['turn-1', 'turn-2', 'turn-3'];
    for (const id of ids) {
      const requestId = nextRequestId++;
      const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
      await create(h, id, onChainScenario(requestId, [transactionHash], { address: s.verifier }));
    }
    await chain.mine(CONFIRMATIONS);
    for (let poll = 0; poll < 6; poll++) {
      const before = p.batches.length;
      await h.follower.poll();
      const receipts = p.batches.slice(before).flatMap((b) => b.calls).filter((c) => c.method === 'eth_getTransactionReceipt');
      expect(receipts.length).toBeLessThanOrEqual(2);
      expect(h.follower.snapshot().pending).toBeLessThanOrEqual(2);
    }
    for (const id of ids) expect(await h.deployment(id)).toMatchObject({ status: 'Deployed', transactions: [{ status: 'TxConfirmed' }] });
  });

  it('asks the chain nothing for a DeploymentStarted deployment that cannot be decided (a TxPosted transaction without txHash)', async () => {
    const p = await rpcProxy();
    const h = await harness({ DATA_DIR: tempDir() }, p.url);
    const input = onChainScenario(nextRequestId++, [`0x${'a'.repeat(64)}`]);
    delete (input.smartContractDeployments[0]!.transactions![0] as { txHash?: string }).txHash;
    await create(h, 'no-hash', input);
    await h.follower.poll();
    expect(p.batches).toHaveLength(0);
    expect(h.follower.snapshot()).toMatchObject({ pending: 0, rounds: 0, behind: [] });
  });

  it('refuses a new txHash that is not a 32-byte hex hash (400 naming the field), and one stored before does not stop the others\' rounds', async () => {
    const app = await makeApp({});
    opened.push(() => app.close());
    const input = { ...onChainScenario(nextRequestId++, ['0x1234']), projectId: null, webhookUrl: undefined };
    const refused = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'short-hash', input } });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.body).toContain('/smartContractDeployments/0/transactions/0/txHash');

    const h = await harness({ DATA_DIR: tempDir() });
    // As stored before the check: the store itself takes it.
    await create(h, 'stored-short-hash', onChainScenario(nextRequestId++, ['0x1234']));
    const requestId = nextRequestId++;
    const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
    await create(h, 'good-hash', onChainScenario(requestId, [transactionHash]));
    await chain.mine(CONFIRMATIONS);
    await h.follower.poll();
    await h.follower.poll();
    expect(await h.deployment('good-hash')).toMatchObject({ status: 'Deployed', transactions: [{ status: 'TxConfirmed' }] });
    expect(await h.deployment('stored-short-hash')).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxPosted', txHash: '0x1234' }] });
    expect(h.follower.snapshot().behind).toEqual([]);
  });

  it('takes one call\'s JSON-RPC error as that hash\'s answer, not the round\'s failure (txRound on the node)', async () => {
    const { transactionHash } = await s.setRequests([{ requestId: nextRequestId++, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
    const answer = await txRound(chain.url, { receipts: ['0x1234', transactionHash], transactions: ['0x1234'], blocks: [], nonces: [], replays: [] },
      { timeoutMs: 30_000, batchLimit: 100, maxResponseBytes: 1 << 20 });
    expect(answer.receipts.has('0x1234')).toBe(false);
    expect(answer.transactions.has('0x1234')).toBe(false);
    expect(answer.receipts.get(transactionHash)).toMatchObject({ reverted: false });
  });

  it('drops the verdict when a PATCH changes the rules between its read and its record; the next round decides on the new rules', async () => {
    const ref: { h?: Harness } = {};
    let patched = false;
    const p = await rpcProxy(async (calls) => {
      const h = ref.h;
      if (patched || h === undefined || !calls.some((c) => c.method === 'eth_call')) return;
      patched = true;
      // A user's PATCH, while the follower reads the verifier's requests.
      const [row] = await h.store.find('raced', ['p1']);
      const next = structuredClone(row!.input);
      (next.queryConfigurations[0]!.query as { value: number }).value = 20100101;
      expect(await h.store.update(row!.seq, next, row!.revision, new Date(h.clock.t).toISOString())).not.toBeNull();
    });
    const h = ref.h = await harness({ DATA_DIR: tempDir() }, p.url);
    const requestId = nextRequestId++;
    const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
    await create(h, 'raced', onChainScenario(requestId, [transactionHash]));
    await chain.mine(CONFIRMATIONS);
    // The first round sees the receipt, the second its block and the verifier.
    await h.follower.poll();
    await h.follower.poll();
    expect(patched).toBe(true);
    expect(await h.deployment('raced')).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxConfirmed' }] });
    await h.follower.poll();
    const d = await h.deployment('raced');
    expect(d).toMatchObject({ status: 'DeploymentFailed' });
    expect(d.errorMessage).toContain('its values are [20020101], the rule\'s [20100101]');
  });

  it('keeps what it saw of a hash per chain: the same hash pending on another chain does not hold this one back', async () => {
    const other = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => {
        const calls = [JSON.parse(body)].flat() as { id: number; method: string }[];
        const result = (m: string) => ({ eth_chainId: '0x7a6a', eth_blockNumber: '0x20', eth_getBlockByNumber: { hash: `0x${'c'.repeat(64)}`, timestamp: '0x5' } } as Record<string, unknown>)[m] ?? null;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(calls.map((c) => ({ jsonrpc: '2.0', id: c.id, result: result(c.method) }))));
      });
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    opened.push(() => new Promise((resolve) => other.close(() => resolve())));
    const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const h = await harness({ DATA_DIR: tempDir() }, chain.url, { CHAIN_RPC_URLS: `${chain.chain}=${chain.url},eip155:31338=${otherUrl}`, CHAIN_DEFAULT: chain.chain });
    const requestId = nextRequestId++;
    const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
    await create(h, 'here', onChainScenario(requestId, [transactionHash]));
    const elsewhere = onChainScenario(nextRequestId++, [transactionHash]);
    elsewhere.smartContractDeployments[0]!.chain = 'eip155:31338';
    await create(h, 'elsewhere', elsewhere);
    await chain.mine(CONFIRMATIONS);
    for (let i = 0; i < 3; i++) await h.follower.poll();
    expect(await h.deployment('here')).toMatchObject({ status: 'Deployed', transactions: [{ status: 'TxConfirmed' }] });
    expect(await h.deployment('elsewhere')).toMatchObject({ status: 'DeploymentStarted', transactions: [{ status: 'TxPosted' }] });
  });

  it('follows through an RPC URL with user:password@ (sent as Basic authorization) and never logs the password', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => { lines.push(line); } }) as unknown as FastifyBaseLogger;
    const p = await rpcProxy(undefined, `Basic ${Buffer.from('rpcuser:S3CRET-KEY').toString('base64')}`);
    const h = await harness({ DATA_DIR: tempDir() }, p.url.replace('http://', 'http://rpcuser:S3CRET-KEY@'), {}, log);
    const requestId = nextRequestId++;
    const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
    await create(h, 'basic', onChainScenario(requestId, [transactionHash]));
    await chain.mine(CONFIRMATIONS);
    await h.follower.poll();
    await h.follower.poll();
    expect(await h.deployment('basic')).toMatchObject({ status: 'Deployed', transactions: [{ status: 'TxConfirmed' }] });
    expect(p.refused).toBe(0);

    const closed = await harness({ DATA_DIR: tempDir() }, 'http://rpcuser:S3CRET-KEY@127.0.0.1:9/', {}, log);
    await create(closed, 'basic-closed', onChainScenario(nextRequestId++, [transactionHash]));
    await closed.follower.poll();
    expect(closed.follower.snapshot().behind).toEqual([chain.chain]);
    expect(lines.some((l) => l.includes('deployment transactions not followed this round'))).toBe(true);
    expect(lines.join('\n')).not.toContain('S3CRET-KEY');
  });

  it('takes a deployment\'s address, where it names none, from the contract its transaction created (receipt.contractAddress)', async () => {
    const h = await harness({ DATA_DIR: tempDir() });
    const wallet = createWalletClient({ transport: custom(provider), account: s.owner });
    // Init code returning a 1-byte runtime (STOP).
    const hash = await wallet.deployContract({ abi: [], bytecode: '0x600180600b6000396000f300', chain: null });
    const { contractAddress } = await rpc('eth_getTransactionReceipt', [hash]) as { contractAddress: Hex };
    const input = { ...onChainScenario(nextRequestId++, [hash], { address: null }), type: 'ChallengeQuery', queryConfigurations: [] } as unknown as Scenario;
    await create(h, 'created', input);
    await chain.mine(CONFIRMATIONS);
    await h.follower.poll();
    await h.follower.poll();
    expect(await h.deployment('created')).toMatchObject({ status: 'Deployed', address: contractAddress.toLowerCase(), transactions: [{ status: 'TxConfirmed' }] });
  });

  it('leaves unset and fails a deployment without address whose transactions call different contracts, naming why', async () => {
    const h = await harness({ DATA_DIR: tempDir() });
    const requestId = nextRequestId++;
    const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
    const wallet = createWalletClient({ transport: custom(provider), account: s.owner });
    const transfer = await wallet.sendTransaction({ to: s.owner, value: 0n, chain: null });
    await create(h, 'two-targets', onChainScenario(requestId, [transactionHash, transfer], { address: null }));
    await chain.mine(CONFIRMATIONS);
    await h.follower.poll();
    await h.follower.poll();
    const d = await h.deployment('two-targets');
    expect(d).toMatchObject({ status: 'DeploymentFailed', transactions: [{ status: 'TxConfirmed' }, { status: 'TxConfirmed' }] });
    expect(d.address ?? null).toBeNull();
    expect(d.errorMessage).toMatch(/its transactions address different contracts \(.+\) and it names no address/);
  });

  it.skipIf(!pgAvailable)('runs on one instance at a time across instances sharing PostgreSQL, the other taking over when it stops', async () => {
    const env = await stores[1]!.env();
    const [a, b] = [await harness(env), await harness(env)];
    const requestId = nextRequestId++;
    const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
    await create(a, 'leased', onChainScenario(requestId, [transactionHash]));
    await a.follower.poll();
    await b.follower.poll();
    expect(a.follower.snapshot()).toMatchObject({ holding: true, rounds: 1 });
    expect(b.follower.snapshot()).toMatchObject({ holding: false, rounds: 0 });
    await a.follower.stop();
    await chain.mine(CONFIRMATIONS);
    await b.follower.poll();
    await b.follower.poll();
    expect(b.follower.snapshot()).toMatchObject({ holding: true, rounds: 2 });
    expect(await b.deployment('leased')).toMatchObject({ status: 'Deployed', transactions: [{ status: 'TxConfirmed' }] });
  });

  it('follows a TxPosted transaction a PATCH recorded, in the running app, to Deployed (revision by service:chain)', async () => {
    const app = await makeApp({ CHAIN_RPC_URLS: `${chain.chain}=${chain.url}`, CHAIN_CONFIRMATIONS: String(CONFIRMATIONS), CHAIN_FOLLOW_INTERVAL_MS: '100' });
    opened.push(() => app.close());
    const requestId = nextRequestId++;
    const created = await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: auth,
      payload: { id: 'patched', input: { ...onChainScenario(requestId, []), projectId: null, webhookUrl: undefined, smartContractDeployments: [] } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
    const deployment = onChainScenario(requestId, [transactionHash]).smartContractDeployments;
    const patched = await app.inject({ method: 'PATCH', url: '/compliance/scenarios/patched', headers: auth, payload: { input: { smartContractDeployments: deployment } } });
    expect(patched.statusCode, patched.body).toBe(200);
    await chain.mine(CONFIRMATIONS);
    const read = async () => (await app.inject({ method: 'GET', url: '/compliance/scenarios/patched', headers: auth })).json() as { input: Scenario; revision: number };
    await expect.poll(async () => (await read()).input.smartContractDeployments[0]?.status, { timeout: 30_000, interval: 100 }).toBe('Deployed');
    const { revision } = await read();
    const last = await app.inject({ method: 'GET', url: `/compliance/scenarios/patched/revisions/${revision}`, headers: auth });
    expect(last.json()).toMatchObject({ author: 'service:chain' });
  });

  it('records live in a project that requires approval: a deployment\'s status is not a rule change', async () => {
    const app = await makeApp({
      CHAIN_RPC_URLS: `${chain.chain}=${chain.url}`, CHAIN_CONFIRMATIONS: String(CONFIRMATIONS), CHAIN_FOLLOW_INTERVAL_MS: '100',
      SCENARIO_APPROVAL_PROJECTS: '*',
    });
    opened.push(() => app.close());
    const requestId = nextRequestId++;
    const { transactionHash } = await s.setRequests([{ requestId, validator: s.sigV2Validator, params: stack.sigV2Params(born(20020101n)) }]);
    const input = { ...onChainScenario(requestId, [transactionHash]), projectId: null, webhookUrl: undefined };
    const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'four-eyes', input } });
    expect(created.statusCode, created.body).toBe(201);
    await chain.mine(CONFIRMATIONS);
    const read = async () => (await app.inject({ method: 'GET', url: '/compliance/scenarios/four-eyes', headers: auth })).json() as { input: Scenario; revision: number };
    await expect.poll(async () => (await read()).input.smartContractDeployments[0]?.status, { timeout: 30_000, interval: 100 }).toBe('Deployed');
    const { revision } = await read();
    const last = await app.inject({ method: 'GET', url: `/compliance/scenarios/four-eyes/revisions/${revision}`, headers: auth });
    expect(last.json()).toMatchObject({ author: 'service:chain', state: 'live' });
  });

  it('says on /health/ready (200, details) which chain it cannot follow while the RPC endpoint does not answer', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const app = await makeApp({ CHAIN_RPC_URLS: `${chain.chain}=http://127.0.0.1:${port}`, CHAIN_FOLLOW_INTERVAL_MS: '100' });
    opened.push(() => app.close());
    const ready = async () => (await app.inject({ method: 'GET', url: '/health/ready' })).json() as Record<string, unknown>;
    expect(await ready()).toEqual({ status: 'ok' });
    const input = { ...onChainScenario(nextRequestId++, [`0x${randomBytes(32).toString('hex')}`]), projectId: null, webhookUrl: undefined };
    const created = await app.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id: 'unreachable', input } });
    expect(created.statusCode, created.body).toBe(201);
    await expect.poll(ready, { timeout: 30_000, interval: 100 }).toEqual({ status: 'ok', details: { chainFollower: { behind: [chain.chain], pending: 1 } } });
  });
});
