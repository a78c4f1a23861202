/**
 * The proposed environment variables of the ZKP module, read into typed options (config.ts may call this or copy
 * the rules). Every variable is optional; ZKP_VERIFIER_DID is needed before an OffChainZKP scenario can execute.
 *
 *   ZKP_VERIFIER_DID                    the verifier's iden3 DID (request `from`, answer `to`)        (none)
 *   ZKP_REQUEST_TTL_SECONDS             lifetime of an authorization request                          600
 *   ZKP_DEFAULT_CIRCUIT_ID              credentialAtomicQuerySigV2 | credentialAtomicQueryMTPV2      credentialAtomicQuerySigV2
 *   ZKP_CONTEXTS                        JSON {"<credential type>": "<JSON-LD context URL>"}            {}
 *   ZKP_ALLOWED_ISSUERS                 comma-separated issuer DIDs, or *                             *
 *   ZKP_JSONLD_DOCUMENTS_FILE           JSON file {"<url>": <document>} served besides the bundled    (none)
 *   ZKP_CIRCUITS_DIR                    <dir>/<circuitId>/verification_key.json                      keys shipped in js-iden3-auth
 *   ZKP_STATE_RESOLVERS                 JSON {"polygon:amoy": {"rpcUrl": "...", "contractAddress": "0x..."}}  {}
 *   ZKP_PROOF_MAX_AGE_SECONDS           oldest accepted proof                                         3600
 *   ZKP_CLOCK_SKEW_SECONDS              how far in the future a proof timestamp may be               300
 *   ZKP_STATE_TRANSITION_DELAY_SECONDS  grace period of a replaced issuer state                       3600
 *   ZKP_ALLOW_PLAIN_RESPONSES           accept unsigned plain JSON answers (tests only)              false
 *   ZKP_RESPONSES_PER_MINUTE            answers to the callback per client address and minute (0: off) 30
 *   ZKP_ANSWERS_PER_EXECUTION           answers one pending execution takes before 429               5
 */
import { ZkpOptionsError } from './errors.js';
import { DEFAULT_ZKP_CIRCUIT_ID, ZKP_CIRCUIT_IDS, type ZkpCircuitId } from './queries.js';
import { isCanonicalDid, isCanonicalIden3Did } from './did.js';
import { parseStateResolversConfig, type RpcChainConfig } from './state.js';

export interface ZkpEnvConfig {
  verifierDid?: string;
  requestTtlMs: number;
  defaultCircuitId: ZkpCircuitId;
  contexts: Record<string, string>;
  allowedIssuers: string[];
  documentsFile?: string;
  circuitsDir?: string;
  stateResolvers: Record<string, RpcChainConfig>;
  proofMaxAgeMs: number;
  clockSkewMs: number;
  stateTransitionDelayMs: number;
  allowPlainMessages: boolean;
  /** Callback answers per client address per minute (429 beyond; 0 = no such limit). */
  responsesPerMinute: number;
  /** Answers a pending execution takes (each costs a proof check); 429 beyond. */
  answersPerExecution: number;
}

function count(env: Record<string, string | undefined>, name: string, dflt: number, min: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return dflt;
  if (!/^[0-9]{1,6}$/.test(raw) || Number(raw) < min) throw new ZkpOptionsError(`${name} must be a whole number, at least ${min}`);
  return Number(raw);
}

function seconds(env: Record<string, string | undefined>, name: string, dflt: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return dflt * 1000;
  if (!/^[0-9]{1,10}$/.test(raw.trim()) || Number(raw) < 1) throw new ZkpOptionsError(`${name} must be a whole number of seconds, at least 1`);
  return Number(raw) * 1000;
}

export function readZkpEnv(env: Record<string, string | undefined> = process.env): ZkpEnvConfig {
  const verifierDid = env.ZKP_VERIFIER_DID?.trim() || undefined;
  if (verifierDid !== undefined && !isCanonicalDid(verifierDid)) {
    throw new ZkpOptionsError('ZKP_VERIFIER_DID must be a DID in canonical form (e.g. did:iden3:polygon:amoy:x...)');
  }
  const circuit = env.ZKP_DEFAULT_CIRCUIT_ID?.trim() || DEFAULT_ZKP_CIRCUIT_ID;
  if (!(ZKP_CIRCUIT_IDS as readonly string[]).includes(circuit)) {
    throw new ZkpOptionsError(`ZKP_DEFAULT_CIRCUIT_ID must be one of ${ZKP_CIRCUIT_IDS.join(', ')}`);
  }
  let contexts: Record<string, string> = {};
  if (env.ZKP_CONTEXTS?.trim()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(env.ZKP_CONTEXTS);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) ||
      !Object.values(parsed).every((v) => typeof v === 'string' && v.length > 0)) {
      throw new ZkpOptionsError('ZKP_CONTEXTS must be a JSON object {"<credential type>": "<JSON-LD context URL>"}');
    }
    contexts = parsed as Record<string, string>;
  }
  const issuers = (env.ZKP_ALLOWED_ISSUERS?.trim() || '*').split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  for (const i of issuers) {
    if (i !== '*' && !isCanonicalIden3Did(i)) throw new ZkpOptionsError(`ZKP_ALLOWED_ISSUERS: ${JSON.stringify(i)} is not * nor an iden3 DID`);
  }
  const plain = (env.ZKP_ALLOW_PLAIN_RESPONSES ?? 'false').trim().toLowerCase();
  if (!['true', 'false', '1', '0', ''].includes(plain)) throw new ZkpOptionsError('ZKP_ALLOW_PLAIN_RESPONSES must be true or false');
  return {
    verifierDid,
    requestTtlMs: seconds(env, 'ZKP_REQUEST_TTL_SECONDS', 600),
    defaultCircuitId: circuit as ZkpCircuitId,
    contexts,
    allowedIssuers: issuers.includes('*') ? ['*'] : issuers,
    documentsFile: env.ZKP_JSONLD_DOCUMENTS_FILE?.trim() || undefined,
    circuitsDir: env.ZKP_CIRCUITS_DIR?.trim() || undefined,
    stateResolvers: parseStateResolversConfig(env.ZKP_STATE_RESOLVERS),
    proofMaxAgeMs: seconds(env, 'ZKP_PROOF_MAX_AGE_SECONDS', 3600),
    clockSkewMs: seconds(env, 'ZKP_CLOCK_SKEW_SECONDS', 300),
    stateTransitionDelayMs: seconds(env, 'ZKP_STATE_TRANSITION_DELAY_SECONDS', 3600),
    allowPlainMessages: plain === 'true' || plain === '1',
    responsesPerMinute: count(env, 'ZKP_RESPONSES_PER_MINUTE', 30, 0),
    answersPerExecution: count(env, 'ZKP_ANSWERS_PER_EXECUTION', 5, 1),
  };
}
