/**
 * `npm run keys` (README "Keys"): a JWKS of ES256 and EdDSA keys (the first signs, the second is published and signs
 * once moved first), an EIP-712 key and a WEBHOOK_SECRET, as shell/dotenv lines or, with `--dir`, files (mode 0600).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { SECP256K1_N } from '../config/attestation.js';

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: node dist/scripts/keys.js [--dir DIR]\n`);
  process.exit(2);
}

function eip712Key(): `0x${string}` {
  for (;;) {
    const key = randomBytes(32).toString('hex');
    const n = BigInt(`0x${key}`);
    if (n > 0n && n < SECP256K1_N) return `0x${key}`;
  }
}

function makeKeys(now = new Date()) {
  const day = now.toISOString().slice(0, 10);
  const kid = (alg: string) => `${alg.toLowerCase()}-${day}-${randomBytes(3).toString('hex')}`;
  const es256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const eddsa = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  const key = eip712Key();
  return {
    jwks: { keys: [{ ...es256, kid: kid('ES256'), alg: 'ES256' }, { ...eddsa, kid: kid('EdDSA'), alg: 'EdDSA' }] },
    eip712Key: key,
    signer: privateKeyToAccount(key).address,
    webhookSecret: `whsec_${randomBytes(32).toString('base64')}`,
  };
}

function main(argv: string[]) {
  let dir: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--dir') dir = argv[++i] ?? usage('--dir needs a directory');
    else usage(`unknown option ${argv[i]}`);
  }
  const keys = makeKeys();
  const jwks = JSON.stringify(keys.jwks);
  const lines = [
    '# Made by `npm run keys`. Secret: keep them out of the repository and logs.',
    `# EIP-712 signer address (ComplianceGate's constructor and setSigner): ${keys.signer}`,
  ];
  if (dir === undefined) {
    // Single quotes: a shell or a dotenv file takes the JSON as it is (it holds no single quote).
    lines.push(`ATTESTATION_JWKS='${jwks}'`, `ATTESTATION_EIP712_KEY=${keys.eip712Key}`);
  } else {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const jwksFile = path.resolve(dir, 'attestation-jwks.json');
    const keyFile = path.resolve(dir, 'attestation-eip712.key');
    // 'wx': never overwrites keys already there (what they signed would stop verifying).
    fs.writeFileSync(jwksFile, `${jwks}\n`, { mode: 0o600, flag: 'wx' });
    fs.writeFileSync(keyFile, `${keys.eip712Key}\n`, { mode: 0o600, flag: 'wx' });
    lines.push(`ATTESTATION_JWKS_FILE=${jwksFile}`, `ATTESTATION_EIP712_KEY_FILE=${keyFile}`);
  }
  lines.push(`WEBHOOK_SECRET=${keys.webhookSecret}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

try {
  main(process.argv.slice(2));
} catch (err) {
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  process.stderr.write(`keys: ${code === 'EEXIST' ? 'key files are already in that directory; choose another' : err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
