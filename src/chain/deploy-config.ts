/**
 * Deploying scenarios to a UniversalVerifier (CHAIN_DEPLOYER_*, CHAIN_VERIFIER_ADDRESS, CHAIN_VALIDATORS, fees). A
 * deployer key is a secret: no message here quotes one, not even part of it.
 */
import fs from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { ConfigError } from '../config/errors.js';
import { integer, text } from '../config/variables.js';
import { parseChainRef } from './config.js';

/** `*`: every chain without its own entry. */
export type PerChain<T> = ReadonlyMap<string, T>;

export interface DeploySettings {
  /** Never logged, answered or stored. */
  keys: PerChain<`0x${string}`>;
  verifiers: PerChain<`0x${string}`>;
  validators: PerChain<readonly `0x${string}`[]>;
  maxFeePerGas: bigint;
  /** The most gas one deploy may take (its estimate with a fifth more); the latest block's gas limit bounds it too. */
  maxGas: bigint;
  /** 0: never. */
  replaceAfterMs: number;
}

export const deployEnv = Type.Object({
  CHAIN_DEPLOYER_KEY: Type.Optional(text({
    expect: 'a secp256k1 private key (0x and 64 hex digits), or comma-separated `chain=key` entries',
    docDefault: 'unset (POST …/deployments answers 409)',
    description: 'The key the service signs its `setRequests` transactions with (the requests\' creator). Never logged or answered. ' +
      'One key for every chain, or one per chain (`eip155:80002=0x…`). Prefer CHAIN_DEPLOYER_KEY_FILE.',
  })),
  CHAIN_DEPLOYER_KEY_FILE: Type.Optional(text({
    expect: 'a readable file holding what CHAIN_DEPLOYER_KEY would',
    docDefault: 'unset',
    description: 'CHAIN_DEPLOYER_KEY read from a file (a mounted secret); not both.',
  })),
  CHAIN_VERIFIER_ADDRESS: Type.Optional(text({
    expect: 'a contract address (0x and 40 hex digits), or comma-separated `chain=address` entries',
    docDefault: 'unset (a deploy names its verifier)',
    description: 'The UniversalVerifier (@iden3/contracts 3.x) a deploy sends its requests to when its body names none.',
  })),
  CHAIN_VALIDATORS: Type.Optional(text({
    expect: 'comma-separated validator addresses, each optionally `chain=address`',
    docDefault: 'unset (a deploy names its validators)',
    description: 'The request validators a deploy may use (whitelisted on the verifier); each one\'s circuits are read from ' +
      'it (getSupportedCircuitIds), and every rule takes the one proving its circuit.',
  })),
  CHAIN_MAX_FEE_PER_GAS: text({
    expect: 'an integer number of wei',
    default: '500000000000',
    description: 'The highest maxFeePerGas a deploy or a replacement pays; above it the deploy is refused (409), and a stuck ' +
      'transaction is not replaced further.',
  }),
  CHAIN_DEPLOY_MAX_GAS: integer(21_000, 1_000_000_000, {
    default: 10_000_000,
    description: 'The most gas each transaction of a deploy may take (setRequests: its estimate and a fifth more; setMultiRequest, ' +
      'where the rules make several requests: 250000 + 150000 per id), the latest block\'s gas limit bounding it too. A deploy sends ' +
      'one or two, so it spends at most twice this x CHAIN_MAX_FEE_PER_GAS (a replacement takes the same nonce under the same caps); above it, refused (422) before a nonce is taken.',
  }),
  CHAIN_REPLACE_AFTER_MS: integer(0, 86_400_000, {
    default: 180_000,
    description: 'A deploy transaction still pending after this long is sent again with the same nonce and a higher fee (0 = never).',
  }),
});

export type DeployEnv = Static<typeof deployEnv>;

const KEY = /^0x[0-9a-fA-F]{64}$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** Entries `value` or `chain=value`; a bad one is named by position, never quoted (`quote` false). */
function perChain(variable: string, value: string | undefined, valid: RegExp, what: string, quote: boolean): Map<string, `0x${string}`[]> {
  const out = new Map<string, `0x${string}`[]>();
  if (value === undefined || value.trim() === '') return out;
  value.split(',').forEach((raw, i) => {
    const entry = raw.trim();
    const eq = entry.indexOf('=');
    const chain = eq < 0 ? '*' : parseChainRef(entry.slice(0, eq).trim())?.chain;
    const item = (eq < 0 ? entry : entry.slice(eq + 1)).trim();
    const shown = quote ? ` (${JSON.stringify(item.slice(0, 50))})` : '';
    if (chain === undefined) throw new ConfigError(`${variable}: entry ${i + 1} does not start with a CAIP-2 EVM chain (eip155:<chain id>=…)`);
    if (!valid.test(item)) throw new ConfigError(`${variable}: entry ${i + 1} is not ${what}${shown}`);
    out.set(chain, [...(out.get(chain) ?? []), item.toLowerCase() as `0x${string}`]);
  });
  return out;
}

function single<T>(variable: string, map: Map<string, T[]>): Map<string, T> {
  const out = new Map<string, T>();
  for (const [chain, items] of map) {
    if (items.length > 1) throw new ConfigError(`${variable}: ${chain === '*' ? 'more than one entry without a chain' : `${chain} is listed twice`}`);
    out.set(chain, items[0] as T);
  }
  return out;
}

function deployerKeys(env: DeployEnv): string | undefined {
  if (env.CHAIN_DEPLOYER_KEY !== undefined && env.CHAIN_DEPLOYER_KEY_FILE !== undefined) {
    throw new ConfigError('CHAIN_DEPLOYER_KEY and CHAIN_DEPLOYER_KEY_FILE are both set: set one');
  }
  if (env.CHAIN_DEPLOYER_KEY_FILE === undefined) return env.CHAIN_DEPLOYER_KEY;
  try {
    return fs.readFileSync(env.CHAIN_DEPLOYER_KEY_FILE, 'utf8').trim();
  } catch (err) {
    throw new ConfigError(`CHAIN_DEPLOYER_KEY_FILE cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

export function deploySettings(env: DeployEnv): DeploySettings {
  const fee = env.CHAIN_MAX_FEE_PER_GAS.trim();
  if (!/^[1-9][0-9]{0,30}$/.test(fee)) throw new ConfigError(`CHAIN_MAX_FEE_PER_GAS must be a positive integer number of wei (got ${JSON.stringify(fee.slice(0, 40))})`);
  const keyVariable = env.CHAIN_DEPLOYER_KEY_FILE === undefined ? 'CHAIN_DEPLOYER_KEY' : 'CHAIN_DEPLOYER_KEY_FILE';
  return {
    keys: single(keyVariable, perChain(keyVariable, deployerKeys(env), KEY, 'a private key (0x and 64 hex digits)', false)),
    verifiers: single('CHAIN_VERIFIER_ADDRESS', perChain('CHAIN_VERIFIER_ADDRESS', env.CHAIN_VERIFIER_ADDRESS, ADDRESS, 'an address', true)),
    validators: perChain('CHAIN_VALIDATORS', env.CHAIN_VALIDATORS, ADDRESS, 'an address', true),
    maxFeePerGas: BigInt(fee),
    maxGas: BigInt(env.CHAIN_DEPLOY_MAX_GAS),
    replaceAfterMs: env.CHAIN_REPLACE_AFTER_MS,
  };
}

/** The chain's own entry, else the `*` one. */
export function forChain<T>(map: PerChain<T>, chain: string): T | undefined {
  return map.get(chain) ?? map.get('*');
}
