/**
 * The EIP-712 attestation signed without viem (issue 41): on a few hundred random keys and messages, the digest is
 * viem's hashTypedData, the signature is byte for byte viem's signTypedData (RFC 6979 on both sides), both
 * secp256k1 backends agree, recoverTypedDataAddress gives the signer's address, and s is low (EIP-2, as
 * contracts/ComplianceGate.sol requires).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeAbiParameters, getAddress, hashTypedData, keccak256, recoverTypedDataAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  attestationDigest, eip712Signer, nativeSecp256k1, nobleSecp256k1, scenarioHash,
  type AttestationMessage, type Eip712Domain, type Secp256k1,
} from '../src/domain/eip712.js';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const VECTORS = 300;
const TYPES = {
  Attestation: [
    { name: 'subject', type: 'address' },
    { name: 'scenario', type: 'bytes32' },
    { name: 'verdict', type: 'uint8' },
    { name: 'expiry', type: 'uint64' },
    { name: 'nonce', type: 'uint256' },
  ],
} as const;

const hex = (bytes: number): `0x${string}` => `0x${randomBytes(bytes).toString('hex')}`;
const key32 = (k: bigint): `0x${string}` => `0x${k.toString(16).padStart(64, '0')}`;

/** A private key in [1, n - 1], the two ends among them. */
function randomKey(i: number): `0x${string}` {
  if (i === 0) return key32(1n);
  if (i === 1) return key32(N - 1n);
  return key32((BigInt(hex(32)) % (N - 1n)) + 1n);
}

function randomVector(i: number) {
  const domain: Eip712Domain = {
    name: 'ScenarioComplianceService',
    version: '1',
    chainId: i % 3 === 0 ? 1 : randomInt(1, 2 ** 48 - 1) * (1 + (i % 5)),
    verifyingContract: getAddress(hex(20)),
  };
  const message: AttestationMessage = {
    // Lowercase and checksummed subjects, as an execution's address may be either.
    subject: i % 2 === 0 ? hex(20) : getAddress(hex(20)),
    scenario: hex(32),
    verdict: 1 + (i % 4),
    expiry: randomInt(0, 2 ** 47),
    nonce: BigInt(hex(16)).toString(),
  };
  return { key: randomKey(i), domain, message };
}

const viemTyped = (domain: Eip712Domain, message: AttestationMessage) => ({
  domain,
  types: TYPES,
  primaryType: 'Attestation' as const,
  message: { ...message, expiry: BigInt(message.expiry), nonce: BigInt(message.nonce) },
});

describe('EIP-712 attestation signatures against viem', () => {
  let native: Secp256k1;
  let noble: Secp256k1;
  beforeAll(async () => {
    native = await nativeSecp256k1();
    noble = await nobleSecp256k1();
  });

  it(`gives viem's digest and signature bytes with both backends, recovered to the signer, s low, on ${VECTORS} random keys and messages`, async () => {
    const vs = new Set<number>();
    for (let i = 0; i < VECTORS; i++) {
      const { key, domain, message } = randomVector(i);
      const account = privateKeyToAccount(key);
      const typed = viemTyped(domain, message);
      expect(`0x${Buffer.from(attestationDigest(domain, message)).toString('hex')}`).toBe(hashTypedData(typed));

      const signer = eip712Signer(key, native);
      expect(signer.address).toBe(account.address);
      const signature = signer.sign(domain, message);
      expect(signature).toBe(await account.signTypedData(typed));
      expect(eip712Signer(key, noble).sign(domain, message)).toBe(signature);
      expect(await recoverTypedDataAddress({ ...typed, signature })).toBe(account.address);

      expect(signature).toMatch(/^0x[0-9a-f]{130}$/);
      expect(BigInt(`0x${signature.slice(66, 130)}`) <= N / 2n).toBe(true);
      const v = parseInt(signature.slice(130), 16);
      expect([27, 28]).toContain(v);
      vs.add(v);
    }
    // Both recovery ids came up: the bit is taken from the signer, not assumed.
    expect([...vs].sort()).toEqual([27, 28]);
  });

  it('recovers to a different address when the message changes by its nonce', async () => {
    const { key, domain, message } = randomVector(7);
    const signature = eip712Signer(key, native).sign(domain, message);
    const other = viemTyped(domain, { ...message, nonce: (BigInt(message.nonce) + 1n).toString() });
    expect(await recoverTypedDataAddress({ ...other, signature })).not.toBe(privateKeyToAccount(key).address);
  });

  it('hashes (projectId, scenarioId) as viem\'s keccak256(abi.encode(string, string)), across word boundaries and multibyte text', () => {
    const params = [{ type: 'string' }, { type: 'string' }] as const;
    const texts = ['', 'a', 'x'.repeat(31), 'y'.repeat(32), 'z'.repeat(33), 'w'.repeat(64), 'é名🙂', 'ab', 'c', randomBytes(50).toString('base64')];
    for (const project of [null, ...texts]) {
      for (const id of texts) {
        expect(scenarioHash(project, id)).toBe(keccak256(encodeAbiParameters(params, [project ?? '', id])));
      }
    }
    expect(scenarioHash('ab', 'c')).not.toBe(scenarioHash('a', 'bc'));
  });
});
