/** A bad value is a ConfigError, like any other variable's: ZkpOptionsError stays for options handed in by code. */
import { statSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { ConfigError } from '../config/errors.js';
import { integer, oneOf, text } from '../config/variables.js';
import { isRecord } from '../schemas/json.js';
import { ZkpOptionsError } from './errors.js';
import { ZKP_DEFAULT_CIRCUIT_IDS, type ZkpDefaultCircuitId } from './queries.js';
import { isCanonicalDid, isCanonicalIden3Did } from './did.js';
import { parseStateResolversConfig, type RpcChainConfig } from './state.js';

export interface ZkpEnvConfig {
  verifierDid?: string;
  requestTtlMs: number;
  defaultCircuitId: ZkpDefaultCircuitId;
  contexts: Record<string, string>;
  allowedIssuers: string[];
  circuitsDir?: string;
  stateResolvers: Record<string, RpcChainConfig>;
  proofMaxAgeMs: number;
  clockSkewMs: number;
  stateTransitionDelayMs: number;
  allowPlainMessages: boolean;
  /** Callback answers per client address per minute (429 beyond; 0 = no such limit). */
  responsesPerMinute: number;
  /** Each costs a proof check. */
  answersPerExecution: number;
}

/** Whole seconds from 1, ten digits at most: milliseconds stay safe integers. */
const seconds = (dflt: number, description: string) => integer(1, 9_999_999_999, { default: dflt, description });

export const zkpEnv = Type.Object({
  ZKP_VERIFIER_DID: Type.Optional(text({
    expect: 'a DID in canonical form',
    docDefault: 'unset (OffChainZKP rules answer `error`)',
    description: 'The verifier\'s iden3 DID: the `from` of authorization requests, the `to` of answers.',
  })),
  ZKP_REQUEST_TTL_SECONDS: seconds(600, 'Lifetime of an authorization request; a pending execution then fails.'),
  ZKP_DEFAULT_CIRCUIT_ID: oneOf(ZKP_DEFAULT_CIRCUIT_IDS, { default: 'credentialAtomicQuerySigV2', description: 'Circuit of queries that name none.' }),
  ZKP_CONTEXTS: Type.Optional(text({
    expect: 'a JSON object',
    docDefault: '`{}`',
    description: 'JSON `{"<credential type>": "<JSON-LD context URL>"}` for queries without their own `context`.',
  })),
  ZKP_ALLOWED_ISSUERS: text({
    expect: 'iden3 DIDs, or `*`',
    default: '*',
    description: 'Comma-separated issuer DIDs whose credentials a proof may come from.',
  }),
  ZKP_CIRCUITS_DIR: Type.Optional(text({
    expect: 'a directory',
    docDefault: 'the keys shipped in `@iden3/js-iden3-auth`',
    description: '`<dir>/<circuitId>/verification_key.json`.',
  })),
  ZKP_STATE_RESOLVERS: Type.Optional(text({
    expect: 'a JSON object',
    docDefault: '`{}`',
    description: 'JSON `{"polygon:amoy": {"rpcUrl": "…", "contractAddress": "0x…"}}`: where issuer states are checked.',
  })),
  ZKP_PROOF_MAX_AGE_SECONDS: seconds(3600, 'Oldest accepted proof.'),
  ZKP_CLOCK_SKEW_SECONDS: seconds(300, 'How far in the future a proof\'s timestamp may be.'),
  ZKP_STATE_TRANSITION_DELAY_SECONDS: seconds(3600, 'How long a proof against an issuer\'s replaced state is still accepted.'),
  // Its own spellings, narrower than a boolean's: a switch for tests only.
  ZKP_ALLOW_PLAIN_RESPONSES: oneOf(['false', 'true', '0', '1'] as const, {
    default: 'false',
    description: 'Accept unsigned plain iden3comm answers (tests only: they are not bound to the holder).',
  }),
  ZKP_RESPONSES_PER_MINUTE: integer(0, 999_999, {
    default: 30,
    description: 'Answers to the OffChainZKP callback per client address and minute (429 beyond), instead of `RATE_LIMIT_MAX` ' +
      'on that route; `0` leaves the route to `RATE_LIMIT_MAX`. The client address is the proxy\'s unless `TRUST_PROXY` lists ' +
      'it. Per instance, and per worker process with `WORKERS`; across them all with `REDIS_URL`.',
  }),
  ZKP_ANSWERS_PER_EXECUTION: integer(1, 999_999, {
    default: 5,
    description: 'Answers one pending execution takes (each may cost a proof check); 429 beyond: start a new execution. Only ' +
      'answers that decode and pass the thread, recipient and address checks count. Kept with the execution in the database: ' +
      'one budget across processes and instances.',
  }),
});

export type ZkpEnv = Static<typeof zkpEnv>;

const isUrlMap = (x: unknown): x is Record<string, string> =>
  isRecord(x) && Object.values(x).every((v) => typeof v === 'string' && v.length > 0);

function contexts(raw: string | undefined): Record<string, string> {
  if (raw === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (!isUrlMap(parsed)) throw new ConfigError('ZKP_CONTEXTS must be a JSON object {"<credential type>": "<JSON-LD context URL>"}');
  return parsed;
}

function stateResolvers(raw: string | undefined): Record<string, RpcChainConfig> {
  try {
    return parseStateResolversConfig(raw);
  } catch (err) {
    if (!(err instanceof ZkpOptionsError)) throw err;
    throw new ConfigError(err.message.startsWith('ZKP_STATE_RESOLVERS') ? err.message : `ZKP_STATE_RESOLVERS: ${err.message}`);
  }
}

/** Checked now, so that a typo stops the start naming its variable. */
function existing(name: string, path: string | undefined, kind: 'file' | 'directory'): string | undefined {
  if (path === undefined) return undefined;
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!(kind === 'file' ? stat?.isFile() : stat?.isDirectory())) throw new ConfigError(`${name} must be an existing ${kind}`);
  return path;
}

export function zkpEnvConfig(env: ZkpEnv): ZkpEnvConfig {
  const verifierDid = env.ZKP_VERIFIER_DID;
  if (verifierDid !== undefined && !isCanonicalDid(verifierDid)) {
    throw new ConfigError('ZKP_VERIFIER_DID must be a DID in canonical form (e.g. did:iden3:polygon:amoy:x...)');
  }
  const issuers = env.ZKP_ALLOWED_ISSUERS.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  for (const i of issuers) {
    if (i !== '*' && !isCanonicalIden3Did(i)) throw new ConfigError(`ZKP_ALLOWED_ISSUERS: ${JSON.stringify(i)} is not * nor an iden3 DID`);
  }
  return {
    verifierDid,
    requestTtlMs: env.ZKP_REQUEST_TTL_SECONDS * 1000,
    defaultCircuitId: env.ZKP_DEFAULT_CIRCUIT_ID,
    contexts: contexts(env.ZKP_CONTEXTS),
    allowedIssuers: issuers.includes('*') ? ['*'] : issuers,
    circuitsDir: existing('ZKP_CIRCUITS_DIR', env.ZKP_CIRCUITS_DIR, 'directory'),
    stateResolvers: stateResolvers(env.ZKP_STATE_RESOLVERS),
    proofMaxAgeMs: env.ZKP_PROOF_MAX_AGE_SECONDS * 1000,
    clockSkewMs: env.ZKP_CLOCK_SKEW_SECONDS * 1000,
    stateTransitionDelayMs: env.ZKP_STATE_TRANSITION_DELAY_SECONDS * 1000,
    allowPlainMessages: env.ZKP_ALLOW_PLAIN_RESPONSES === 'true' || env.ZKP_ALLOW_PLAIN_RESPONSES === '1',
    responsesPerMinute: env.ZKP_RESPONSES_PER_MINUTE,
    answersPerExecution: env.ZKP_ANSWERS_PER_EXECUTION,
  };
}
