/**
 * Attestations: an execution's verdict signed for those who cannot trust what a browser relays. A JWS (compact,
 * ES256 or EdDSA) for a dApp's backend, verified offline with the keys of /.well-known/jwks.json; an EIP-712
 * signature for its contracts (contracts/ComplianceGate.sol). Both carry digests and statuses only: never a
 * credential's content nor a disclosed value.
 */
import { createPrivateKey, randomBytes, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Verdict } from './verdict.js';

/** A JSON Web Key as configured (private or public). */
export type ConfiguredJwk = Record<string, unknown> & { kid: string; alg: 'ES256' | 'EdDSA' };

/** The attestation settings (ATTESTATION_*, src/config/attestation.ts). */
export interface AttestationConfig {
  /** JWS keys, the signing key first; 'generate': development, one key per start. Absent: no JWS attestations. */
  jwks?: ConfiguredJwk[] | 'generate';
  /** EIP-712 signing key; 'generate': development. Absent: no EIP-712 attestations. */
  eip712Key?: `0x${string}` | 'generate';
  ttlSeconds: number;
  issuer?: string;
}

/** What an attestation is about: an execution as the audit log keeps it, and the scenario revision that ran. */
export interface AttestedExecution {
  executionId: string;
  /** The scenario's project; null: a scenario without a project (operator tokens). */
  projectId: string | null;
  scenarioId: string;
  scenarioRevision: number;
  /** SHA-256 of the scenario revision's canonical JSON. */
  scenarioDigest: string;
  address: string;
  verdict: Verdict;
  rules: { id: string; status: string }[];
  /** The credentials' SHA-256 digests, in the order they were presented. */
  credentials: string[];
  /** Whether the verdict is tied to `address` (a credential that encodes no address may be sent for any address). */
  holderBound: boolean;
  /** False when credentials were believed without checks (CREDENTIAL_VERIFICATION=off). */
  credentialsVerified: boolean;
}

/**
 * Why an EIP-712 attestation of it is not given, or undefined. A contract sees only subject, scenario and verdict:
 * it could not tell an unbound holder or unverified credentials from checked ones, so they are not signed for it.
 */
export function eip712Refusal(e: Pick<AttestedExecution, 'holderBound' | 'credentialsVerified'>): string | undefined {
  if (!e.credentialsVerified) return 'an EIP-712 attestation is not given for credentials that were not verified (CREDENTIAL_VERIFICATION=off)';
  if (!e.holderBound) {
    return 'an EIP-712 attestation needs the holder bound to the address (REQUIRE_HOLDER_BINDING=true; never for OffChainZKP): ' +
      'a contract would accept it from any address the same credential was sent for';
  }
  return undefined;
}

/** The JWS `typ`: a verifier can refuse any other JWT signed by the same keys. */
const JWS_TYPE = 'scs-attestation+jwt';

/** EIP-712: the domain's name and version, and the signed struct (contracts/ComplianceGate.sol declares the same). */
const EIP712_NAME = 'ScenarioComplianceService';
const EIP712_VERSION = '1';
const EIP712_TYPES = {
  Attestation: [
    { name: 'subject', type: 'address' },
    { name: 'scenario', type: 'bytes32' },
    { name: 'verdict', type: 'uint8' },
    { name: 'expiry', type: 'uint64' },
    { name: 'nonce', type: 'uint256' },
  ],
} as const;

/** What the EIP-712 `scenario` hashes: the project id and the scenario id, ABI-encoded. */
const SCENARIO_HASH_PARAMS = [{ type: 'string' }, { type: 'string' }] as const;

/** A verdict as the contract's uint8: 0 is never signed, so an all-zero struct cannot pass. */
const VERDICT_CODES: Record<Verdict, number> = { passed: 1, failed: 2, error: 3, pending: 4 };

/** The EIP-712 attestation as answered: the typed data's message and domain, and the 65-byte signature. */
export interface Eip712Attestation {
  signer: `0x${string}`;
  domain: { name: string; version: string; chainId: number; verifyingContract: `0x${string}` };
  message: { subject: `0x${string}`; scenario: `0x${string}`; verdict: number; expiry: number; nonce: string };
  signature: `0x${string}`;
}

/** A JWK's string members, as node:crypto's createPrivateKey reads a key (EC and OKP keys have no others). */
const nodeJwk = (key: Record<string, unknown>): JsonWebKey =>
  Object.fromEntries(Object.entries(key).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

/** A key's public part as published: kty, crv, x(, y), kid, alg, use. */
function publicJwk(key: Record<string, unknown>): JWK {
  const members = Object.entries(nodeJwk(key)).filter(([k]) => !PRIVATE_MEMBERS.includes(k));
  return { ...Object.fromEntries(members), use: 'sig' };
}

type Eip712Signer = {
  address: `0x${string}`;
  sign(domain: Eip712Attestation['domain'], message: Eip712Attestation['message']): Promise<`0x${string}`>;
  scenarioHash(projectId: string | null, scenarioId: string): `0x${string}`;
};

/** The EIP-712 signer of a key; viem is loaded only here, and only when EIP-712 attestations are configured. */
async function eip712Signer(key: `0x${string}`): Promise<Eip712Signer> {
  const [{ privateKeyToAccount }, { encodeAbiParameters, keccak256 }] = await Promise.all([import('viem/accounts'), import('viem')]);
  const account = privateKeyToAccount(key);
  return {
    address: account.address,
    // keccak256(abi.encode(projectId, scenarioId)): ids are unique per project only, so the project is part of what a
    // contract requires; '' stands for no project (no project id is empty). abi.encode, not encodePacked: ("ab", "c")
    // and ("a", "bc") differ.
    scenarioHash: (projectId, id) => keccak256(encodeAbiParameters(SCENARIO_HASH_PARAMS, [projectId ?? '', id])),
    sign: (domain, message) => account.signTypedData({
      domain,
      types: EIP712_TYPES,
      primaryType: 'Attestation',
      message: { ...message, expiry: BigInt(message.expiry), nonce: BigInt(message.nonce) },
    }),
  };
}

export interface Attestor {
  /** Whether JWS attestations are configured. */
  readonly jws: boolean;
  /** Whether EIP-712 attestations are configured. */
  readonly eip712: boolean;
  /** The public keys, the signing key first (`/.well-known/jwks.json`). */
  readonly jwks: { keys: JWK[] };
  signJws(execution: AttestedExecution, nowMs: number): Promise<string>;
  /** Undefined for an address that is not an EVM one (a contract cannot be told about it). */
  signEip712(execution: AttestedExecution, target: { chainId: number; verifyingContract: `0x${string}` }, nowMs: number): Promise<Eip712Attestation | undefined>;
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const isEvmAddress = (s: string): s is `0x${string}` => EVM_ADDRESS.test(s);

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The attestor of the settings: keys imported (or made, in development) once, at start. */
export async function createAttestor(config: AttestationConfig, warn: (message: string) => void): Promise<Attestor> {
  let signing: { kid: string; alg: string; key: KeyObject } | undefined;
  let published: JWK[] = [];
  if (config.jwks === 'generate') {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const kid = `dev-${randomBytes(6).toString('hex')}`;
    signing = { kid, alg: 'EdDSA', key: createPrivateKey({ key: nodeJwk(await exportJWK(privateKey)), format: 'jwk' }) };
    published = [publicJwk({ ...(await exportJWK(publicKey)), kid, alg: 'EdDSA' })];
    warn('ATTESTATION_JWKS unset in development: JWS attestations are signed by a key made for this start only. Never in production.');
  } else if (config.jwks) {
    const [first] = config.jwks;
    if (first) signing = { kid: first.kid, alg: first.alg, key: createPrivateKey({ key: nodeJwk(first), format: 'jwk' }) };
    published = config.jwks.map(publicJwk);
  }
  // The EIP-712 signer is made at its first use: viem (megabytes of heap) is loaded only by a service that signs one.
  let eip712Key = config.eip712Key;
  if (eip712Key === 'generate') {
    eip712Key = `0x${randomBytes(32).toString('hex')}`;
    warn('ATTESTATION_EIP712_KEY unset in development: EIP-712 attestations are signed by a key made for this start only (its address is each attestation\'s signer). Never in production.');
  }
  const key = eip712Key;
  let signerLoad: Promise<Eip712Signer> | undefined;
  const { ttlSeconds, issuer } = config;
  return {
    jws: signing !== undefined,
    eip712: key !== undefined,
    jwks: { keys: published },
    // node:crypto's one-shot sign, synchronous: a compact JWS is two base64url parts and a signature, and jose's
    // WebCrypto path (async, a key import per call) cost several times more of an execute's CPU.
    async signJws(e, nowMs) {
      if (!signing) throw new Error('no JWS attestation key');
      const iat = Math.floor(nowMs / 1000);
      const header = b64({ alg: signing.alg, kid: signing.kid, typ: JWS_TYPE });
      const payload = b64({
        ...(issuer !== undefined && { iss: issuer }),
        sub: e.address,
        jti: e.executionId,
        iat,
        exp: iat + ttlSeconds,
        executionId: e.executionId,
        projectId: e.projectId,
        scenarioId: e.scenarioId,
        scenarioRevision: e.scenarioRevision,
        scenarioDigest: e.scenarioDigest,
        address: e.address,
        verdict: e.verdict,
        rules: e.rules,
        credentials: e.credentials,
        holderBound: e.holderBound,
        credentialsVerified: e.credentialsVerified,
      });
      const input = `${header}.${payload}`;
      // ES256: the signature is r || s (IEEE P1363), as JWS wants, not DER.
      const signature = sign(signing.alg === 'ES256' ? 'sha256' : null, Buffer.from(input), { key: signing.key, dsaEncoding: 'ieee-p1363' });
      return `${input}.${signature.toString('base64url')}`;
    },
    async signEip712(e, { chainId, verifyingContract }, nowMs) {
      if (key === undefined) throw new Error('no EIP-712 attestation key');
      const subject = e.address;
      if (!isEvmAddress(subject)) return undefined;
      const refusal = eip712Refusal(e);
      if (refusal !== undefined) throw new Error(refusal); // the routes refuse it first, with a 400
      const signer = await (signerLoad ??= eip712Signer(key));
      const domain = { name: EIP712_NAME, version: EIP712_VERSION, chainId, verifyingContract };
      const message = {
        subject,
        scenario: signer.scenarioHash(e.projectId, e.scenarioId),
        verdict: VERDICT_CODES[e.verdict],
        expiry: Math.floor(nowMs / 1000) + ttlSeconds,
        // Random (128 bits): instances issue nonces without sharing a counter, none repeats, and the calldata stays short.
        nonce: BigInt(`0x${randomBytes(16).toString('hex')}`).toString(),
      };
      return { signer: signer.address, domain, message, signature: await signer.sign(domain, message) };
    },
  };
}
