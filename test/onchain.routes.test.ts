/** OnChainZKP through HTTP: execute answers from a verifier contract on a real local EVM (Hardhat). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { toChecksumAddress } from '../src/domain/address.js';
import { at } from './elements.js';
import { auth, makeApp, scenario } from './helpers.js';
import { startLocalChain, type LocalChain } from './chain/evm.js';

let chain: LocalChain;
let app: FastifyInstance;
let verifier: string;
let holder: string;
let stranger: string;
let submitTx: string;

const queryConfigurations = [
  { id: 'kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } },
  { id: 'age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 17, operator: '$gt' } },
];
const deployment = (over: Record<string, unknown> = {}) => ({
  id: 'dep-1', contractName: 'ScenarioVerifier', status: 'Deployed', version: '1', address: verifier, chain: chain.chain,
  transactions: [{ id: 'tx-1', actionName: 'ScenarioDeploy', status: 'TxConfirmed', txHash: `0x${'ab'.repeat(32)}`, blockNumber: 1 }],
  ...over,
});
const execute = (address: string, scenarioId = 'onchain') =>
  app.inject({ method: 'POST', url: '/compliance/scenarios/execute', headers: auth, payload: { address, credentials: [], scenarioId } });

beforeAll(async () => {
  chain = await startLocalChain();
  verifier = await chain.deploy('TestUniversalVerifier');
  await chain.write(verifier as `0x${string}`, 'TestUniversalVerifier', 'setRequest', [1n]);
  await chain.write(verifier as `0x${string}`, 'TestUniversalVerifier', 'setRequest', [2n]);
  holder = toChecksumAddress(at(chain.accounts, 1));
  stranger = toChecksumAddress(at(chain.accounts, 2));
  // The holder submits a proof for request 1 only.
  submitTx = (await chain.write(verifier as `0x${string}`, 'TestUniversalVerifier', 'submitResponse', [1n], chain.accounts[1])).hash;
  // The test double shows no requests: accepted unchecked here (test/demo-onchain.test.ts runs the real contracts).
  app = await makeApp({
    CHAIN_RPC_URLS: `${chain.chain}=${chain.url}`, CHAIN_CACHE_TTL_MS: '0', CHAIN_READ_TIMEOUT_MS: '30000', CHAIN_ALLOW_UNCHECKED_REQUESTS: 'true',
  });
  const created = await app.inject({
    method: 'POST', url: '/compliance/scenarios', headers: auth,
    payload: { id: 'onchain', input: scenario({ type: 'OnChainZKP', queryConfigurations, smartContractDeployments: [deployment()] }) },
  });
  expect(created.statusCode).toBe(201);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await chain?.stop();
});

describe('OnChainZKP execute', () => {
  it('is valid for the address whose proof the verifier holds, with txHash, verifier and block; not-valid for a request it lacks', async () => {
    const res = await execute(holder);
    expect(res.statusCode).toBe(200);
    const [kyc, age] = res.json();
    expect(kyc.objectType).toBe('OnChainZKP');
    expect(kyc.result.status).toBe('valid');
    expect(kyc.result.result).toMatchObject({
      is_valid: true, txHash: submitTx, scenarioVerifierAddress: verifier, chain: chain.chain,
    });
    expect(kyc.result.result.reasons).toEqual([expect.stringMatching(/^request 1 was not compared with rule "kyc" \(CHAIN_ALLOW_UNCHECKED_REQUESTS=true\)/)]);
    expect(kyc.result.result.blockNumber).toBeGreaterThan(0);
    expect(age.result.status).toBe('not-valid');
    expect(age.result.result.is_valid).toBe(false);
    expect(age.result.result.reasons.join(' ')).toMatch(/2/);
  });

  it('is not-valid for another address', async () => {
    const results = (await execute(stranger)).json();
    expect(results.map((r: any) => r.result.status)).toEqual(['not-valid', 'not-valid']);
  });

  it('answers error, never a pass, when the chain does not answer, and recovers', async () => {
    await chain.stop();
    try {
      const results = (await execute(holder)).json();
      for (const r of results) {
        expect(r.result.status).toBe('error');
        expect(r.result.result.is_valid).toBe(false);
        expect(r.result.result.reasons.length).toBeGreaterThan(0);
        expect(JSON.stringify(r)).not.toContain(chain.url); // no RPC URL leaks
      }
    } finally {
      await chain.start();
    }
    await new Promise((r) => setTimeout(r, 1100)); // past CHAIN_ERROR_TTL_MS
    expect((await execute(holder)).json()[0].result.status).toBe('valid');
  });

  it('answers error when the scenario has no usable deployment', async () => {
    await app.inject({
      method: 'POST', url: '/compliance/scenarios', headers: auth,
      payload: { id: 'undeployed', input: scenario({ type: 'OnChainZKP', queryConfigurations, smartContractDeployments: [deployment({ status: 'DeploymentStarted', address: null })] }) },
    });
    const results = (await execute(holder, 'undeployed')).json();
    expect(results.map((r: any) => r.result.status)).toEqual(['error', 'error']);
    expect(results[0].result.result.reasons.join(' ')).toMatch(/deploy/i);
  });

  it('records on-chain verdicts in the audit log', async () => {
    const id = (await execute(holder)).json()[0].executionId;
    const record = (await app.inject({ method: 'GET', url: `/compliance/executions/${id}`, headers: auth })).json();
    expect(record.results[0].result.result.txHash).toBe(submitTx);
  });
});

describe('OnChainZKP dry-run', () => {
  it('reads the chain as execute does: the same results, each rule traced to the chain read, nothing recorded', async () => {
    const executed = (await execute(holder)).json();
    const before = (await app.inject({ method: 'GET', url: '/compliance/scenarios/onchain/executions?limit=100', headers: auth })).json().items.length;
    const dry = await app.inject({
      method: 'POST', url: '/compliance/scenarios/dry-run', headers: auth, payload: { scenario: { id: 'onchain' }, address: holder, credentials: [] },
    });
    expect(dry.statusCode, dry.body).toBe(200);
    const { results, trace } = dry.json();
    const comparable = (list: Array<{ executionId: string }>) => JSON.parse(JSON.stringify(list).replaceAll(at(list, 0).executionId, '(id)'));
    expect(comparable(results)).toEqual(comparable(executed));
    expect(trace.map((t: any) => [t.status, t.decidingCheck?.check])).toEqual([['valid', undefined], ['not-valid', 'chain']]);
    expect(at(trace as Array<{ note?: string }>, 0).note).toContain(verifier);
    const after = (await app.inject({ method: 'GET', url: '/compliance/scenarios/onchain/executions?limit=100', headers: auth })).json().items.length;
    expect(after).toBe(before);
  });
});

describe('deployment states on PATCH', () => {
  it('refuses a PATCH that moves a deployment backwards, and an unknown status, naming the field', async () => {
    const back = await app.inject({
      method: 'PATCH', url: '/compliance/scenarios/onchain', headers: auth,
      payload: { input: { smartContractDeployments: [deployment({ status: 'DeploymentStarted' })] } },
    });
    expect(back.statusCode).toBe(400);
    expect(back.json().errors.map((e: any) => e.field)).toContain('body.input.smartContractDeployments.0.status');
    const unknown = await app.inject({
      method: 'PATCH', url: '/compliance/scenarios/onchain', headers: auth,
      payload: { input: { smartContractDeployments: [deployment({ status: 'Whatever' })] } },
    });
    expect(unknown.statusCode).toBe(400);
    const forward = await app.inject({
      method: 'PATCH', url: '/compliance/scenarios/onchain', headers: auth,
      payload: { input: { smartContractDeployments: [deployment({ status: 'Deprecated' })] } },
    });
    expect(forward.statusCode).toBe(200);
  });
});
