/**
 * evaluateOnChainRules end to end against a real EVM: a scenario's deployments and query configurations in, one
 * outcome per query configuration out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAddress, type Address } from 'viem';
import { evaluateOnChainRules, type OnChainInput } from '../../src/chain/index.js';
import { ChainReader } from '../../src/chain/reader.js';
import { RequestCheck } from '../../src/chain/request-check.js';
import type { SmartContractDeployment } from '../../src/domain/deployments.js';
import type { QueryConfiguration } from '../../src/schemas/scenario.js';
import { startLocalChain, type LocalChain } from './evm.js';
import { loadConfig } from '../../src/config.js';

/** The settings the configuration schema defaults (no chains). */
const chainDefaults = loadConfig({}).chains;

let chain: LocalChain;
let alice: Address;
let bob: Address;
let verifier: Address;
let submission: { hash: string; blockNumber: bigint };
let deployBlock: bigint;
let reader: ChainReader;

const queryConfigurations: QueryConfiguration[] = [
  { id: 'kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } },
  { id: 'age', query: { type: 'IDInformation', requestId: 2, attribute: 'personalData.age', value: 18, operator: '$gt' } },
  { id: 'unknown-request', query: { type: 'IDInformation', requestId: 77, operator: '$noop' } },
  { id: 'no-request', query: { type: 'IDInformation', operator: '$noop' } },
  { id: 'kyc-again', query: { type: 'ProofOfResidence', requestId: 1, operator: '$noop' } },
];

function deployment(overrides: Partial<SmartContractDeployment> & { chain?: string } = {}): SmartContractDeployment {
  return {
    id: 'dep-1',
    contractName: 'ScenarioVerifier',
    status: 'Deployed',
    address: verifier,
    chain: chain.chain,
    transactions: [{ id: 'tx-1', actionName: 'ScenarioDeploy', status: 'TxConfirmed', txHash: `0x${'01'.repeat(32)}`, blockNumber: Number(deployBlock) }],
    ...overrides,
  } as SmartContractDeployment;
}

const input = (overrides: Partial<OnChainInput> = {}): OnChainInput => ({
  queryConfigurations,
  smartContractDeployments: [deployment()],
  address: alice,
  ...overrides,
});

beforeAll(async () => {
  chain = await startLocalChain();
  [, alice, bob] = chain.accounts as [Address, Address, Address];
  verifier = await chain.deploy('TestUniversalVerifier');
  deployBlock = await chain.blockNumber();
  await chain.write(verifier, 'TestUniversalVerifier', 'setRequest', [1n]);
  await chain.write(verifier, 'TestUniversalVerifier', 'setRequest', [2n]);
  submission = await chain.write(verifier, 'TestUniversalVerifier', 'submitResponse', [1n], alice);
  // Generous: a busy machine answers slowly, and timeouts are reader.test.ts's subject.
  reader = new ChainReader({ ...chainDefaults, chains: [{ chain: chain.chain, chainId: chain.chainId, url: chain.url }], timeoutMs: 30_000, errorTtlMs: 0, cacheTtlMs: 0 });
});

afterAll(async () => {
  await chain?.stop();
});

/**
 * The test double shows no requests (no getRequest), so these tests, about proof statuses, accept requests unchecked
 * (CHAIN_ALLOW_UNCHECKED_REQUESTS=true); test/chain/iden3-requests.test.ts checks requests on the real contracts.
 */
const evaluate = (r: ChainReader, i: OnChainInput) => evaluateOnChainRules(r, i, new RequestCheck({ allowUnchecked: true }));
const NOT_COMPARED = 'request 1 was not compared with rule "kyc" (CHAIN_ALLOW_UNCHECKED_REQUESTS=true): ' +
  'verifier %s does not show its requests (no getRequest or getZKPRequest answered)';

describe('evaluateOnChainRules', () => {
  it('valid for the address that submitted the proof, with txHash, verifier address and block number', async () => {
    const head = Number(await chain.blockNumber());
    const out = await evaluate(reader, input());
    expect(out.map((o) => [o.objectId, o.status])).toEqual([
      ['kyc', 'valid'], ['age', 'not-valid'], ['unknown-request', 'error'], ['no-request', 'error'], ['kyc-again', 'valid'],
    ]);
    expect(out[0]).toEqual({
      objectId: 'kyc', requestId: '1', status: 'valid', is_valid: true, reasons: [NOT_COMPARED.replace('%s', getAddress(verifier))],
      txHash: submission.hash, scenarioVerifierAddress: verifier, chain: 'eip155:31337', blockNumber: head,
    });
    expect(out[1]).toMatchObject({ is_valid: false, blockNumber: head, scenarioVerifierAddress: verifier });
    expect(out[1]?.reasons[0]).toContain('no verified proof of request 2');
    expect(out[2]?.reasons[0]).toContain('request 77 is not set on verifier');
    expect(out[3]).toMatchObject({ requestId: null, blockNumber: null });
    expect(out[3]?.reasons[0]).toContain('no requestId');
    // Only a valid rule carries a txHash: the three that are not valid carry none (fails on an empty list too).
    expect(out.filter((o) => o.status !== 'valid').map((o) => o.txHash)).toEqual([undefined, undefined, undefined]);
  });

  it('error by default: a verifier that does not show its requests cannot be compared with the rules', async () => {
    const out = await evaluateOnChainRules(reader, input());
    expect(out[0]).toMatchObject({ status: 'error', is_valid: false });
    expect(out[0]?.reasons[0]).toMatch(/cannot tell whether request 1 .* does not show its requests .*CHAIN_ALLOW_UNCHECKED_REQUESTS=true/);
    expect(out[0]?.txHash).toBeUndefined();
  });

  it('not-valid for another address', async () => {
    const out = await evaluate(reader, input({ address: bob }));
    expect(out.slice(0, 2).map((o) => o.status)).toEqual(['not-valid', 'not-valid']);
    expect(out[0]?.reasons[0]).toContain(bob);
  });

  it('not-valid for an address that is not an EVM address', async () => {
    const out = await evaluate(reader, input({ address: 'tz1VSUr8wwNhLAzempoch5d6hLRiTh8Cjcjb' }));
    expect(out).toHaveLength(queryConfigurations.length);
    expect(out.every((o) => o.status === 'not-valid' && o.reasons[0]?.includes('EVM address'))).toBe(true);
  });

  it('error when the scenario has no usable deployment', async () => {
    const started = await evaluate(reader, input({
      smartContractDeployments: [deployment({ status: 'DeploymentStarted', address: null }), deployment({ id: 'dep-2', status: 'Deprecated' })],
    }));
    expect(started).toHaveLength(queryConfigurations.length);
    expect(started.every((o) => o.status === 'error' && o.scenarioVerifierAddress === null)).toBe(true);
    expect(started[0]?.reasons).toEqual([
      'the scenario has no usable smart contract deployment (one with status Deployed and a contract address)',
      'deployment "dep-1" is "DeploymentStarted", not Deployed',
      'deployment "dep-2" is "Deprecated", not Deployed',
    ]);
    const none = await evaluate(reader, input({ smartContractDeployments: [] }));
    expect(none[0]?.reasons[1]).toBe('smartContractDeployments is empty');
  });

  it('error when no RPC is configured for the deployment chain', async () => {
    const out = await evaluate(reader, input({ smartContractDeployments: [deployment({ chain: 'eip155:80002' })] }));
    expect(out[0]).toMatchObject({ status: 'error', chain: 'eip155:80002', scenarioVerifierAddress: verifier, blockNumber: null });
    expect(out[0]?.reasons[0]).toContain('no RPC endpoint is configured for chain eip155:80002');
  });

  it('a deployment without chain uses the default chain', async () => {
    const { chain: _drop, ...noChain } = deployment() as SmartContractDeployment & { chain?: string };
    const out = await evaluate(reader, input({ smartContractDeployments: [noChain] }));
    expect(out[0]?.status).toBe('valid');
  });

  it('the last usable deployment is used, and one on the caller chain is preferred', async () => {
    const other = await chain.deploy('TestUniversalVerifier');
    const deployments = [deployment(), deployment({ id: 'dep-2', address: other })];
    const out = await evaluate(reader, input({ smartContractDeployments: deployments }));
    expect(out[0]).toMatchObject({ scenarioVerifierAddress: other, status: 'error' }); // request 1 is not set there

    const two = new ChainReader({
      ...chainDefaults,
      chains: [{ chain: chain.chain, chainId: chain.chainId, url: chain.url }, { chain: 'eip155:80002', chainId: 80002, url: 'http://127.0.0.1:9/' }],
      timeoutMs: 30_000,
    });
    const mixed = [deployment(), deployment({ id: 'dep-2', chain: 'eip155:80002' })];
    const preferred = await evaluate(two, input({ smartContractDeployments: mixed, chain: 'eip155:31337' }));
    expect(preferred[0]).toMatchObject({ status: 'valid', chain: 'eip155:31337' });
  });

  it('error, with a reason, while the node is stopped', async () => {
    await chain.stop();
    try {
      const out = await evaluate(reader, input());
      expect(out.map((o) => o.status)).toEqual(['error', 'error', 'error', 'error', 'error']);
      expect(out[0]?.reasons[0]).toMatch(/could not read the proof status of request 1 .*eip155:31337 is unreachable/);
      expect(out[0]).toMatchObject({ is_valid: false, scenarioVerifierAddress: verifier, blockNumber: null });
    } finally {
      await chain.start();
    }
    const back = await evaluate(reader, input());
    expect(back[0]?.status).toBe('valid');
  });
});
