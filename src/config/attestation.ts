/**
 * ATTESTATION_*: the keys that sign an execution's verdict (JWS and EIP-712). Never made by this process except in
 * development (DEMO_ISSUER=1 or CREDENTIAL_VERIFICATION=off, one process): then per start, with a warning.
 */
import fs from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import type { AttestationConfig, ConfiguredJwk } from '../domain/attestation.js';
import { isRecord } from '../schemas/json.js';
import { ConfigError } from './errors.js';
import { integer, text } from './variables.js';

export const attestationEnv = Type.Object({
  ATTESTATION_JWKS: Type.Optional(text({
    expect: 'a JSON Web Key Set (`{"keys":[...]}`) of ES256 (P-256) or EdDSA (Ed25519) keys, each with a unique `kid`',
    docDefault: 'unset: no JWS attestations (in development, a key made per start)',
    description: 'The JWS attestation keys. The first key, which must hold its private part (`d`), signs; the others are ' +
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
    expect: '0x and 64 hex digits',
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

/** The value of a variable or of its _FILE twin (never both). Messages never quote key material. */
function secret(env: AttestationEnv, name: 'ATTESTATION_JWKS' | 'ATTESTATION_EIP712_KEY'): string | undefined {
  const direct = env[name];
  const file = env[`${name}_FILE`];
  if (direct !== undefined && file !== undefined) throw new ConfigError(`${name} and ${name}_FILE are both set; set one`);
  if (file === undefined) return direct;
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : 'error';
    throw new ConfigError(`${name}_FILE cannot be read (${code})`);
  }
}

const KEY_KINDS: Record<string, { kty: string; crv: string; members: string[] }> = {
  ES256: { kty: 'EC', crv: 'P-256', members: ['x', 'y'] },
  EdDSA: { kty: 'OKP', crv: 'Ed25519', members: ['x'] },
};

/** Any object, arrays included: a key that is an array fails on its "alg", as other objects without one do. */
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;

/** ATTESTATION_JWKS: a JWK set of ES256/EdDSA keys with unique kids; the first holds `d`. */
function jwkSet(raw: string): ConfiguredJwk[] {
  const bad = (why: string) => new ConfigError(`ATTESTATION_JWKS must be a JSON Web Key Set of ES256 or EdDSA keys: ${why}`);
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
    const kind = typeof key.alg === 'string' ? KEY_KINDS[key.alg] : undefined;
    if (!kind) throw bad(`key ${i} has no "alg" ES256 or EdDSA`);
    if (key.kty !== kind.kty || key.crv !== kind.crv) throw bad(`key ${i} (${String(key.alg)}) must have kty ${kind.kty} and crv ${kind.crv}`);
    if (kind.members.some((m) => typeof key[m] !== 'string')) throw bad(`key ${i} lacks ${kind.members.join(' or ')}`);
    if (typeof key.kid !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(key.kid)) throw bad(`key ${i} has no "kid" (1 to 128 printable characters)`);
    if (kids.has(key.kid)) throw bad(`kid ${key.kid} is used twice`);
    kids.add(key.kid);
    const alg = key.alg;
    if (alg !== 'ES256' && alg !== 'EdDSA') throw bad(`key ${i} has no "alg" ES256 or EdDSA`);
    return { ...key, kid: key.kid, alg };
  });
  if (typeof out[0]?.d !== 'string') throw bad('the first key signs and must hold its private part "d"');
  return out;
}

const isHexKey = (s: string): s is `0x${string}` => /^0x[0-9a-fA-F]{64}$/.test(s);

/**
 * The attestation settings. `development`: the configuration is a development one (DEMO_ISSUER=1 or
 * CREDENTIAL_VERIFICATION=off) in one process, where unset keys are made per start; elsewhere unset is off.
 */
export function attestationConfig(env: AttestationEnv, development: boolean): AttestationConfig {
  const jwksText = secret(env, 'ATTESTATION_JWKS');
  const eipText = secret(env, 'ATTESTATION_EIP712_KEY');
  if (eipText !== undefined && !isHexKey(eipText)) throw new ConfigError('ATTESTATION_EIP712_KEY must be 0x and 64 hex digits');
  const generate = development ? 'generate' as const : undefined;
  return {
    jwks: jwksText === undefined ? generate : jwkSet(jwksText),
    eip712Key: eipText ?? generate,
    ttlSeconds: env.ATTESTATION_TTL_SECONDS,
    ...(env.ATTESTATION_ISSUER !== undefined && { issuer: env.ATTESTATION_ISSUER }),
  };
}
