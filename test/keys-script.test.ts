/**
 * `npm run keys` (dist/scripts/keys.js, issue 37): what it prints starts the service as it is, in the environment or
 * as files, and its JWS key signs what its JWKS verifies.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { loadConfig } from '../src/config.js';
import { createAttestor } from '../src/domain/attestation.js';
import { tempDir } from './helpers.js';

/** The script's NAME=value lines (a single-quoted value unquoted, as a shell or a dotenv file reads it). */
function run(...args: string[]): Record<string, string> {
  const out = execFileSync(process.execPath, [path.resolve('dist/scripts/keys.js'), ...args], { encoding: 'utf8' });
  const lines = out.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  return Object.fromEntries(lines.map((l) => {
    const [, name, value] = /^([A-Z0-9_]+)=(.*)$/.exec(l) ?? [];
    expect(name, l).toBeDefined();
    return [name!, value!.replace(/^'(.*)'$/, '$1')];
  }));
}

describe('npm run keys', () => {
  it('prints a JWKS (ES256 and EdDSA, with kid and alg), an EIP-712 key and a webhook secret that loadConfig takes as they are', async () => {
    const env = run();
    expect(Object.keys(env).sort()).toEqual(['ATTESTATION_EIP712_KEY', 'ATTESTATION_JWKS', 'WEBHOOK_SECRET']);
    const config = loadConfig({ ...env, WEBHOOK_URL: 'https://hooks.example/scs' });
    const jwks = config.attestation.jwks;
    expect(Array.isArray(jwks) && jwks.map((k) => [k.alg, k.kty, k.crv, typeof k.d, typeof k.kid])).toEqual([
      ['ES256', 'EC', 'P-256', 'string', 'string'],
      ['EdDSA', 'OKP', 'Ed25519', 'string', 'string'],
    ]);
    expect(config.attestation.eip712Key).toBe(env.ATTESTATION_EIP712_KEY);
    expect(config.webhook?.secret).toBe(env.WEBHOOK_SECRET);
    const attestor = await createAttestor(config.attestation, () => {});
    const jws = await attestor.signJws({
      executionId: 'e', projectId: 'p', scenarioId: 's', scenarioRevision: 1, scenarioDigest: 'd', address: '0x1', verdict: 'passed',
      rules: [], credentials: [], holderBound: true, credentialsVerified: true,
    }, Date.now());
    expect((await jwtVerify(jws, createLocalJWKSet(attestor.jwks))).protectedHeader.alg).toBe('ES256');
  });

  it('with --dir, writes the keys to files only its owner reads, and the _FILE variables it prints start the service', () => {
    const dir = path.join(tempDir('scs-keys-'), 'secrets');
    const env = run('--dir', dir);
    expect(Object.keys(env).sort()).toEqual(['ATTESTATION_EIP712_KEY_FILE', 'ATTESTATION_JWKS_FILE', 'WEBHOOK_SECRET']);
    for (const file of [env.ATTESTATION_JWKS_FILE!, env.ATTESTATION_EIP712_KEY_FILE!]) {
      expect(path.dirname(file)).toBe(path.resolve(dir));
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    }
    const config = loadConfig(env);
    expect(Array.isArray(config.attestation.jwks) && config.attestation.jwks.length).toBe(2);
    expect(config.attestation.eip712Key).toMatch(/^0x[0-9a-f]{64}$/);
  });
});
