/**
 * Issuer states read from the real iden3 State contract (@iden3/contracts 3.4.0 build artifact, VERSION 2.6.3, behind
 * an ERC-1967 proxy as deployed) on the local Hardhat node of the chain tests, with Polygon Amoy's chain id so that the
 * js-sdk issuers' did:iden3:polygon:amoy DIDs name it (ISSUER_STATE_SOURCE=chain). Stubs, said plainly: the
 * state-transition verifier accepts every proof (TestStateTransitionVerifier.sol: no Groth16 proof of each transition
 * is made here), and the Poseidon libraries it links are keccak stand-ins (TestPoseidonStandIns.sol: the artifact's
 * own are empty placeholders; only the contract's GIST tree, which this service does not read, hashes with them).
 * What is real: the State contract itself, its transitions, its storage of states and its `stateExists`, read through
 * CHAIN_RPC_URLS's client.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, encodeFunctionData, http, type Address, type Hex } from 'viem';
import { createCredentialVerifier, type TrustVerdict } from '../../src/trust/index.js';
import { stateContractPublication } from '../../src/trust/state-contract.js';
import { DID } from '../../src/trust/iden3.js';
import type { Credential } from '../../src/schemas/credential.js';
import { link, startLocalChain, type Artifact, type BuildArtifact, type LocalChain } from '../chain/evm.js';
import { only } from '../elements.js';
import { startPeers, type Json, type Peers } from './mtp-peers.js';
import { trustOptions } from './options.js';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const artifact = (name: string) => require(`@iden3/contracts/build/contracts/${name}.json`) as BuildArtifact;
const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const NOW = Date.now();
const MTP = 'Iden3SparseMerkleTreeProof';

let chain: LocalChain;
let peers: Peers;
let stateContract: Address;
const creds = {} as Record<'mtp' | 'later' | 'unpublished', Json>;
const mtpOf = (c: Json): Json => (c.proof as Json[]).find((p) => p.type === MTP) as Json;

async function deployState(): Promise<Address> {
  const deploy = (a: BuildArtifact, libraries: Record<string, Address> = {}) =>
    chain.deployArtifact({ abi: a.abi, bytecode: link(a, libraries) } as Artifact);
  const [p1, p2, p3] = [await chain.deploy('PoseidonUnit1L'), await chain.deploy('PoseidonUnit2L'), await chain.deploy('PoseidonUnit3L')];
  const smtLib = await deploy(artifact('SmtLib'), { PoseidonUnit2L: p2, PoseidonUnit3L: p3 });
  const stateLib = await deploy(artifact('StateLib'));
  const implementation = await deploy(artifact('State'), { PoseidonUnit1L: p1, SmtLib: smtLib, StateLib: stateLib });
  const proxy = await chain.deploy('TestERC1967Proxy', [implementation]);
  const verifier = await chain.deploy('TestStateTransitionVerifier');
  // did:iden3:polygon:amoy identities: id type 0x0113 (method iden3 = 0x01, polygon amoy = 0x13).
  await send(proxy, encodeFunctionData({ abi: artifact('State').abi, functionName: 'initialize', args: [verifier, '0x0113', chain.accounts[0], '0x0000000000000000000000000000000000000000'] }));
  return proxy;
}

async function send(to: Address, data: Hex): Promise<void> {
  const wallet = createWalletClient({ transport: http(chain.url), account: chain.accounts[0]! });
  const hash = await wallet.sendTransaction({ to, data, chain: null });
  const receipt = await createPublicClient({ transport: http(chain.url) }).waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new Error('transaction reverted');
}

/** The issuer's transition from `from` to `to` (hex states), as its issuer node would publish it. */
async function transit(did: string, from: string, to: string, genesis: boolean): Promise<void> {
  const id = DID.idFromDID(DID.parse(did)).bigInt();
  const h = (x: string) => BigInt(`0x${Buffer.from(x, 'hex').reverse().toString('hex')}`); // iden3 hashes are little-endian hex
  await send(stateContract, encodeFunctionData({
    abi: artifact('State').abi, functionName: 'transitState',
    args: [id, h(from), h(to), genesis, [0n, 0n], [[0n, 0n], [0n, 0n]], [0n, 0n]],
  }));
}

const settings = () => ({
  chains: new Map([[chain.chain, { chain: chain.chain, chainId: chain.chainId, url: chain.url }]]),
  timeoutMs: 3000,
  errorTtlMs: 0,
});
function verifier(contracts: Record<string, Address> = { [chain.chain]: stateContract }) {
  const fromChain = stateContractPublication({ chains: settings(), contracts, shortCacheMs: 0, clock: Date.now });
  return createCredentialVerifier(
    trustOptions({ mode: 'strict', trustedIssuers: [peers.a.did], timeoutMs: 5000, revocationCacheMs: 0, issuerStates: { source: 'chain', contracts } }),
    { statePublication: () => fromChain },
  );
}
const one = async (c: Json, v = verifier()): Promise<TrustVerdict> =>
  only(await v.verify([c as unknown as Credential], { address: ADDRESS, now: NOW }));

beforeAll(async () => {
  chain = await startLocalChain(path.join(here, 'hardhat-amoy.config.cjs'));
  expect(chain.chainId).toBe(80002);
  stateContract = await deployState();
  peers = await startPeers(['chain-tests-issuer-A-00000000001', 'chain-tests-issuer-B-00000000002']);
  const base = { subjectId: `did:pkh:eip155:1:${ADDRESS}`, claims: { reviewAnswer: 'GREEN', personalData: { age: 30 } }, issuanceDate: new Date(NOW - 86_400_000), expirationDate: new Date(NOW + 86_400_000) };
  const genesis = await peers.a.currentState();
  creds.mtp = await peers.a.issue({ ...base, nonce: 5001, proof: 'mtp' });
  const s1 = mtpOf(creds.mtp).issuerData.state.value as string;
  await transit(peers.a.did, genesis, s1, true);
  creds.later = await peers.a.issue({ ...base, nonce: 5002, proof: 'mtp' });
  await transit(peers.a.did, s1, mtpOf(creds.later).issuerData.state.value as string, false);
  creds.unpublished = await peers.a.issue({ ...base, nonce: 5003, proof: 'mtp' }); // never transited to
}, 120_000);

afterAll(async () => {
  await Promise.all([chain?.stop(), peers?.close()]);
});

describe('Iden3SparseMerkleTreeProof states read from the State contract (ISSUER_STATE_SOURCE=chain)', () => {
  it('a state the issuer transited to is published, a replaced one too: valid', async () => {
    const v = verifier();
    expect(await one(creds.mtp, v)).toEqual({ ok: true }); // replaced by the later state since
    expect(await one(creds.later, v)).toEqual({ ok: true });
  });

  it('a state never transited to is not published: not-valid', async () => {
    expect(await one(creds.unpublished)).toMatchObject({ ok: false, status: 'not-valid', reason: expect.stringMatching(/was not published/) });
  });

  it('the RPC down, or the contract missing at the configured address: error, never valid', async () => {
    await chain.stop();
    try {
      expect(await one(creds.later)).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/State contract on eip155:80002 cannot be read/) });
    } finally {
      await chain.start();
    }
    const nowhere = verifier({ [chain.chain]: chain.accounts[5]! });
    expect(await one(creds.later, nowhere)).toMatchObject({ ok: false, status: 'error' });
  });

  it('an issuer whose network has no RPC endpoint: error naming the chain', async () => {
    const fromChain = stateContractPublication({ chains: { chains: new Map(), timeoutMs: 1000, errorTtlMs: 0 }, shortCacheMs: 0, clock: Date.now });
    const v = createCredentialVerifier(trustOptions({ mode: 'strict', trustedIssuers: [peers.a.did], timeoutMs: 5000, revocationCacheMs: 0 }), { statePublication: () => fromChain });
    expect(await one(creds.later, v)).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/eip155:80002, which CHAIN_RPC_URLS does not list/) });
  });

  it('publication is kept for good: a verified state is not read again', async () => {
    const fromChain = stateContractPublication({ chains: settings(), contracts: { [chain.chain]: stateContract }, shortCacheMs: 0, clock: Date.now });
    const state = mtpOf(creds.later).issuerData.state.value as string;
    expect(await fromChain.isPublished(peers.a.did, state)).toBe(true);
    await chain.stop();
    try {
      expect(await fromChain.isPublished(peers.a.did, state)).toBe(true);
    } finally {
      await chain.start();
    }
  });
});
