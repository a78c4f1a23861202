/**
 * Trust options from the environment (a proposal for src/config.ts: call it from loadConfig and hand the result to
 * createCredentialVerifier). Every variable is optional:
 *
 * | variable                  | default  | meaning                                                                   |
 * |---------------------------|----------|---------------------------------------------------------------------------|
 * | CREDENTIAL_VERIFICATION   | strict   | `strict` (all checks) or `off` (development only: warn at start)          |
 * | TRUSTED_ISSUERS           | (empty)  | issuer DIDs separated by commas or spaces, or `*` for any; empty = none   |
 * | DID_RESOLVER_URL          | (unset)  | e.g. https://resolver.privado.id/1.0/identifiers                          |
 * | TRUST_HTTP_TIMEOUT_MS     | 3000     | timeout of each status / resolver / document request                      |
 * | REVOCATION_CACHE_MS       | 60000    | how long "not revoked" is reused                                          |
 * | DID_RESOLVER_CACHE_MS     | 3600000  | how long "state published" is reused                                      |
 * | CREDENTIAL_CACHE_SIZE     | 10000    | entries of the verification cache                                         |
 * | REQUIRE_HOLDER_BINDING    | false    | refuse credentials whose subject DID encodes no address                   |
 * | JSONLD_DOCUMENTS_FILE     | (unset)  | JSON file URL -> JSON-LD context / JSON schema, served offline            |
 * | JSONLD_REMOTE_PREFIXES    | (unset)  | URL prefixes of documents that may be fetched once and kept in memory     |
 * | VERIFY_THREADS            | CPUs     | worker threads checking credentials seen for the first time; 0 = inline    |
 * | COLD_QUEUE_MAX            | 256      | credentials waiting for or in their first check, in all (else 503)         |
 * | COLD_QUEUE_PER_TOKEN      | 100      | the same per token or JWT subject (else 429)                               |
 * | TRUST_REFUSAL_CACHE_MS    | 30000    | how long an undecidable proof (issuer state unresolvable) is remembered    |
 * | MAX_CREDENTIAL_BYTES      | 65536    | largest credential verified, bytes of JSON (else 400)                      |
 * | MAX_CREDENTIAL_LEAVES     | 256      | most scalar values outside its proof of a credential verified (else 400)   |
 */
import { readFileSync } from 'node:fs';
import type { TrustOptions } from './types.js';
import { DEFAULTS } from './verifier.js';
import { defaultThreads } from './pool.js';

export class TrustConfigError extends Error {
  override name = 'TrustConfigError';
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new TrustConfigError(`${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(env[name])})`);
  }
  return Number(raw);
}

function list(raw: string | undefined): string[] {
  return (raw ?? '').split(/[\s,]+/).filter((s) => s.length > 0);
}

export function trustOptionsFromEnv(env: Env = process.env): TrustOptions {
  const modeRaw = (env.CREDENTIAL_VERIFICATION ?? '').trim().toLowerCase() || 'strict';
  if (modeRaw !== 'strict' && modeRaw !== 'off') {
    throw new TrustConfigError(`CREDENTIAL_VERIFICATION must be strict or off (got ${JSON.stringify(env.CREDENTIAL_VERIFICATION)})`);
  }
  const issuers = list(env.TRUSTED_ISSUERS);
  for (const d of issuers) {
    if (d !== '*' && !/^did:[a-z0-9]+:\S+$/.test(d)) throw new TrustConfigError(`TRUSTED_ISSUERS: ${JSON.stringify(d)} is not a DID or *`);
  }
  const resolverUrl = env.DID_RESOLVER_URL?.trim() || undefined;
  if (resolverUrl !== undefined && !/^https?:\/\/\S+$/.test(resolverUrl)) {
    throw new TrustConfigError('DID_RESOLVER_URL must be an http(s) URL');
  }
  const prefixes = list(env.JSONLD_REMOTE_PREFIXES);
  for (const p of prefixes) {
    if (!/^https?:\/\/[^/]+\//.test(p)) throw new TrustConfigError(`JSONLD_REMOTE_PREFIXES: ${JSON.stringify(p)} must be an http(s) URL with a path`);
  }
  let documents: Record<string, unknown> | undefined;
  const file = env.JSONLD_DOCUMENTS_FILE?.trim();
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new TrustConfigError(`JSONLD_DOCUMENTS_FILE: cannot read ${file}: ${(e as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new TrustConfigError('JSONLD_DOCUMENTS_FILE must hold one JSON object: URL -> document');
    }
    documents = parsed as Record<string, unknown>;
  }
  const holder = (env.REQUIRE_HOLDER_BINDING ?? '').trim().toLowerCase();
  if (holder !== '' && !/^(1|true|yes|on|0|false|no|off)$/.test(holder)) {
    throw new TrustConfigError('REQUIRE_HOLDER_BINDING must be true or false');
  }
  return {
    mode: modeRaw,
    trustedIssuers: issuers.includes('*') ? '*' : issuers,
    resolverUrl,
    timeoutMs: integer(env, 'TRUST_HTTP_TIMEOUT_MS', DEFAULTS.timeoutMs, 1, 120_000),
    revocationCacheMs: integer(env, 'REVOCATION_CACHE_MS', DEFAULTS.revocationCacheMs, 0, 86_400_000),
    resolverCacheMs: integer(env, 'DID_RESOLVER_CACHE_MS', DEFAULTS.resolverCacheMs, 0, 604_800_000),
    cacheSize: integer(env, 'CREDENTIAL_CACHE_SIZE', DEFAULTS.cacheSize, 0, 10_000_000),
    requireHolderBinding: /^(1|true|yes|on)$/.test(holder),
    documents,
    remoteDocumentPrefixes: prefixes,
    threads: integer(env, 'VERIFY_THREADS', defaultThreads(), 0, 64),
    coldQueue: integer(env, 'COLD_QUEUE_MAX', DEFAULTS.coldQueue, 1, 100_000),
    coldPerTenant: integer(env, 'COLD_QUEUE_PER_TOKEN', DEFAULTS.coldPerTenant, 1, 100_000),
    refusalCacheMs: integer(env, 'TRUST_REFUSAL_CACHE_MS', DEFAULTS.refusalCacheMs, 0, 86_400_000),
    maxCredentialBytes: integer(env, 'MAX_CREDENTIAL_BYTES', DEFAULTS.maxCredentialBytes, 1024, 100 * 1024 * 1024),
    maxCredentialLeaves: integer(env, 'MAX_CREDENTIAL_LEAVES', DEFAULTS.maxCredentialLeaves, 16, 1_000_000),
  };
}
