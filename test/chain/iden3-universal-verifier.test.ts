/**
 * The prebuilt iden3 UniversalVerifier (@iden3/contracts 3.4.0 build artifact, VERSION 2.3.0) behind an ERC-1967
 * proxy, as deployed on real chains. Marking a proof verified the contract's own way needs a State contract, auth and
 * request validators and a real ZK proof; instead the tests write the proof into the contract's ERC-7201 storage
 * (hardhat_setStorageAt), following the layout of Verifier.sol. What is tested is the read side: the reader detects
 * the real contract's interface through the proxy, decodes its answers and its RequestIdNotFound error.
 */
import { createRequire } from 'node:module';
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import {
  encodeAbiParameters, hexToBigInt, keccak256, pad, toEventSelector, toFunctionSelector, toHex, type AbiFunction, type Address, type Hex,
} from 'viem';
import { isProofStatusError, verifierAbi, type ProofStatusRead } from '../../src/chain/index.js';
import { ChainReader } from '../../src/chain/reader.js';
import { link, startLocalChain, type Artifact, type BuildArtifact, type LocalChain } from './evm.js';
import { loadConfig } from '../../src/config.js';

/** The settings the configuration schema defaults (no chains). */
const chainDefaults = loadConfig({}).chains;

const require = createRequire(import.meta.url);
const universal = require('@iden3/contracts/build/contracts/UniversalVerifier.json') as BuildArtifact;
const verifierLib = require('@iden3/contracts/build/contracts/VerifierLib.json') as BuildArtifact;

/** keccak256("iden3.storage.Verifier") based ERC-7201 location of Verifier.sol's VerifierStorage. */
const VERIFIER_STORAGE = 0x11369addde4aae8af30dcf56fa25ad3d864848d3201d1e9197f8b4da18a51a00n;

const mappingSlot = (key: bigint | Address, keyType: 'uint256' | 'address', base: bigint): bigint =>
  hexToBigInt(keccak256(encodeAbiParameters([{ type: keyType }, { type: 'uint256' }], [key as never, base])));
const word = (n: bigint): Hex => pad(toHex(n), { size: 32 });
/** A string shorter than 32 bytes as Solidity stores it: bytes left-aligned, length * 2 in the last byte. */
const shortString = (s: string): Hex => `0x${Buffer.from(s).toString('hex').padEnd(62, '0')}${(s.length * 2).toString(16).padStart(2, '0')}`;

let chain: LocalChain;
let proxy: Address;
let alice: Address;
let bob: Address;
const provedAt = 1_750_000_000n;

beforeAll(async () => {
  chain = await startLocalChain();
  [, alice, bob] = chain.accounts as [Address, Address, Address];
  const lib = await chain.deployArtifact({ abi: verifierLib.abi, bytecode: verifierLib.bytecode } as Artifact);
  const implementation = await chain.deployArtifact({ abi: universal.abi, bytecode: link(universal, { VerifierLib: lib }) } as Artifact);
  proxy = await chain.deploy('TestERC1967Proxy', [implementation]);

  // Request 10 exists (its validator is set) and alice holds a verified proof of it; request 11 does not exist.
  const request = mappingSlot(10n, 'uint256', VERIFIER_STORAGE + 1n);
  await chain.setStorageAt(proxy, request + 1n, word(hexToBigInt(chain.accounts[9]!)));
  const proof = mappingSlot(alice, 'address', mappingSlot(10n, 'uint256', VERIFIER_STORAGE));
  await chain.setStorageAt(proxy, proof, word(1n)); // isVerified
  await chain.setStorageAt(proxy, proof + 1n, word(1n)); // proofEntries.length
  // Entry 0 (each ProofEntry takes 50 slots: 2 mappings, an array, a string, a uint256 and a uint256[45] gap).
  const entry = hexToBigInt(keccak256(word(proof + 1n)));
  await chain.setStorageAt(proxy, entry + 3n, shortString('2.3.0')); // validatorVersion
  await chain.setStorageAt(proxy, entry + 4n, word(provedAt)); // blockTimestamp
});

afterAll(async () => {
  await chain?.stop();
});

describe('the ABI this service reads matches the iden3 build artifact', () => {
  it('same selectors and return types for the current interface, same event and error', () => {
    for (const name of ['getRequestProofStatus', 'isRequestProofVerified']) {
      const mine = verifierAbi.find((x) => x.type === 'function' && x.name === name) as AbiFunction;
      const theirs = universal.abi.find((x) => x.type === 'function' && x.name === name) as AbiFunction;
      expect(toFunctionSelector(mine)).toBe(toFunctionSelector(theirs));
      const types = (f: AbiFunction) => JSON.stringify(f.outputs.map((o) => ('components' in o ? o.components.map((c) => c.type) : o.type)));
      expect(types(mine)).toBe(types(theirs));
    }
    const event = universal.abi.find((x) => x.type === 'event' && x.name === 'ResponseSubmitted');
    expect(toEventSelector(verifierAbi[5])).toBe(toEventSelector(event as never));
    expect(universal.abi.some((x) => x.type === 'error' && x.name === 'RequestIdNotFound' && x.inputs[0]?.type === 'uint256')).toBe(true);
  });
});

describe('reading the real UniversalVerifier through its proxy', () => {
  for (const multicall of ['off', 'auto'] as const) {
    it(`detects the current interface and reads verified / not verified / unknown request (multicall ${multicall})`, async () => {
      if (multicall === 'auto') await chain.installMulticall3();
      try {
        const reader = new ChainReader({ ...chainDefaults, chains: [{ chain: chain.chain, chainId: chain.chainId, url: chain.url }], multicall, timeoutMs: 3000 });
        const entries = await reader.readProofStatuses({ chain: chain.chain, verifierAddress: proxy, sender: alice, requestIds: [10, 11] });
        const ten = entries[0] as ProofStatusRead;
        expect(isProofStatusError(ten)).toBe(false);
        expect(ten).toMatchObject({ requestId: 10, verified: true, method: 'getRequestProofStatus', provedAt: Number(provedAt) });
        expect(ten.txHash).toBeUndefined(); // written to storage: no submission event exists
        expect(entries[1]).toMatchObject({ requestId: 11, code: 'request-not-found' });
        const [other] = await reader.readProofStatuses({ chain: chain.chain, verifierAddress: proxy, sender: bob, requestIds: [10] });
        expect(other).toMatchObject({ verified: false, method: 'getRequestProofStatus' });
        // Two rounds, and the unknown request 11 asked once more as a multi-request (getMultiRequestProofsStatus).
        expect(reader.stats().multicalls).toBe(multicall === 'auto' ? 3 : 0);
      } finally {
        if (multicall === 'auto') await chain.removeMulticall3();
      }
    });
  }
});
