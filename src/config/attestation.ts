/** Never made by this process except in development (one process): then per start, with a warning. */
import { createECDH, createPrivateKey, createPublicKey, type JsonWebKey } from 'node:crypto';
import fs from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import type { AttestationConfig, ConfiguredJwk } from '../domain/attestation.js';
import { isRecord } from '../schemas/json.js';
import { ConfigError } from './errors.js';
import { integer, text } from './variables.js';

export const attestationEnv = Type.Object({
  ATTESTATION_JWKS: Type.Optional(text({
    expect: 'a JSON Web Key Set (`{"keys":[...]}`) of ES256 (P-256) or EdDSA (Ed25519) keys, each with a unique `kid` ' +
      '(`alg` may be left out: the curve says it)',
    docDefault: 'unset: no JWS attestations (in development, a key made per start)',
    description: 'The JWS attestation keys (`npm run keys` makes a set). The first key, which must hold its private part ' +
      '(`d`, checked at start against its public part), signs; the others are ' +
      'previous keys (their private part, if any, is ignored), still published at `/.well-known/jwks.json` so that ' +
      'attestations they signed keep verifying. To rotate: put the new key first and keep the old one after it until its ' +
      'last attestation expired (`ATTESTATION_TTL_SECONDS`). Not with `ATTESTATION_JWKS_FILE`.',
  })),
  ATTESTATION_JWKS_FILE: Type.Optional(text({
    expect: 'a file path',
    docDefault: 'unset',
    description: 'A file holding what `ATTESTATION_JWKS` would (read once at start).',
  })),
  ATTESTATION_EIP712_KEY: Type.Optional(text({
    expect: '0x and 64 hex digits: a secp256k1 private key (above 0, below the curve order)',
    docDefault: 'unset: no EIP-712 attestations (in development, a key made per start)',
    description: 'The Ethereum private key signing EIP-712 attestations; its address is what a contract allows ' +
      '(`ComplianceGate.setSigner`). Not with `ATTESTATION_EIP712_KEY_FILE`.',
  })),
  ATTESTATION_EIP712_KEY_FILE: Type.Optional(text({
    expect: 'a file path',
    docDefault: 'unset',
    description: 'A file holding what `ATTESTATION_EIP712_KEY` would (read once at start).',
  })),
  ATTESTATION_TTL_SECONDS: integer(10, 31_536_000, {
    default: 600,
    description: 'How long an attestation is valid after it is issued (`exp` of a JWS, `expiry` of an EIP-712 attestation).',
  }),
  ATTESTATION_ISSUER: Type.Optional(text({
    expect: 'printable characters, no spaces (e.g. `https://compliance.example.com`)',
    pattern: '^[\\x21-\\x7e]{1,512}$',
    docDefault: 'unset: no `iss`',
    description: 'The `iss` claim of JWS attestations (e.g. this service\'s public URL), for backends that check it.',
  })),
});

export type AttestationEnv = Static<typeof attestationEnv>;

/** Messages never quote key material. */
function secret(env: AttestationEnv, name: 'ATTESTATION_JWKS' | 'ATTESTATION_EIP712_KEY'): { value: string; from: string } | undefined {
  const direct = env[name];
  const file = env[`${name}_FILE`];
  if (direct !== undefined && file !== undefined) throw new ConfigError(`${name} and ${name}_FILE are both set; set one`);
  if (file === undefined) return direct === undefined ? undefined : { value: direct, from: name };
  try {
    return { value: fs.readFileSync(file, 'utf8').trim(), from: `${name}_FILE` };
  } catch (err) {
    const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : 'error';
    throw new ConfigError(`${name}_FILE cannot be read (${code})`);
  }
}

const KEY_KINDS: Record<string, { kty: string; crv: string; members: string[] }> = {
  ES256: { kty: 'EC', crv: 'P-256', members: ['x', 'y'] },
  EdDSA: { kty: 'OKP', crv: 'Ed25519', members: ['x'] },
};

/** A key without "alg" has the one its curve allows (jose's exportJWK writes none): P-256 signs ES256, Ed25519 EdDSA. */
function algOf(key: Record<string, unknown>): unknown {
  if (key.alg !== undefined) return key.alg;
  return Object.keys(KEY_KINDS).find((alg) => KEY_KINDS[alg]?.kty === key.kty && KEY_KINDS[alg]?.crv === key.crv);
}

function isPublicKey(key: Record<string, unknown>): boolean {
  try {
    createPublicKey({ key: { kty: key.kty, crv: key.crv, x: key.x, ...(key.y !== undefined && { y: key.y }) } as JsonWebKey, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}

const PRIVATE_D = /^[A-Za-z0-9_-]{43}$/;

/**
 * Else it signs what the JWKS cannot verify. Derived from `d` alone: node:crypto's JWK import of an EC key takes x, y
 * as given.
 */
function privateMatches(key: Record<string, unknown>): boolean {
  if (typeof key.d !== 'string' || !PRIVATE_D.test(key.d)) return false;
  try {
    if (key.kty === 'EC') {
      const ecdh = createECDH('prime256v1');
      ecdh.setPrivateKey(Buffer.from(key.d, 'base64url'));
      const point = ecdh.getPublicKey(); // 04 || x || y
      return point.subarray(1, 33).toString('base64url') === key.x && point.subarray(33).toString('base64url') === key.y;
    }
    const derived = createPublicKey(createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: key.d, x: key.x } as JsonWebKey, format: 'jwk' }))
      .export({ format: 'jwk' });
    return derived.x === key.x;
  } catch {
    return false;
  }
}

/** Any object, arrays included: a key that is an array fails on its "alg", as other objects without one do. */
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;

function jwkSet(raw: string, from: string): ConfiguredJwk[] {
  const bad = (why: string) => new ConfigError(`${from} must be a JSON Web Key Set of ES256 or EdDSA keys: ${why}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw bad('it is not JSON');
  }
  const keys = isRecord(parsed) ? parsed.keys : undefined;
  if (!Array.isArray(keys) || keys.length === 0) throw bad('no "keys" array, or it is empty');
  const kids = new Set<string>();
  const out = keys.map((key: unknown, i): ConfiguredJwk => {
    if (!isObject(key)) throw bad(`key ${i} is not an object`);
    const alg = algOf(key);
    const kind = typeof alg === 'string' ? KEY_KINDS[alg] : undefined;
    if (!kind) throw bad(`key ${i} has neither "alg" ES256 or EdDSA nor the curve of one (kty EC, crv P-256; kty OKP, crv Ed25519)`);
    if (key.kty !== kind.kty || key.crv !== kind.crv) throw bad(`key ${i} (${String(alg)}) must have kty ${kind.kty} and crv ${kind.crv}`);
    if (kind.members.some((m) => typeof key[m] !== 'string')) throw bad(`key ${i} lacks ${kind.members.join(' or ')}`);
    if (!isPublicKey(key)) throw bad(`key ${i}'s ${kind.members.join(', ')} are not a public key of ${kind.crv}`);
    if (typeof key.kid !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(key.kid)) throw bad(`key ${i} has no "kid" (1 to 128 printable characters)`);
    if (kids.has(key.kid)) throw bad(`kid ${key.kid} is used twice`);
    kids.add(key.kid);
    if (alg !== 'ES256' && alg !== 'EdDSA') throw bad(`key ${i} has no "alg" ES256 or EdDSA`);
    if (i === 0 && typeof key.d !== 'string') throw bad('the first key signs and must hold its private part "d"');
    if (i === 0 && !privateMatches(key)) throw bad(`key 0's "d" is not the private key of its ${kind.members.join(', ')}`);
    return { ...key, kid: key.kid, alg };
  });
  return out;
}

/** secp256k1's order: a private key is in [1, n-1]. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

const isHexKey = (s: string): s is `0x${string}` => /^0x[0-9a-fA-F]{64}$/.test(s);

export function attestationConfig(env: AttestationEnv, development: boolean): AttestationConfig {
  const jwks = secret(env, 'ATTESTATION_JWKS');
  const eip = secret(env, 'ATTESTATION_EIP712_KEY');
  if (eip !== undefined && !isHexKey(eip.value)) throw new ConfigError(`${eip.from} must be 0x and 64 hex digits`);
  // 0 or n and above: no key; viem would refuse it only when it first signs, in a request.
  if (eip !== undefined && (BigInt(eip.value) === 0n || BigInt(eip.value) >= SECP256K1_N)) {
    throw new ConfigError(`${eip.from} must be a secp256k1 private key: above 0 and below the curve order`);
  }
  const generate = development ? 'generate' as const : undefined;
  return {
    jwks: jwks === undefined ? generate : jwkSet(jwks.value, jwks.from),
    eip712Key: eip === undefined ? generate : eip.value as `0x${string}`,
    ttlSeconds: env.ATTESTATION_TTL_SECONDS,
    ...(env.ATTESTATION_ISSUER !== undefined && { issuer: env.ATTESTATION_ISSUER }),
  };
}
