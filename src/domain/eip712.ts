/**
 * The EIP-712 attestation's digest and signature without viem (~10x its CPU): the struct's encoding written out, and
 * libsecp256k1 signing. node:crypto cannot sign a digest it did not hash, and OpenSSL 3.0's secp256k1 is as slow as JS.
 */
import { randomBytes } from 'node:crypto';
import jsSha3 from 'js-sha3';
import { toChecksumAddress } from './address/evm.js';

export interface Eip712Domain { name: string; version: string; chainId: number; verifyingContract: `0x${string}` }
export interface AttestationMessage { subject: `0x${string}`; scenario: `0x${string}`; verdict: number; expiry: number; nonce: string }

/** RFC 6979 with low s, as viem signs: both give its bytes. */
export interface Secp256k1 {
  sign(digest: Uint8Array, key: Uint8Array): { signature: Uint8Array; recovery: number };
  publicKey(key: Uint8Array): Uint8Array;
}

/** The binding itself: the package's main falls back to elliptic silently. */
export async function nativeSecp256k1(): Promise<Secp256k1> {
  const { default: binding } = await import('secp256k1/bindings.js');
  binding.contextRandomize(randomBytes(32));
  return {
    sign: (digest, key) => {
      const { signature, recid } = binding.ecdsaSign(digest, key);
      return { signature, recovery: recid };
    },
    publicKey: (key) => binding.publicKeyCreate(key, false),
  };
}

export async function nobleSecp256k1(): Promise<Secp256k1> {
  const { secp256k1 } = await import('@noble/curves/secp256k1');
  return {
    sign: (digest, key) => {
      const s = secp256k1.sign(digest, key, { lowS: true });
      return { signature: s.toCompactRawBytes(), recovery: s.recovery };
    },
    publicKey: (key) => secp256k1.getPublicKey(key, false),
  };
}

/** js-sha3's: @noble/hashes' keccak takes three times as long, as much as the signature. */
const keccak_256 = (data: Uint8Array) => new Uint8Array(jsSha3.keccak256.arrayBuffer(data));
const utf8Hash = (s: string) => keccak_256(Buffer.from(s, 'utf8'));
const DOMAIN_TYPEHASH = utf8Hash('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)');
const ATTESTATION_TYPEHASH = utf8Hash('Attestation(address subject,bytes32 scenario,uint8 verdict,uint64 expiry,uint256 nonce)');

function words(values: (Uint8Array | bigint | `0x${string}`)[]): Buffer {
  const out = Buffer.alloc(32 * values.length);
  values.forEach((v, i) => {
    if (v instanceof Uint8Array) out.set(v, 32 * i);
    else {
      const hex = typeof v === 'bigint' ? v.toString(16) : v.slice(2);
      if (hex.length > 64 || !/^[0-9a-fA-F]*$/.test(hex) || (typeof v === 'bigint' && v < 0n)) throw new RangeError(`not an ABI word: ${String(v)}`);
      out.write(hex.padStart(64, '0'), 32 * i, 'hex');
    }
  });
  return out;
}

/** Emptied when full: any chain id, contract or scenario may be asked for. */
function memo<T>(kept = 256): (key: string, compute: () => T) => T {
  const values = new Map<string, T>();
  return (key, compute) => {
    let value = values.get(key);
    if (value === undefined) {
      if (values.size >= kept) values.clear();
      value = compute();
      values.set(key, value);
    }
    return value;
  };
}

const separators = memo<Uint8Array>();
const domainSeparator = (d: Eip712Domain) => separators(JSON.stringify([d.name, d.version, d.chainId, d.verifyingContract]), () =>
  keccak_256(words([DOMAIN_TYPEHASH, utf8Hash(d.name), utf8Hash(d.version), BigInt(d.chainId), d.verifyingContract])));

function abiString(s: string): Buffer {
  const bytes = Buffer.from(s, 'utf8');
  const out = Buffer.alloc(32 + Math.ceil(bytes.length / 32) * 32);
  out.writeUInt32BE(bytes.length, 28);
  bytes.copy(out, 32);
  return out;
}

/** Ids are unique per project only; encodePacked would make ("ab", "c") and ("a", "bc") one. */
const scenarioHashes = memo<`0x${string}`>();
export const scenarioHash = (projectId: string | null, scenarioId: string) => scenarioHashes(JSON.stringify([projectId, scenarioId]), () => {
  const first = abiString(projectId ?? '');
  const head = words([64n, BigInt(64 + first.length)]);
  return `0x${Buffer.from(keccak_256(Buffer.concat([head, first, abiString(scenarioId)]))).toString('hex')}`;
});

export function attestationDigest(domain: Eip712Domain, m: AttestationMessage): Uint8Array {
  const struct = keccak_256(words([ATTESTATION_TYPEHASH, m.subject, m.scenario, BigInt(m.verdict), BigInt(m.expiry), BigInt(m.nonce)]));
  return keccak_256(Buffer.concat([Buffer.from([0x19, 0x01]), domainSeparator(domain), struct]));
}

export interface Eip712Signer {
  address: `0x${string}`;
  /** r || s || v, v 27 or 28: what ecrecover and viem take. */
  sign(domain: Eip712Domain, message: AttestationMessage): `0x${string}`;
}

export function eip712Signer(key: `0x${string}`, curve: Secp256k1): Eip712Signer {
  const d = Buffer.from(key.slice(2), 'hex');
  const address = toChecksumAddress(Buffer.from(keccak_256(curve.publicKey(d).subarray(1)).subarray(12)).toString('hex'));
  return {
    address,
    sign(domain, message) {
      const { signature, recovery } = curve.sign(attestationDigest(domain, message), d);
      // 2 or 3 (odds ~2^-127): no v a contract takes.
      if (recovery > 1) throw new Error('secp256k1 gave a recovery id above 1');
      return `0x${Buffer.from(signature).toString('hex')}${(27 + recovery).toString(16)}`;
    },
  };
}
