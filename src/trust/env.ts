import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { ConfigError } from '../config/errors.js';
import { isRecord } from '../schemas/json.js';
import { parseChainRef } from '../chain/config.js';
import { flag, httpUrl, integer, oneOf, text } from '../config/variables.js';
import type { Address } from 'viem';
import { isEvmAddress } from './structure.js';
import type { TrustOptions } from './types.js';
import { defaultThreads } from './pool.js';

export const trustEnv = Type.Object({
  CREDENTIAL_VERIFICATION: oneOf(['strict', 'off'] as const, {
    default: 'strict',
    description: '`strict`: every check below; `off`: credentials believed as sent (development only: a warning at start and ' +
      '`verification: "off"` in every result).',
  }),
  TRUSTED_ISSUERS: Type.Optional(text({
    expect: 'issuer DIDs, or `*`',
    docDefault: 'empty (trusts nobody)',
    description: 'Issuer DIDs, comma or space separated, or `*` for any issuer.',
  })),
  DID_RESOLVER_URL: Type.Optional(text({
    expect: 'an http(s) URL',
    description: 'e.g. `https://resolver.privado.id/1.0/identifiers`: checks issuer states that are not genesis states, and ' +
      '`Iden3ReverseSparseMerkleTreeProof`; without it those answer `error`.',
  })),
  ISSUER_STATE_SOURCE: oneOf(['resolver', 'chain'] as const, {
    default: 'resolver',
    description: 'Where an issuer state\'s publication is checked (BJJ key states that are not genesis states, ' +
      '`Iden3SparseMerkleTreeProof` states): `resolver` asks `DID_RESOLVER_URL`; `chain` reads the iden3 State contract of ' +
      'the issuer\'s network through `CHAIN_RPC_URLS`.',
  }),
  ISSUER_STATE_CONTRACTS: Type.Optional(text({
    expect: 'comma-separated `chain=address` entries',
    docDefault: 'iden3\'s State contracts (Polygon main and Amoy, the unified address elsewhere)',
    description: 'State contract per chain for `ISSUER_STATE_SOURCE=chain`: `eip155:80002=0x…`.',
  })),
  TRUST_HTTP_TIMEOUT_MS: integer(1, 120_000, {
    default: 3000,
    description: 'Timeout of each revocation-status, resolver or document request.',
  }),
  REVOCATION_CACHE_MS: integer(0, 86_400_000, {
    default: 60_000,
    description: 'How long a "not revoked" answer is reused ("revoked" is kept).',
  }),
  DID_RESOLVER_CACHE_MS: integer(0, 604_800_000, {
    default: 3_600_000,
    description: 'How long a "state published" answer is reused.',
  }),
  CREDENTIAL_CACHE_SIZE: integer(0, 10_000_000, {
    default: 10_000,
    description: 'Entries of each verification cache (verified proofs, and refusals apart), keyed by the SHA-256 of a ' +
      'credential\'s canonical JSON.',
  }),
  REQUIRE_HOLDER_BINDING: flag({
    default: false,
    description: 'Refuse credentials whose `credentialSubject.id` encodes no address. Off, such a credential is valid for any ' +
      'address sent with it: JWS attestations then say `holderBound: false`, and EIP-712 attestations of ChallengeQuery ' +
      'scenarios are refused.',
  }),
  JSONLD_DOCUMENTS_FILE: Type.Optional(text({
    expect: 'a JSON file',
    description: 'JSON file `{url: document}` of JSON-LD contexts and JSON schemas served offline, for credential proofs and ' +
      'ZKP rules alike: the contexts of your issuers\' credential types (iden3\'s KYC ones among them). Only the project\'s ' +
      'own and its libraries\' documents ship with the service.',
  })),
  JSONLD_REMOTE_PREFIXES: Type.Optional(text({
    expect: 'http(s) URL prefixes with a path',
    description: 'URL prefixes of contexts that may be fetched once and kept in memory (default: fully offline). Compared as ' +
      'normalised URLs (same scheme, host and port; `..` and `%2e%2e` resolved; encoded slashes and user info refused), ' +
      'and only for a credential whose signing key has been shown to be its issuer\'s.',
  })),
  VERIFY_THREADS: Type.Optional(integer(0, 64, {
    docDefault: 'one per CPU the process may run on',
    description: 'Worker threads that check credentials seen for the first time (0 = on the request thread). With ' +
      '`WORKERS`, each process has its own.',
  })),
  COLD_QUEUE_PER_TOKEN: integer(1, 100_000, {
    default: 100,
    description: 'New credentials one token (or JWT subject) may have waiting for or in their first check; a request that ' +
      'would pass it gets 429 + `Retry-After`; while a token has every slot taken (or was refused while its checks run), ' +
      'its executes are refused so before their body is read. Per instance, and per worker process with `WORKERS` (the ' +
      'checks run where the request is); with `REDIS_URL`, across them all as well.',
  }),
  COLD_QUEUE_MAX: integer(1, 100_000, {
    default: 256,
    description: 'The same for all tokens together; past it, 503 + `Retry-After`. Per instance, and per worker process with `WORKERS`.',
  }),
  TRUST_REFUSAL_CACHE_MS: integer(0, 86_400_000, {
    default: 30_000,
    description: 'How long a proof that could not be decided (issuer state unresolvable) is remembered as a refusal.',
  }),
  MAX_CREDENTIAL_BYTES: integer(1024, 100 * 1024 * 1024, {
    default: 64 * 1024,
    description: 'Largest credential verified, bytes of its JSON; larger gets 400 naming it.',
  }),
  MAX_CREDENTIAL_LEAVES: integer(16, 1_000_000, {
    default: 256,
    description: 'Most values (strings, numbers, booleans, nulls) outside its proof of a credential verified; more gets 400 naming it.',
  }),
});

export type TrustEnv = Static<typeof trustEnv>;

function list(raw: string | undefined): string[] {
  return (raw ?? '').split(/[\s,]+/).filter((s) => s.length > 0);
}

/** A missing or broken file stops the start. */
function documentsFile(file: string | undefined): Record<string, unknown> | undefined {
  if (file === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`JSONLD_DOCUMENTS_FILE: cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!isRecord(parsed)) throw new ConfigError('JSONLD_DOCUMENTS_FILE must hold one JSON object: URL -> document');
  for (const [url, doc] of Object.entries(parsed)) {
    if (typeof doc !== 'object' || doc === null) throw new ConfigError(`JSONLD_DOCUMENTS_FILE: the document of ${url} is not a JSON object`);
  }
  return parsed;
}

/** ISSUER_STATE_CONTRACTS: `eip155:<id>=0x<40 hex>` entries, by CAIP-2 chain. */
function stateContracts(raw: string | undefined): Record<string, Address> {
  const out: Record<string, Address> = {};
  for (const entry of list(raw)) {
    const eq = entry.indexOf('=');
    const ref = parseChainRef(entry.slice(0, Math.max(0, eq)));
    const address = entry.slice(eq + 1);
    if (eq < 0 || ref === undefined || !isEvmAddress(address)) {
      throw new ConfigError(`ISSUER_STATE_CONTRACTS: ${JSON.stringify(entry.slice(0, 80))} must be eip155:<chain id>=0x<40 hex digits>`);
    }
    out[ref.chain] = address;
  }
  return out;
}

export function trustOptions(env: TrustEnv): TrustOptions {
  const issuers = list(env.TRUSTED_ISSUERS);
  for (const d of issuers) {
    if (d !== '*' && !/^did:[a-z0-9]+:\S+$/.test(d)) throw new ConfigError(`TRUSTED_ISSUERS: ${JSON.stringify(d)} is not a DID or *`);
  }
  const resolverUrl = httpUrl('DID_RESOLVER_URL', env.DID_RESOLVER_URL);
  const prefixes = list(env.JSONLD_REMOTE_PREFIXES);
  for (const p of prefixes) {
    if (!/^https?:\/\/[^/]+\//.test(p)) throw new ConfigError(`JSONLD_REMOTE_PREFIXES: ${JSON.stringify(p)} must be an http(s) URL with a path`);
  }
  return {
    mode: env.CREDENTIAL_VERIFICATION,
    trustedIssuers: issuers.includes('*') ? '*' : issuers,
    resolverUrl,
    issuerStates: { source: env.ISSUER_STATE_SOURCE, contracts: stateContracts(env.ISSUER_STATE_CONTRACTS) },
    timeoutMs: env.TRUST_HTTP_TIMEOUT_MS,
    revocationCacheMs: env.REVOCATION_CACHE_MS,
    resolverCacheMs: env.DID_RESOLVER_CACHE_MS,
    cacheSize: env.CREDENTIAL_CACHE_SIZE,
    requireHolderBinding: env.REQUIRE_HOLDER_BINDING,
    documents: documentsFile(env.JSONLD_DOCUMENTS_FILE),
    remoteDocumentPrefixes: prefixes,
    threads: env.VERIFY_THREADS ?? defaultThreads(),
    coldQueue: env.COLD_QUEUE_MAX,
    coldPerTenant: env.COLD_QUEUE_PER_TOKEN,
    refusalCacheMs: env.TRUST_REFUSAL_CACHE_MS,
    maxCredentialBytes: env.MAX_CREDENTIAL_BYTES,
    maxCredentialLeaves: env.MAX_CREDENTIAL_LEAVES,
  };
}
