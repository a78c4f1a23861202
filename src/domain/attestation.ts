/**
 * An execution's verdict signed for those who cannot trust what a browser relays: a JWS for a dApp's backend, an
 * EIP-712 signature for its contracts. Digests and statuses only, never a credential's content.
 */
import { createPrivateKey, randomBytes, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Verdict } from './verdict.js';
import {
  eip712Signer as createEip712Signer, nativeSecp256k1, nobleSecp256k1, scenarioHash,
  type AttestationMessage, type Eip712Domain, type Eip712Signer, type Secp256k1,
} from './eip712.js';

export type ConfiguredJwk = Record<string, unknown> & { kid: string; alg: 'ES256' | 'EdDSA' };

export interface AttestationConfig {
  /** The signing key first; 'generate': development, one key per start. */
  jwks?: ConfiguredJwk[] | 'generate';
  eip712Key?: `0x${string}` | 'generate';
  ttlSeconds: number;
  issuer?: string;
}

export interface AttestedExecution {
  executionId: string;
  projectId: string | null;
  scenarioId: string;
  scenarioRevision: number;
  scenarioDigest: string;
  address: string;
  verdict: Verdict;
  rules: { id: string; status: string }[];
  credentials: string[];
  /** False: a credential encoding no address, valid for any address sent with it. */
  holderBound: boolean;
  credentialsVerified: boolean;
}

/** A contract sees only subject, scenario and verdict: it could not tell these from checked ones. */
export function eip712Refusal(e: Pick<AttestedExecution, 'holderBound' | 'credentialsVerified'>): string | undefined {
  if (!e.credentialsVerified) return 'an EIP-712 attestation is not given for credentials that were not verified (CREDENTIAL_VERIFICATION=off)';
  if (!e.holderBound) {
    return 'an EIP-712 attestation needs the holder bound to the address (REQUIRE_HOLDER_BINDING=true; never for OffChainZKP): ' +
      'a contract would accept it from any address the same credential was sent for';
  }
  return undefined;
}

/** A verifier can refuse any other JWT signed by the same keys. */
const JWS_TYPE = 'scs-attestation+jwt';

const EIP712_NAME = 'ScenarioComplianceService';
const EIP712_VERSION = '1';

/** A verdict as the contract's uint8: 0 is never signed, so an all-zero struct cannot pass. */
const VERDICT_CODES: Record<Verdict, number> = { passed: 1, failed: 2, error: 3, pending: 4 };

export interface Eip712Attestation {
  signer: `0x${string}`;
  domain: Eip712Domain;
  message: AttestationMessage;
  signature: `0x${string}`;
}

/** EC and OKP keys have no other members than strings. */
const nodeJwk = (key: Record<string, unknown>): JsonWebKey =>
  Object.fromEntries(Object.entries(key).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

function publicJwk(key: Record<string, unknown>): JWK {
  const members = Object.entries(nodeJwk(key)).filter(([k]) => !PRIVATE_MEMBERS.includes(k));
  return { ...Object.fromEntries(members), use: 'sig' };
}

/** @noble/curves gives the same signatures for ~5x the CPU. */
async function eip712Signer(key: `0x${string}`, warn: (message: string) => void): Promise<Eip712Signer> {
  let curve: Secp256k1;
  try {
    curve = await nativeSecp256k1();
  } catch (err) {
    warn(`EIP-712 attestations are signed in JavaScript (@noble/curves), libsecp256k1's binding did not load: ${(err as Error).message}`);
    curve = await nobleSecp256k1();
  }
  return createEip712Signer(key, curve);
}

export interface Attestor {
  readonly jws: boolean;
  readonly eip712: boolean;
  readonly jwks: { keys: JWK[] };
  signJws(execution: AttestedExecution, nowMs: number): Promise<string>;
  /** Undefined for a non-EVM address. */
  signEip712(execution: AttestedExecution, target: { chainId: number; verifyingContract: `0x${string}` }, nowMs: number): Promise<Eip712Attestation | undefined>;
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const isEvmAddress = (s: string): s is `0x${string}` => EVM_ADDRESS.test(s);

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

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
  // Made at first use: only a service that signs one loads libsecp256k1.
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
    // node:crypto's one-shot sign: jose's WebCrypto path (a key import per call) cost several times more.
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
      const signer = await (signerLoad ??= eip712Signer(key, warn));
      const domain = { name: EIP712_NAME, version: EIP712_VERSION, chainId, verifyingContract };
      const message = {
        subject,
        scenario: scenarioHash(e.projectId, e.scenarioId),
        verdict: VERDICT_CODES[e.verdict],
        expiry: Math.floor(nowMs / 1000) + ttlSeconds,
        // Random: instances share no counter, and 128 bits keep the calldata short.
        nonce: BigInt(`0x${randomBytes(16).toString('hex')}`).toString(),
      };
      return { signer: signer.address, domain, message, signature: signer.sign(domain, message) };
    },
  };
}
