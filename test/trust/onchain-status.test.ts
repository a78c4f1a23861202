/**
 * Iden3OnchainSparseMerkleTreeProof2023 against a real local EVM (Hardhat's in-process network over HTTP): a status
 * contract answers what a real demo issuer's trees say (the test stores them), and the resolver reads it through the
 * chain RPC, converts the answer and verifies it like any other status answer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, custom, getAddress, type Abi, type Address, type EIP1193Provider } from 'viem';
import { startLocalChain, type Artifact, type LocalChain } from '../chain/evm.js';
import { parseChainRpcUrls, type ChainSettings } from '../../src/chain/config.js';
import { loadConfig } from '../../src/config.js';
import { createCredentialVerifier, type TrustVerdict } from '../../src/trust/index.js';
import { createDemoIssuer, demoStatusResolver, type DemoIssuer, type RevocationStatusDocument } from '../../src/trust/demo-issuer.js';
import { DID, Hash } from '../../src/trust/iden3.js';
import { onchainStatusResolver, parseOnchainStatusId } from '../../src/trust/onchain-status.js';
import { StatusFailure, type RevocationRequest, type StatusIo } from '../../src/trust/revocation.js';
import type { StateResolver } from '../../src/trust/did-resolver.js';
import type { Credential } from '../../src/schemas/credential.js';
import { startServer } from './servers.js';
import { at, only } from '../elements.js';
import { trustOptions } from './options.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

const ADDRESS = '0x52908400098527886E0F7030069857D2E4169EE7';
const TYPE = 'Iden3OnchainSparseMerkleTreeProof2023';
/** Polygon Amoy: the chain js-sdk names in the status id of an amoy issuer; served here by the local EVM. */
const AMOY = 80002;
const MAX_DEPTH = 40;

function compileStatusContract(): Artifact {
  const solc = require('solc') as { compile(input: string): string };
  const file = 'TestOnchainCredentialStatus.sol';
  const input = {
    language: 'Solidity',
    sources: { [file]: { content: fs.readFileSync(path.join(here, 'contracts', file), 'utf8') } },
    settings: { optimizer: { enabled: false }, evmVersion: 'cancun', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = out.contracts[file]?.TestOnchainCredentialStatus;
  if (!c) throw new Error(`solc answered no TestOnchainCredentialStatus contract for ${file}`);
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

let chain: LocalChain;
let artifact: Artifact;
let wallet: ReturnType<typeof createWalletClient>;
let issuer: DemoIssuer;
let issuerId: bigint;
let settings: ChainSettings;

const big = (hex: string) => Hash.fromHex(hex).bigInt();

/** A demo issuer's status document as the contract's struct (siblings padded to the maximum depth). */
function toStruct(doc: RevocationStatusDocument, nonce: bigint) {
  const mtp = doc.mtp as { existence: boolean; siblings: string[]; node_aux?: { key: string; value: string }; nodeAux?: { key: string; value: string } };
  const aux = mtp.node_aux ?? mtp.nodeAux;
  const siblings = mtp.siblings.map((s) => BigInt(s));
  while (siblings.length < MAX_DEPTH) siblings.push(0n);
  return {
    issuer: {
      state: big(doc.issuer.state),
      claimsTreeRoot: big(doc.issuer.claimsTreeRoot),
      revocationTreeRoot: big(doc.issuer.revocationTreeRoot),
      rootOfRoots: big(doc.issuer.rootOfRoots),
    },
    mtp: {
      root: big(doc.issuer.revocationTreeRoot),
      existence: mtp.existence,
      siblings,
      index: nonce,
      value: 0n,
      auxExistence: aux !== undefined,
      auxIndex: aux ? BigInt(aux.key) : 0n,
      auxValue: aux ? BigInt(aux.value) : 0n,
    },
  };
}

type Struct = ReturnType<typeof toStruct>;

async function deploy(): Promise<Address> {
  return chain.deployArtifact(artifact, [issuerId]);
}

async function store(contract: Address, nonce: bigint, status: Struct, latest = true): Promise<void> {
  await wallet.writeContract({ address: contract, abi: artifact.abi, functionName: 'setStatus', args: [nonce, status, latest], account: at(chain.accounts, 0), chain: null });
}

/** Stores the issuer's current status of `nonce` as the contract's latest. */
async function publish(contract: Address, nonce: bigint): Promise<Struct> {
  const s = toStruct(await issuer.status(nonce), nonce);
  await store(contract, nonce, s);
  return s;
}

const noResolver: StateResolver = {
  configured: false,
  isPublished: () => Promise.reject(new Error('not configured')),
  latestState: () => Promise.reject(new Error('not configured')),
};
const resolverSaying = (latest: string | undefined): StateResolver => ({
  configured: true,
  isPublished: async () => true,
  latestState: async () => latest,
});
const io = (stateResolver: StateResolver = noResolver): StatusIo => ({
  fetch: () => Promise.reject(new Error('no HTTP here')),
  timeoutMs: 3000,
  maxBytes: 1 << 20,
  stateResolver,
});

function request(contract: Address, nonce: bigint, extra = ''): RevocationRequest {
  return {
    status: { id: `${issuer.did}/credentialStatus?revocationNonce=${nonce}&contractAddress=${AMOY}:${contract}${extra}`, type: TYPE, revocationNonce: Number(nonce) },
    nonce,
    issuerDid: issuer.did,
    holderDid: issuer.did,
  };
}

beforeAll(async () => {
  artifact = compileStatusContract();
  chain = await startLocalChain();
  const hre = require('hardhat') as { network: { provider: EIP1193Provider } };
  wallet = createWalletClient({ transport: custom(hre.network.provider) });
  issuer = await createDemoIssuer({ seed: 'trust-tests-issuer-ONCHAIN-00004', statusUrl: 'http://127.0.0.1:9/status' });
  issuerId = DID.idFromDID(DID.parse(issuer.did)).bigInt();
  settings = { ...loadConfig({}).chains, chains: parseChainRpcUrls(`eip155:${AMOY}=${chain.url}`) };
}, 120_000);

afterAll(async () => {
  await chain?.start();
});

describe('parseOnchainStatusId', () => {
  it('reads the chain, the contract, the state and the nonce of a js-sdk status id', () => {
    const state = 'ab'.repeat(32);
    expect(parseOnchainStatusId(`did:polygonid:polygon:amoy:2qX/credentialStatus?revocationNonce=7&contractAddress=80002:0x49b84b9dd137de488924b18299de8bf46fd11469&state=${state}`)).toEqual({
      chain: 'eip155:80002', chainId: 80002, contract: '0x49b84b9Dd137de488924b18299De8bf46fD11469', state, nonce: 7n,
    });
    expect(parseOnchainStatusId('did:iden3:x/credentialStatus?contractAddress=1:0x49b84b9dd137de488924b18299de8bf46fd11469')).toMatchObject({ chain: 'eip155:1' });
  });

  it('refuses ids without a well-formed contractAddress, state or nonce', () => {
    for (const id of [
      'https://issuer.example/status/1',
      'did:iden3:x/credentialStatus',
      'did:iden3:x/credentialStatus?contractAddress=0x49b84b9dd137de488924b18299de8bf46fd11469',
      'did:iden3:x/credentialStatus?contractAddress=80002:0x49b8',
      'did:iden3:x/credentialStatus?contractAddress=80002:0x49b84b9dd137de488924b18299de8bf46fd11469&state=zz',
      'did:iden3:x/credentialStatus?contractAddress=80002:0x49b84b9dd137de488924b18299de8bf46fd11469&revocationNonce=-1',
    ]) {
      expect(() => parseOnchainStatusId(id), id).toThrow(StatusFailure);
    }
  });
});

describe('onchainStatusResolver (resolver level, real local EVM)', () => {
  it('not revoked: false; revoked: true (contract latest state, no DID resolver)', async () => {
    const contract = await deploy();
    const resolve = await onchainStatusResolver(settings);
    await publish(contract, 4001n);
    expect(await resolve(request(contract, 4001n), io())).toBe(false);
    await issuer.revoke(4001n);
    await publish(contract, 4001n);
    expect(await resolve(request(contract, 4001n), io())).toBe(true);
    // Another nonce at the same (new) state: a non-existence proof with an auxiliary node.
    await publish(contract, 4002n);
    expect(await resolve(request(contract, 4002n), io())).toBe(false);
  });

  it('asks about the latest state the DID resolver names, and refuses an answer about another state', async () => {
    const contract = await deploy();
    const resolve = await onchainStatusResolver(settings);
    const s = await publish(contract, 4003n);
    const state = Hash.fromBigInt(s.issuer.state).hex();
    expect(await resolve(request(contract, 4003n), io(resolverSaying(state)))).toBe(false);
    // A state the contract does not know: it reverts, the status is unresolvable.
    await expect(resolve(request(contract, 4003n), io(resolverSaying('00'.repeat(31) + '01')))).rejects.toThrow(/reverted/);
  });

  it('falls back to the genesis state named in the URL when the contract knows no state of the issuer', async () => {
    const fresh = await createDemoIssuer({ seed: 'trust-tests-issuer-ONCHAIN-00005', statusUrl: 'http://127.0.0.1:9/status' });
    const genesis = await fresh.currentState();
    const contract = await chain.deployArtifact(artifact, [DID.idFromDID(DID.parse(fresh.did)).bigInt()]);
    const resolve = await onchainStatusResolver(settings);
    await store(contract, 5n, toStruct(await fresh.status(5n), 5n), false);
    const req = {
      status: { id: `${fresh.did}/credentialStatus?contractAddress=${AMOY}:${contract}&state=${genesis}`, type: TYPE, revocationNonce: 5 },
      nonce: 5n, issuerDid: fresh.did, holderDid: fresh.did,
    };
    expect(await resolve(req, io(resolverSaying(undefined)))).toBe(false);
    // A state that is not the genesis state is not taken from the URL.
    const notGenesis = { ...req, status: { ...req.status, id: req.status.id.replace(genesis, '00'.repeat(31) + '07') } };
    await expect(resolve(notGenesis, io(resolverSaying(undefined)))).rejects.toThrow(/reverted/);
  });

  it('refuses tampered answers: roots that do not hash to the state, a proof that does not verify, a wrong root', async () => {
    const contract = await deploy();
    const resolve = await onchainStatusResolver(settings);
    const good = toStruct(await issuer.status(4004n), 4004n);
    await store(contract, 4004n, { ...good, issuer: { ...good.issuer, revocationTreeRoot: good.issuer.revocationTreeRoot ^ 1n }, mtp: { ...good.mtp, root: good.issuer.revocationTreeRoot ^ 1n } });
    await expect(resolve(request(contract, 4004n), io())).rejects.toThrow(/not the hash of its tree roots/);
    await store(contract, 4004n, { ...good, mtp: { ...good.mtp, existence: !good.mtp.existence } });
    await expect(resolve(request(contract, 4004n), io())).rejects.toThrow(/Merkle proof does not verify/);
    await store(contract, 4004n, { ...good, mtp: { ...good.mtp, root: 12345n } });
    await expect(resolve(request(contract, 4004n), io())).rejects.toThrow(/proof root is not its revocation tree root/);
    await store(contract, 4004n, good);
    expect(await resolve(request(contract, 4004n), io())).toBe(false);
  });

  it('fails (StatusFailure) on an unknown chain, a nonce mismatch, a stopped RPC, and never names the URL', async () => {
    const contract = await deploy();
    await publish(contract, 4005n);
    const resolve = await onchainStatusResolver(settings);
    const other = request(contract, 4005n);
    other.status = { ...other.status, id: (other.status.id as string).replace(`${AMOY}:`, '137:') };
    await expect(resolve(other, io())).rejects.toThrow(/eip155:137, which is not configured/);
    await expect(resolve({ ...request(contract, 4005n), nonce: 4006n }, io())).rejects.toThrow(/revocationNonce of credentialStatus.id/);
    expect(await resolve(request(contract, 4005n), io())).toBe(false);
    await chain.stop();
    try {
      const e = await resolve(request(contract, 4005n), io()).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(StatusFailure);
      expect((e as Error).message).toMatch(/could not be read|did not answer in time/);
      expect((e as Error).message).not.toContain('127.0.0.1');
    } finally {
      await chain.start();
    }
    expect(await resolve(request(contract, 4005n), io())).toBe(false);
  });
  it('fails (StatusFailure) when the RPC does not answer within the timeout', async () => {
    const hang = await startServer(async () => ({ hang: true }));
    try {
      const resolve = await onchainStatusResolver({ chains: parseChainRpcUrls(`eip155:${AMOY}=${hang.url}/key/secret`), timeoutMs: 200 });
      const e = await resolve(request('0x49b84b9Dd137de488924b18299De8bf46fD11469', 1n), io()).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(StatusFailure);
      expect((e as Error).message).toMatch(/eip155:80002 did not answer in time/);
      expect((e as Error).message).not.toContain('secret');
    } finally {
      await hang.close();
    }
  });
});

describe('createCredentialVerifier with the on-chain resolver', () => {
  const NONCE = 4100;
  let credential: Credential;
  let contract: Address;

  const verify = async (): Promise<TrustVerdict> => {
    const v = createCredentialVerifier(
      trustOptions({ mode: 'strict', trustedIssuers: '*', timeoutMs: 3000, revocationCacheMs: 0 }),
      { statusResolvers: { [TYPE]: await onchainStatusResolver(settings), SparseMerkleTreeProof: demoStatusResolver(issuer) } },
    );
    return only(await v.verify([credential], { address: ADDRESS, now: Date.now() }));
  };

  beforeAll(async () => {
    contract = await deploy();
    credential = (await issuer.issue({
      subjectId: `did:pkh:eip155:1:${ADDRESS}`,
      claims: { reviewAnswer: 'GREEN', personalData: { age: 40 } },
      nonce: NONCE,
      revocation: { type: TYPE, id: contract },
    })) as unknown as Credential;
  }, 30_000);

  it('issues a js-sdk on-chain status id naming the amoy chain and the contract', () => {
    const status = credential.credentialStatus as { id: string; type: string };
    expect(status.type).toBe(TYPE);
    expect(parseOnchainStatusId(status.id)).toMatchObject({ chain: `eip155:${AMOY}`, contract: getAddress(contract), nonce: BigInt(NONCE) });
  });

  it('ok while not revoked; error when the RPC is down or the answer is tampered with; not-valid once revoked', async () => {
    // The signing key's status is asked of the same contract (the issuer's one revocation tree), for the key's nonce.
    const keyNonce = BigInt((credential as unknown as { proof: [{ issuerData: { credentialStatus: { revocationNonce: number } } }] }).proof[0].issuerData.credentialStatus.revocationNonce);
    await publish(contract, keyNonce);
    const good = await publish(contract, BigInt(NONCE));
    expect(await verify()).toEqual({ ok: true });

    await chain.stop();
    try {
      expect(await verify()).toMatchObject({ ok: false, status: 'error' });
    } finally {
      await chain.start();
    }

    await store(contract, BigInt(NONCE), { ...good, issuer: { ...good.issuer, claimsTreeRoot: good.issuer.claimsTreeRoot ^ 1n } });
    expect(await verify()).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/not the hash of its tree roots/) });

    await issuer.revoke(NONCE);
    await publish(contract, BigInt(NONCE));
    expect(await verify()).toEqual({ ok: false, status: 'not-valid', check: 'revocation', reason: `revoked by its issuer (${TYPE})` });
  });

  it('answers error for a chain that is not configured', async () => {
    const v = createCredentialVerifier(
      trustOptions({ mode: 'strict', trustedIssuers: '*', timeoutMs: 3000, revocationCacheMs: 0 }),
      { statusResolvers: { [TYPE]: await onchainStatusResolver({ chains: new Map(), timeoutMs: 3000 }), SparseMerkleTreeProof: demoStatusResolver(issuer) } },
    );
    const [verdict] = await v.verify([credential], { address: ADDRESS, now: Date.now() });
    expect(verdict).toMatchObject({ ok: false, status: 'error', reason: expect.stringMatching(/not configured/) });
  });
});
