/**
 * Attestation keys are checked whole at start (issue 36): an EIP-712 key outside secp256k1's range, a JWK whose `d`
 * is not the private key of its x(, y), a malformed `d`: one configuration line naming the variable that was set,
 * never the key. Keys as jose exports them (no "alg") are taken with the algorithm their curve says (issue 37).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
import { ConfigError, loadConfig } from '../src/config.js';
import { createAttestor } from '../src/domain/attestation.js';
import { tempDir } from './helpers.js';

const N = 'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141';

/** The ConfigError loadConfig throws for `env` (a stack trace or another error fails the test). */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const { message } = err as ConfigError;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('loadConfig accepted it');
}

const privateJwk = async (alg: 'ES256' | 'EdDSA'): Promise<JWK> =>
  exportJWK((await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' && { crv: 'Ed25519' }) })).privateKey);

const inFile = (content: string) => {
  const file = path.join(tempDir('scs-keys-'), 'value');
  fs.writeFileSync(file, content);
  return file;
};

describe('ATTESTATION_EIP712_KEY at start', () => {
  it.each([
    ['0', `0x${'0'.repeat(64)}`],
    ['the curve order', `0x${N}`],
    ['above the curve order', `0x${'f'.repeat(64)}`],
  ])('refuses %s in one line naming the variable, without the key', (_what, key) => {
    const message = refusal({ ATTESTATION_EIP712_KEY: key });
    expect(message).toBe('ATTESTATION_EIP712_KEY must be a secp256k1 private key: above 0 and below the curve order');
    expect(message).not.toContain(key.slice(2, 12));
    if (BigInt(key) > 0n) expect(message).not.toContain(BigInt(key).toString().slice(0, 12));
  });

  it('names ATTESTATION_EIP712_KEY_FILE when the key came from the file', () => {
    expect(refusal({ ATTESTATION_EIP712_KEY_FILE: inFile(`0x${N}`) })).toMatch(/^ATTESTATION_EIP712_KEY_FILE must be a secp256k1 private key/);
    expect(refusal({ ATTESTATION_EIP712_KEY_FILE: inFile('0x1234') })).toBe('ATTESTATION_EIP712_KEY_FILE must be 0x and 64 hex digits');
  });

  it('takes n - 1', () => {
    const last = `0x${(BigInt(`0x${N}`) - 1n).toString(16)}`;
    expect(loadConfig({ ATTESTATION_EIP712_KEY: last }).attestation.eip712Key).toBe(last);
  });
});

describe('ATTESTATION_JWKS at start', () => {
  it.each(['ES256', 'EdDSA'] as const)('refuses a %s key whose "d" is another key\'s, in one line without it', async (alg) => {
    const key = await privateJwk(alg);
    const other = await privateJwk(alg);
    const message = refusal({ ATTESTATION_JWKS: JSON.stringify({ keys: [{ ...key, d: other.d, kid: 'k' }] }) });
    expect(message).toMatch(/^ATTESTATION_JWKS must be a JSON Web Key Set of ES256 or EdDSA keys: key 0's "d" is not the private key of its x/);
    expect(message).not.toContain(String(other.d));
  });

  it.each(['', '!!not base64url!!', 'AAAA', 'x'.repeat(400)])('refuses a malformed "d" (%j) with the configuration line, not a stack trace', async (d) => {
    const key = await privateJwk('ES256');
    expect(refusal({ ATTESTATION_JWKS: JSON.stringify({ keys: [{ ...key, d, kid: 'k' }] }) }))
      .toMatch(/^ATTESTATION_JWKS must be .*: key 0's "d" is not the private key of its x, y$/);
  });

  it('refuses x, y that are not a point of P-256', async () => {
    const key = await privateJwk('ES256');
    expect(refusal({ ATTESTATION_JWKS: JSON.stringify({ keys: [{ ...key, y: key.x, kid: 'k' }] }) }))
      .toMatch(/key 0's x, y are not a public key of P-256$/);
  });

  it('names ATTESTATION_JWKS_FILE when the set came from the file', async () => {
    const key = await privateJwk('ES256');
    expect(refusal({ ATTESTATION_JWKS_FILE: inFile('not json') })).toBe('ATTESTATION_JWKS_FILE must be a JSON Web Key Set of ES256 or EdDSA keys: it is not JSON');
    expect(refusal({ ATTESTATION_JWKS_FILE: inFile(JSON.stringify({ keys: [{ ...key, crv: 'P-384', kid: 'k' }] })) }))
      .toMatch(/^ATTESTATION_JWKS_FILE must be .*key 0 has neither "alg" ES256 or EdDSA nor the curve of one/);
  });

  it.each(['ES256', 'EdDSA'] as const)('takes a %s key as jose exports it (no "alg"), signs with it, and its JWS verifies', async (alg) => {
    const exported = await privateJwk(alg);
    expect(exported.alg).toBeUndefined();
    const config = loadConfig({ ATTESTATION_JWKS_FILE: inFile(JSON.stringify({ keys: [{ ...exported, kid: 'from-jose' }] })) });
    const attestor = await createAttestor(config.attestation, () => {});
    expect(attestor.jwks.keys).toEqual([expect.objectContaining({ kid: 'from-jose', alg, use: 'sig' })]);
    const jws = await attestor.signJws({
      executionId: 'e', projectId: null, scenarioId: 's', scenarioRevision: 1, scenarioDigest: 'd', address: '0x1', verdict: 'passed',
      rules: [], credentials: [], holderBound: true, credentialsVerified: true,
    }, Date.now());
    const { protectedHeader } = await jwtVerify(jws, createLocalJWKSet(attestor.jwks), { algorithms: [alg] });
    expect(protectedHeader).toMatchObject({ alg, kid: 'from-jose' });
  });
});
