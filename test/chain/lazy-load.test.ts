/**
 * Memory: viem (~6 MB of heap, more RSS) serves only the chains of CHAIN_RPC_URLS (OnChainZKP reads, on-chain
 * revocation statuses), so a server with no chain configured must never load it. viem is ESM, so require.cache does
 * not show it: a module resolve hook (viem-probe.mjs) records every module Node resolves under node_modules/viem/.
 * The hook is registered before the app is imported (so dynamically, below: static imports would come first).
 *
 * Module state is per process: this relies on vitest's default isolation (pool forks: each test file in a process of
 * its own). Under --no-isolate another file may have loaded viem first.
 */
import fs from 'node:fs';
import { register } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import type { StatusIo } from '../../src/trust/revocation.js';
import { TEMP_ROOT_VARIABLE } from '../temp-root.global.js';

// In the run's temporary root (removed when the run ends; helpers.ts, which has tempDir, loads the app: imported below).
const loaded = path.join(fs.mkdtempSync(path.join(process.env[TEMP_ROOT_VARIABLE] ?? os.tmpdir(), 'scs-viem-')), 'viem-modules.txt');
fs.writeFileSync(loaded, '');
register('./viem-probe.mjs', import.meta.url, { data: { out: loaded } });
const viemModules = () => fs.readFileSync(loaded, 'utf8').split('\n').filter(Boolean);

const { auth, executeOnce, makeApp, scenario } = await import('../helpers.js');
const { onchainStatusResolver } = await import('../../src/trust/onchain-status.js');

let app: FastifyInstance | undefined;

afterAll(async () => {
  await app?.close();
});

const execute = (scenarioId: string) => executeOnce(app!, scenarioId);
const create = async (id: string, input: unknown) => {
  const res = await app!.inject({ method: 'POST', url: '/compliance/scenarios', headers: auth, payload: { id, input } });
  expect(res.statusCode, res.body).toBe(201);
};
const VERIFIER = '0x52908400098527886E0F7030069857D2E4169EE7';
const onChainScenario = (deployment: Record<string, unknown>) => scenario({
  type: 'OnChainZKP',
  queryConfigurations: [{ id: 'kyc', query: { type: 'IDInformation', requestId: 1, attribute: 'reviewAnswer', value: 'GREEN', operator: '$eq' } }],
  smartContractDeployments: [{ id: 'dep-1', contractName: 'ScenarioVerifier', status: 'Deployed', version: '1', address: VERIFIER, ...deployment }],
});

// In order even under --sequence.shuffle: the last test loads viem for the rest of the file.
describe('viem loads only where a chain is configured (CHAIN_RPC_URLS)', { shuffle: false }, () => {
  it('is not loaded by starting the app and creating and executing a ChallengeQuery scenario', async () => {
    app = await makeApp();
    await create('cq', scenario());
    expect((await execute('cq')).map((r) => r.result.status)).toEqual(['valid', 'valid']);
    expect(viemModules().slice(0, 3)).toEqual([]);
  });

  it('is not loaded by executing OnChainZKP scenarios, which answer error as without chains before', async () => {
    await create('on-chain', onChainScenario({ chain: 'eip155:31337' }));
    await create('no-chain', onChainScenario({}));
    const [onChain] = await execute('on-chain');
    expect(onChain?.result).toMatchObject({ status: 'error', result: { is_valid: false } });
    expect(onChain?.result.result.reasons).toEqual(['no RPC endpoint is configured for chain eip155:31337, where deployment "dep-1" lives (CHAIN_RPC_URLS)']);
    const [noChain] = await execute('no-chain');
    expect(noChain?.result).toMatchObject({ status: 'error', result: { is_valid: false } });
    expect(noChain?.result.result.reasons).toEqual(['deployment "dep-1" names no chain and no default chain is configured (CHAIN_DEFAULT)']);
    expect(viemModules().slice(0, 3)).toEqual([]);
    await app!.close();
    app = undefined;
  });

  it('is not loaded by the on-chain status resolver over no chains, which fails every status', async () => {
    const resolve = await onchainStatusResolver({ chains: new Map(), timeoutMs: 3000 });
    const status = { id: `did:iden3:x/credentialStatus?contractAddress=80002:${VERIFIER}`, type: 'Iden3OnchainSparseMerkleTreeProof2023' };
    await expect(resolve({ status, nonce: 7n, issuerDid: 'did:iden3:x', holderDid: 'did:iden3:x' }, {} as StatusIo))
      .rejects.toThrow('the status contract is on eip155:80002, which is not configured (CHAIN_RPC_URLS)');
    expect(viemModules().slice(0, 3)).toEqual([]);
  });

  it('loads at start where CHAIN_RPC_URLS is set', async () => {
    // Nothing is read at start: the endpoint need not answer.
    app = await makeApp({ CHAIN_RPC_URLS: 'eip155:31337=http://127.0.0.1:9' });
    expect(viemModules().length).toBeGreaterThan(0);
  });
});
